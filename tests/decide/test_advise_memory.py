"""``advise`` compares the memory a script asks per node with the predicted need (s40 tester
D12: a ``--mem=100M`` script of a job needing hundreds of MiB was called the recommended
layout, and ``--rewrite`` kept the 100M where recommend's own script asks far more)."""

from __future__ import annotations

import math

import pytest

from hpcds1mpi.decide.advise import advise
from hpcds1mpi.decide.model_bundle import DEFAULT_MODEL
from hpcds1mpi.launch.directives import memory_request_mib
from tests.decide.test_advise import bundle, places, user_files  # noqa: F401 (its fixtures)

SCRIPT = """#!/bin/bash
#SBATCH --partition=standard
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=2
{mem}#SBATCH --time=00:30:00
export OMP_NUM_THREADS=2
srun hpcds1mpi run stencil --size 128 --precision fp64
"""


def test_a_script_asking_less_memory_than_the_need_is_warned_and_rewritten(bundle, places):
    a = advise(SCRIPT.format(mem="#SBATCH --mem=1M\n"), bundle, places, model_dir=DEFAULT_MODEL)
    assert "#SBATCH --mem=1M\n" not in a.rewritten  # was kept
    assert [w for w in a.warnings if "--mem=1M" in w], a.warnings  # was: nothing said
    need = a.asked.mem_need_mib
    assert math.isfinite(need) and need > 1, a.asked  # in the answer (and its JSON) too
    assert "mem_need_mib" in a.to_dict()["asked"]
    said = [w for w in a.warnings if "--mem=1M (line 6) = 1 MiB per node, below the predicted "
            f"need of {need:.0f} MiB per node" in w]
    part = next(p for _, p in places if p.name == "standard")
    request = memory_request_mib(need, part.memory_gb)
    assert said and f"ask --mem={request}M" in said[0], a.warnings
    new = memory_request_mib(a.recommended.mem_need_mib, part.memory_gb)
    assert "#SBATCH --mem=1M\n" not in a.rewritten and f"#SBATCH --mem={new}M\n" in a.rewritten
    assert any(c.line == 6 for c in a.changes), a.changes


# 20G, not 200G: the nodes hold 25.3 GB, and an ask above that is lowered (s41)
@pytest.mark.parametrize("mem", ["#SBATCH --mem=20G\n", "#SBATCH --mem=0\n", ""])
def test_a_script_asking_enough_the_whole_node_or_nothing_keeps_its_memory(bundle, places, mem):
    a = advise(SCRIPT.format(mem=mem), bundle, places, model_dir=DEFAULT_MODEL)
    assert not [w for w in a.warnings if "predicted need" in w], a.warnings
    assert mem in a.rewritten and "--mem" not in "".join(str(c) for c in a.changes)


def test_a_per_cpu_ask_is_counted_per_node():
    from hpcds1mpi.decide.advise_memory import asked_memory_mib
    from hpcds1mpi.launch.script_reading import read_script

    script = read_script(SCRIPT.format(mem="#SBATCH --mem-per-cpu=1G\n"))
    assert asked_memory_mib(script, 1) == (2048.0, "--mem-per-cpu=1G (line 6) x 2 CPUs per node")


PER_TASK = """#!/bin/bash
#SBATCH --partition=standard
#SBATCH --nodes=1
#SBATCH --ntasks=2
#SBATCH --mem-per-cpu={mib}M
#SBATCH --time=00:30:00
srun hpcds1mpi run stencil --size 128 --precision fp64
"""


def test_a_per_cpu_ask_counts_the_ranks_per_node_of_ntasks(bundle, places):
    """``--nodes=1 --ntasks=2`` gives a node 2 CPUs, so ``--mem-per-cpu`` counts twice (s40
    review: it was read as 1 CPU per node, and a script asking enough was warned)."""
    from hpcds1mpi.decide.advise_memory import asked_memory_mib
    from hpcds1mpi.launch.script_reading import read_script

    assert asked_memory_mib(read_script(PER_TASK.format(mib=30)), 2) == (
        60.0, "--mem-per-cpu=30M (line 5) x 2 CPUs per node")
    need = advise(PER_TASK.format(mib=30), bundle, places,
                  model_dir=DEFAULT_MODEL).asked.mem_need_mib
    assert math.isfinite(need) and need > 1
    half = math.ceil(need / 2)  # 2 x half is enough; 1 x half (the old reading) is not
    a = advise(PER_TASK.format(mib=half), bundle, places, model_dir=DEFAULT_MODEL)
    assert (a.asked.config.nodes, a.asked.config.ranks_per_node) == (1, 2), a.asked
    assert not [w for w in a.warnings if "predicted need" in w], a.warnings
    short = advise(PER_TASK.format(mib=math.floor(need / 2) - 1), bundle, places,
                   model_dir=DEFAULT_MODEL)
    assert [w for w in short.warnings if "x 2 CPUs per node" in w], short.warnings


def test_a_per_cpu_ask_counts_the_cpus_slurm_gives_not_the_ranks_launched():
    """The last review of s40: ``--ntasks-per-node=4 --mem-per-cpu=15M`` with ``mpiexec -n 2``
    was read as 2 x 15 = 30 MiB and warned, where Slurm gives the node 4 x 15 = 60 MiB."""
    from hpcds1mpi.decide.advise_memory import asked_memory_mib
    from hpcds1mpi.launch.script_reading import read_script

    script = read_script(PER_TASK.replace("--ntasks=2", "--ntasks-per-node=4").replace(
        "srun hpcds1mpi", "mpiexec -n 2 hpcds1mpi").format(mib=15))
    assert asked_memory_mib(script, 2) == (60.0, "--mem-per-cpu=15M (line 5) x 4 CPUs per node")
    bare = read_script(PER_TASK.replace("#SBATCH --ntasks=2\n", "").format(mib=15))
    assert asked_memory_mib(bare, 3)[0] == 45.0  # no task count asked: the ranks launched


PBS = """#!/bin/bash
#PBS -q standard
#PBS -l select=1:ncpus=2:mpiprocs=1:ompthreads=2{chunk}
{extra}#PBS -l walltime=00:30:00
export OMP_NUM_THREADS=2
mpiexec -n 1 hpcds1mpi run stencil --size 128 --precision fp64
"""


@pytest.mark.parametrize("chunk, extra, asked, fix", [
    (":mem=1mb", "", "select ...:mem=1mb (line 3)", "select ...:mem={r}mb"),
    ("", "#PBS -l vmem=1048576\n", "-l vmem=1048576 (line 4)", "-l vmem={r}mb"),
    ("", "#PBS -l pmem=1kb\n", "-l pmem=1kb (line 4) x 1 rank per host", "-l pmem={r}mb")])
def test_a_pbs_limit_below_the_need_is_warned_and_raised_in_pbs_terms(bundle, places, chunk,
                                                                       extra, asked, fix):
    """s41: PBS's mem / vmem / pmem were never read; the job was called the recommended
    layout and --rewrite kept the limit that kills it."""
    a = advise(PBS.format(chunk=chunk, extra=extra), bundle, places, model_dir=DEFAULT_MODEL)
    need = a.asked.mem_need_mib
    assert math.isfinite(need) and need > 1, a.asked
    part = next(p for _, p in places if p.name == "standard")
    request = memory_request_mib(need, part.memory_gb)
    said = [w for w in a.warnings if w.startswith(f"the script asks {asked} = ")]
    assert said and f"ask {fix.format(r=request)} (the need" in said[0], a.warnings
    new = memory_request_mib(a.recommended.mem_need_mib, part.memory_gb)
    per = a.recommended.config.ranks_per_node if "pmem" in extra else 1
    assert f"{'pmem' if 'pmem' in extra else 'mem'}={-(-new // per)}mb" in a.rewritten, \
        a.rewritten


def test_a_pbs_script_asking_enough_or_nothing_keeps_its_memory(bundle, places):
    for chunk in (":mem=200gb", ""):
        a = advise(PBS.format(chunk=chunk, extra=""), bundle, places, model_dir=DEFAULT_MODEL)
        assert not [w for w in a.warnings if "predicted need" in w], a.warnings
        assert ("mem=200gb" in a.rewritten) == bool(chunk)
        assert "mem=" not in a.rewritten.replace("mem=200gb", "")  # none added or raised


def test_a_per_cpu_ask_below_the_need_is_raised_per_cpu_and_passes_advise_again(bundle,
                                                                                places):
    """s41 tester B8: the warning said to ask a --mem (which sbatch refuses beside a
    --mem-per-cpu), and --rewrite kept the --mem-per-cpu it had just warned kills the job, so
    advise then warned of its own rewritten script."""
    a = advise(SCRIPT.format(mem="#SBATCH --mem-per-cpu=1M\n"), bundle, places,
               model_dir=DEFAULT_MODEL)
    part = next(p for _, p in places if p.name == "standard")
    request = memory_request_mib(a.asked.mem_need_mib, part.memory_gb)
    said = [w for w in a.warnings if "--mem-per-cpu=1M (line 6) x 2 CPUs per node" in w]
    assert said and f"ask --mem-per-cpu={-(-request // 2)}M (the need" in said[0], a.warnings
    new = memory_request_mib(a.recommended.mem_need_mib, part.memory_gb)
    cfg = a.recommended.config
    assert f"#SBATCH --mem-per-cpu={-(-new // (cfg.ranks_per_node * cfg.threads))}M\n" in \
        a.rewritten, a.rewritten
    again = advise(a.rewritten, bundle, places, model_dir=DEFAULT_MODEL)
    assert not [w for w in again.warnings if "predicted need" in w], again.warnings


def test_a_script_asking_more_memory_than_a_node_has_is_warned(bundle, places):
    """s41 tester B9: --mem=1T on a partition of 4 GB nodes was not said; sbatch refuses the
    job ("Requested node configuration is not available")."""
    part = next(p for _, p in places if p.name == "standard")
    node = int(part.memory_gb * 1000)
    a = advise(SCRIPT.format(mem=f"#SBATCH --mem={node + 1}M\n"), bundle, places,
               model_dir=DEFAULT_MODEL)
    assert f"the script asks --mem={node + 1}M (line 6) = {node + 1} MiB per node, above the " \
           f"{node} MiB a node of partition 'standard' has: sbatch refuses the job " \
           f"(\"Requested node configuration is not available\"); ask at most --mem={node}M" \
           ", or use a partition with more memory" in a.warnings, a.warnings
    fits = advise(SCRIPT.format(mem=f"#SBATCH --mem={node}M\n"), bundle, places,
                  model_dir=DEFAULT_MODEL)
    assert not [w for w in fits.warnings if "sbatch refuses the job" in w], fits.warnings


@pytest.mark.parametrize("ask, cpus", [("mem", 1), ("mem-per-cpu", None)])
def test_a_memory_ask_above_the_node_is_lowered_to_what_a_node_holds(bundle, places, ask,
                                                                       cpus):
    """s41: --rewrite kept a --mem above the node's memory that advise had just warned sbatch
    refuses; the job is lowered to the most a node of the picked partition holds."""
    a = advise(SCRIPT.format(mem=f"#SBATCH --{ask}=1T\n"), bundle, places,
               model_dir=DEFAULT_MODEL)
    assert a.rewrite_refused is None or not a.rewrite_refused, a.rewrite_refused
    cfg = a.recommended.config
    picked = next(p for _, p in places
                  if p.name == a.recommended.partition.split("/")[-1])
    node = int(picked.memory_gb * 1000)
    assert a.recommended.mem_need_mib <= node
    cpus = cpus or cfg.ranks_per_node * cfg.threads
    assert f"#SBATCH --{ask}=1T\n" not in a.rewritten, a.rewritten
    assert f"#SBATCH --{ask}={node // cpus}M\n" in a.rewritten, a.rewritten
    again = advise(a.rewritten, bundle, places, model_dir=DEFAULT_MODEL)
    assert not [w for w in again.warnings if "sbatch refuses the job" in w], again.warnings


def test_a_rewrite_whose_job_needs_more_than_a_node_is_refused_in_one_line():
    from types import SimpleNamespace

    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.decide.advise_memory import memory_refusal
    from hpcds1mpi.launch.script_reading import read_script

    script = read_script(SCRIPT.format(mem="#SBATCH --mem=1T\n"))
    part = Partition("small", cores_per_node=4, memory_gb=2.0)
    side = SimpleNamespace(mem_need_mib=3000.0, text=lambda: "1 node x 1 rank x 2 threads")
    assert memory_refusal(script, side, part) == (
        "--rewrite refused: the job does not fit: 1 node x 1 rank x 2 threads is predicted to "
        "need 3000 MiB per node, more than the 2000 MiB a node of partition 'small' holds, so "
        "no memory the script asks (--mem=1T (line 6)) can be met; use more nodes or a "
        "partition with more memory")
    assert memory_refusal(script, SimpleNamespace(mem_need_mib=1000.0, text=str), part) == ""
