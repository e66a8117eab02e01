"""Rewriting a PBS request to N hosts of one chunk each (s28 tester V: V2, V3, V4): one chunk
spec, ``place=scatter`` with the sharing kept, and no job-wide chunk resource beside the
``select`` (qsub refuses it)."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch.pbs_rewrite import pbs_notes
from hpcds1mpi.launch.script_reading import read_script
from hpcds1mpi.launch.script_rewrite import Layout, rewrite
from tests.launch.test_pbs_request import MULTICHUNK, OLDSTYLE, PACK


def test_a_packed_request_is_scattered_over_the_new_hosts():
    """place=pack was kept: 4 chunks of 2 CPUs on one 2-core host, a job that never starts."""
    script = read_script(PACK)
    out, changes = rewrite(script, Layout(4, 2, 1))
    assert "#PBS -l select=4:ncpus=2:mpiprocs=2:ompthreads=1\n#PBS -l place=scatter\n" in out
    assert read_script(out).layout(2) == (4, 2, 1)
    assert [n for n in pbs_notes(script, Layout(4, 2, 1)) if "place=pack" in n] == [
        "line 3: place=pack would put several chunks on one host; --rewrite asks "
        "place=scatter, one chunk per host"]
    shared = rewrite(read_script(PACK.replace("place=pack", "place=pack:excl:group=rack")),
                     Layout(2, 1, 1))[0]
    assert "#PBS -l place=scatter:excl:group=rack\n" in shared  # the sharing part is kept
    assert "place=pack" in rewrite(script, Layout(1, 2, 1))[0]  # one host: pack is right


def test_more_than_one_host_without_a_place_gets_scatter():
    text = "#!/bin/bash\n#PBS -l select=1:ncpus=2,walltime=00:10:00\nmpiexec ./app\n"
    out, _ = rewrite(read_script(text), Layout(3, 2, 1))
    assert out == ("#!/bin/bash\n#PBS -l select=3:ncpus=2:mpiprocs=2:ompthreads=1,"
                   "walltime=00:10:00\n#PBS -l place=scatter\nmpiexec ./app\n")
    assert "place" not in rewrite(read_script(text), Layout(1, 2, 1))[0]
    excl = text.replace(",walltime", ",place=excl,walltime")  # sharing only: free arranged
    assert "place=scatter:excl," in rewrite(read_script(excl), Layout(2, 2, 1))[0]


def test_several_chunk_specs_become_one():
    """The extra spec was kept: 5 hosts on a 4-node partition, one slot idle."""
    script = read_script(MULTICHUNK)
    out, changes = rewrite(script, Layout(4, 2, 1))
    assert "#PBS -l select=4:ncpus=2:mpiprocs=2:ompthreads=1\n" in out and "+" not in out
    assert "#PBS -l place=scatter:excl\n" in out
    assert read_script(out).layout(2) == (4, 2, 1)
    assert pbs_notes(script, Layout(4, 2, 1)) == [
        "line 3: --rewrite writes one chunk spec for the recommended 4 hosts with 2 ranks "
        "each; the other chunk spec (+1:ncpus=1:mpiprocs=1) is dropped"]


def test_job_wide_chunk_resources_go_into_the_select():
    """-l ncpus=4 was kept beside the added select, which qsub refuses ("-lresource= cannot
    be used with select or place, resource is: ncpus")."""
    script = read_script(OLDSTYLE)
    out, changes = rewrite(script, Layout(4, 2, 1))
    assert "ncpus=4" not in out and out.count("#PBS -l select=") == 1
    assert "#PBS -l select=4:ncpus=2:mpiprocs=2:ompthreads=1\n#PBS -l place=scatter\n" in out
    assert [c.line for c in changes if not c.new] == [2]  # the line goes
    again = read_script(out)
    assert again.layout(2) == (4, 2, 1) and again.time_s == 600
    mixed = read_script(OLDSTYLE.replace("-l ncpus=4", "-l ncpus=4,mem=8gb,walltime=00:20:00")
                        .replace("#PBS -l walltime=00:10:00\n", ""))
    out, _ = rewrite(mixed, Layout(2, 2, 1, 0, 600))
    assert "#PBS -l walltime=00:10:00\n" in out and "ncpus=4" not in out
    assert "#PBS -l select=2:ncpus=2:mpiprocs=2:ompthreads=1:mem=8gb\n" in out
    note, = pbs_notes(mixed, Layout(2, 2, 1))
    assert note.startswith("line 2: qsub refuses job-wide -l ncpus=4, -l mem=8gb beside a "
                           "select") and note.endswith("mem was the job's total and is now "
                                                        "asked per host: check it")
    beside = read_script("#PBS -l select=1:ncpus=2\n#PBS -l mem=4gb\nmpiexec ./app\n")
    out, _ = rewrite(beside, Layout(1, 2, 1))
    assert out == "#PBS -l select=1:ncpus=2:mpiprocs=2:ompthreads=1:mem=4gb\nmpiexec ./app\n"


def test_a_select_without_a_count_gets_one():
    """``select=ncpus=2`` got ``:count=4`` appended, which PBS does not know."""
    out, _ = rewrite(read_script("#PBS -l select=ncpus=2:mpiprocs=2\nmpiexec ./app\n"),
                     Layout(4, 2, 1))
    assert out.startswith("#PBS -l select=4:ncpus=2:mpiprocs=2:ompthreads=1\n")
    assert "count" not in out and read_script(out).layout(2) == (4, 2, 1)


def test_torque_nodes_keep_their_form():
    text = "#PBS -l nodes=2:ppn=2,mem=4gb\nmpirun ./a\n"
    out, _ = rewrite(read_script(text), Layout(4, 1, 2))
    assert out.startswith("#PBS -l nodes=4:ppn=1,mem=4gb\n") and "place" not in out
    assert pbs_notes(read_script(text), Layout(4, 1, 2)) == []


def test_a_dropped_chunk_specs_memory_is_said_with_it():
    """s28 tester Z: `select=1:ncpus=2:mpiprocs=2+1:ncpus=2:mpiprocs=2:mem=1gb` lost its
    mem=1gb with the second spec, and the note did not say so."""
    script = read_script("#!/bin/bash\n#PBS -l select=1:ncpus=2:mpiprocs=2+1:ncpus=2:"
                         "mpiprocs=2:mem=1gb\nmpiexec -n 4 ./app 5\n")
    note = pbs_notes(script, Layout(2, 2, 1))[0]
    assert note.endswith("is dropped, and with them their mem=1gb: add it to the select if "
                         "the job needs it")
    same = read_script("#PBS -l select=1:ncpus=2:mem=1gb+1:ncpus=2:mem=1gb\nmpiexec ./app\n")
    assert pbs_notes(same, Layout(2, 2, 1))[0].endswith("is dropped")  # the kept spec asks it


@pytest.mark.parametrize("request_line, kept", [
    ("#PBS -l ncpus=4,mem=8gb\n", ""),
    ("#PBS -l mpiprocs=4,ncpus=4\n", ""),
    ("#PBS -lncpus=4,mem=8gb -N early\n", "#PBS -N early\n"),
    ("#PBS -l ncpus=4 -l mem=8gb\n", ""),
    ("#PBS -l walltime=00:20:00,ncpus=4,mem=8gb\n", "#PBS -l walltime=00:20:00\n"),
    ("#PBS -l ncpus=4,mem=8gb,walltime=00:20:00,place=excl\n",
     "#PBS -l walltime=00:20:00,place=excl\n"),
    ("#PBS -l ncpus=4,walltime=00:20:00,mem=8gb -N early\n",
     "#PBS -l walltime=00:20:00 -N early\n"),
])
def test_job_wide_resources_of_one_l_go_without_touching_the_next_line(request_line, kept):
    """(s28 reviewer R1) Every resource of one -l going: the first was cut with the comma
    after it, the second with the comma before, and the overlapping cuts ate the next
    directive: ``#PBS -l #PBS -N job``."""
    text = request_line + "#PBS -N job\nmpiexec ./app\n"
    out, _ = rewrite(read_script(text), Layout(1, 4, 1))
    assert out.startswith(kept + "#PBS -N job\n#PBS -l select=1:ncpus=4:mpiprocs=4:")
    assert "ncpus=4," not in out and ",ncpus" not in out and "mem=8gb," not in out
    assert read_script(out).layout(4) == (1, 4, 1)


@pytest.mark.parametrize("chunk, kept", [
    ("select=1:ncpus=2:mpiprocs=2:ngpus=1", "select=4:ncpus=2:mpiprocs=2:ompthreads=1"),
    ("select=1:ncpus=2:ngpus=1:mpiprocs=2:mem=2gb",
     "select=4:ncpus=2:mpiprocs=2:mem=2gb:ompthreads=1")])
def test_a_cpu_layout_drops_the_gpu_term_of_the_chunk(chunk, kept):
    """s33 tester P5 (k_gpu): a CPU program's GPU request was rewritten to ngpus=0, where the
    README says --rewrite removes it; a layout with GPUs still sets the count."""
    text = f"#!/bin/bash\n#PBS -l {chunk}\n#PBS -l walltime=00:15:00\nmpiexec -n 2 ./app\n"
    out, _ = rewrite(read_script(text), Layout(4, 2, 1))
    assert f"#PBS -l {kept}\n" in out and "ngpus" not in out
    assert read_script(out).gpus_per_node == 0
    assert ":ngpus=2" in rewrite(read_script(text), Layout(1, 2, 1, gpus_per_node=2))[0]
