"""The memory a PBS request asks per host (s41: advise read Slurm's ``--mem`` only, so a
``select=...:mem=1mb`` job was called the recommended layout and ``--rewrite`` kept the 1mb)."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch.pbs_memory import memory_asks, rewritten_asks, size_mib, unreadable_sizes
from hpcds1mpi.launch.script_reading import read_script
from hpcds1mpi.launch.script_rewrite import Layout, rewrite


@pytest.mark.parametrize("value, mib", [
    ("4gb", 4096), ("4GB", 4096), ("4g", 4096), ("800mb", 800), ("1048576", 1),
    ("1048576b", 1), ("1024kb", 1), ("1tb", 1024 ** 2), ("1mw", 8), ("1pb", 1024 ** 3),
    ("1.5gb", None), ("4gib", None), ("lots", None), ("", None), ("-1gb", None)])
def test_sizes_are_read_as_pbs_reads_them(value, mib):
    assert size_mib(value) == mib


def _script(lines: str, launch: str = "mpiexec ./app"):
    return read_script(f"#!/bin/bash\n{lines}#PBS -l walltime=00:10:00\n{launch}\n")


def test_a_chunk_a_job_wide_and_a_per_process_limit_are_each_read_per_host():
    asks = memory_asks(_script("#PBS -l select=2:ncpus=4:mpiprocs=4:mem=2gb\n"
                               "#PBS -l vmem=8gb,pmem=100mb\n#PBS -l place=scatter\n"), 4)
    assert [(a.resource, a.mib, a.how) for a in asks] == [
        ("mem", 2048, "select ...:mem=2gb (line 2)"),
        ("vmem", 4096, "-l vmem=8gb (line 3) over 2 hosts"),
        ("pmem", 400, "-l pmem=100mb (line 3) x 4 ranks per host")]
    assert [a.raised(1000) for a in asks] == ["1000mb", "2000mb", "250mb"]


def test_chunks_together_on_one_host_and_the_smallest_chunk_elsewhere():
    packed = "#PBS -l select=2:ncpus=1:mem=1gb+1:ncpus=1:mem=512mb\n#PBS -l place={}\n"
    assert [a.mib for a in memory_asks(_script(packed.format("pack")), 1)] == [2560]
    assert [a.mib for a in memory_asks(_script(packed.format("scatter")), 1)] == [512]
    partly = "#PBS -l select=1:ncpus=1:mem=1gb+1:ncpus=1\n#PBS -l place=pack\n"
    assert memory_asks(_script(partly), 1) == []  # the other chunk's is the queue's default


def test_a_slurm_script_or_one_without_memory_has_no_pbs_asks():
    assert memory_asks(read_script("#!/bin/bash\n#SBATCH --mem=1M\nsrun ./app\n"), 1) == []
    assert memory_asks(_script("#PBS -l select=1:ncpus=2\n"), 1) == []


def test_a_value_that_is_no_size_is_said_with_the_units_qsub_takes():
    asks = memory_asks(_script("#PBS -l select=1:ncpus=2:mem=4.5gb\n"), 1)
    assert unreadable_sizes(asks) == [
        "the script asks select ...:mem=4.5gb (line 2), which is no PBS size and qsub refuses: "
        "write a whole number with b, kb, mb, gb or tb (1kb = 1024 bytes; no unit is bytes)"]


def test_the_rewrite_raises_each_short_limit_in_its_own_terms():
    script = _script("#PBS -l select=1:ncpus=2:mpiprocs=2:mem=100mb\n#PBS -l pmem=10mb\n"
                     "#PBS -l vmem=64gb\n")
    out, changes = rewrite(script, Layout(1, 4, 1, memory_mib=1500))
    # vmem is enough: kept (moved into the chunk, as qsub wants it beside a select)
    assert "#PBS -l select=1:ncpus=4:mpiprocs=4:mem=1500mb:ompthreads=1:vmem=64gb\n" in out
    assert "#PBS -l pmem=375mb\n" in out
    assert {c.line for c in changes} == {2, 3, 4}
    unraised, _ = rewrite(script, Layout(1, 4, 1))
    assert "mem=100mb" in unraised and "pmem=10mb" in unraised  # no memory_mib: kept


def test_a_job_wide_mem_moves_into_the_chunk_raised_and_torque_keeps_its_total():
    old_style = rewrite(_script("#PBS -l ncpus=2,mem=1mb\n"), Layout(2, 1, 2, memory_mib=900))[0]
    assert "#PBS -l select=2:ncpus=2:mpiprocs=1:ompthreads=2:mem=900mb\n" in old_style
    assert "mem=1mb" not in old_style
    torque = _script("#PBS -l nodes=1:ppn=2,mem=100mb\n")
    assert [(a.mib, a.share) for a in rewritten_asks(torque, 2, 1)] == [(50, 2)]
    out = rewrite(torque, Layout(2, 1, 2, memory_mib=900))[0]
    assert "#PBS -l nodes=2:ppn=1,mem=1800mb\n" in out  # the job's total, 900 a host
