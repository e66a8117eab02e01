"""A tuning session's space: the allocation, neighbours one knob away, the default start."""

from __future__ import annotations

import os
import re

import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.config import Configuration
from hpcds1mpi.decide import tune_space
from hpcds1mpi.errors import ConfigError

PART = Partition("p", cores_per_node=8, memory_gb=16, max_nodes=4)


def test_neighbours_are_one_knob_away_and_inside_the_space():
    space = tune_space.build_space(PART, max_nodes=2, precisions=["fp64", "fp32"])
    start = Configuration(1, 2, 2)
    near = space.neighbours(start)
    assert near[0] == Configuration(1, 4, 2) and Configuration(2, 2, 2) in near
    assert Configuration(1, 2, 2, "cpu", "fp32") in near
    assert all(c in space for c in near) and start not in near
    assert all(c.nodes <= 2 and c.ranks_per_node * c.threads <= 8 for c in space.configs)
    with pytest.raises(ConfigError):
        tune_space.Space([])


def test_allocation_and_default_start(monkeypatch):
    monkeypatch.setenv("SLURM_JOB_NUM_NODES", "3")
    monkeypatch.setenv("SLURM_CPUS_ON_NODE", "6")
    assert tune_space.allocation(PART, "srun") == (3, 6)
    assert tune_space.allocation(PART, "mpiexec") == (1, 8)
    space = tune_space.build_space(PART, max_nodes=1, cores_per_node=6)
    assert tune_space.default_config(space, 6) == Configuration(1, 6, 1, "cpu", "fp64")


def test_a_program_is_tuned_over_precisions_only_where_its_command_takes_them():
    # Was: fp32 and bf16 runs of a program that never gets a precision, the same computation
    # measured three times under three labels.
    plain = tune_space.workload_space(PART, None, max_nodes=1, program="./app {size}")
    assert {c.precision for c in plain.configs} == {"fp64"}
    takes = tune_space.workload_space(PART, None, max_nodes=1,
                                      program="./app {size} --prec {precision}")
    assert {"fp64", "fp32"} <= {c.precision for c in takes.configs}
    kernel = tune_space.workload_space(PART, "gemm", max_nodes=1)
    assert "fp32" in {c.precision for c in kernel.configs}


def test_a_plain_salloc_is_sized_by_the_cpus_it_holds_not_the_nodes_cores(monkeypatch):
    """Was: `salloc -N 2` (1 CPU per node, SLURM_CPUS_ON_NODE unset in salloc's shell) sized
    from the node's cores: every two-rank trial failed "More processors requested"."""
    monkeypatch.delenv("SLURM_CPUS_ON_NODE", raising=False)
    monkeypatch.setenv("SLURM_JOB_NUM_NODES", "2")
    monkeypatch.setenv("SLURM_JOB_CPUS_PER_NODE", "1(x2)")
    assert tune_space.allocation(PART, "srun") == (2, 1)
    monkeypatch.setenv("SLURM_JOB_CPUS_PER_NODE", "4,2(x3)")
    assert tune_space.allocation(PART, "srun") == (2, 2)  # every node must hold it
    monkeypatch.setenv("SLURM_JOB_CPUS_PER_NODE", "64")
    assert tune_space.allocation(PART, "srun") == (2, 8)  # never more than the node has


@pytest.mark.parametrize("value", ["two", "2(x", "1,,2"])
def test_a_malformed_allocation_cpu_count_is_one_line_not_a_guess(monkeypatch, value):
    """Was: tune_space kept its own parser, which skipped what it could not read ("two" gave
    the node's cores, "2(x" read 2); it now reads the allocation as cluster.detect_slurm does
    and says the same one line."""
    from hpcds1mpi.errors import ClusterFileError

    monkeypatch.setenv("SLURM_JOB_CPUS_PER_NODE", value)
    with pytest.raises(ClusterFileError, match="not a number.*--cluster FILE"):
        tune_space.allocation(PART, "srun")
    assert tune_space.allocation(PART, "mpiexec") == (1, 8)  # not read outside srun


def test_the_space_is_sized_by_the_allocation_and_keeps_the_hardware():
    from dataclasses import replace

    inside = replace(PART, allocated_cores_per_node=2)
    space = tune_space.build_space(inside, max_nodes=1)
    assert max(c.ranks_per_node * c.threads for c in space.configs) == 2
    assert tune_space.allocation(inside, "mpiexec") == (1, 2)


@pytest.mark.parametrize("wanted, words", [
    ({"device": "gpu"}, "p has no GPU; drop --device or use --device cpu"),
    ({"precision": "bf16"}, "fft has no bf16 on cpu; use --precision fp32/fp64"),
    ({"nodes": 4}, "need 4 nodes, the allocation has 1; run tune in a larger allocation"),
    ({"ranks_per_node": 16}, "do not fit the allocation (1 node x 8 cores)"),
])
def test_start_settings_that_do_not_fit_say_which_and_what_to_do(wanted, words, monkeypatch):
    """Was: "do not fit the allocation (1 node(s) x 2 cores)" whatever the reason."""
    from hpcds1mpi import slurm_allocation

    monkeypatch.setenv("SLURM_JOB_ID", "7")  # a live job, as Slurm would say inside one
    monkeypatch.setattr(slurm_allocation, "in_allocation", lambda env=None, say=None: True)
    space = tune_space.workload_space(PART, "fft", max_nodes=1)
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)")):
        tune_space.start_config(space, wanted, nodes=1, cores=8, partition=PART, kernel="fft")
    assert tune_space.start_config(space, {"ranks_per_node": 4}, nodes=1, cores=8,
                                   partition=PART, kernel="fft") == Configuration(1, 4, 1)


def test_mpiexec_in_a_multi_node_allocation_is_not_said_to_have_one_node(monkeypatch):
    """s35 (left): ``tune --launcher mpiexec --nodes 2`` in ``salloc -N 2`` said "the
    allocation has 1"; mpiexec's trials run on this machine, srun's on the allocation."""
    from hpcds1mpi import slurm_allocation

    monkeypatch.setenv("SLURM_JOB_ID", "7")
    monkeypatch.setattr(slurm_allocation, "in_allocation", lambda env=None, say=None: True)
    space = tune_space.workload_space(PART, "fft", max_nodes=1)
    with pytest.raises(ConfigError, match=r"^your settings N2xR8xT1-cpu-fp64 need 2 nodes, "
                       r"mpiexec's trials run on this machine only; pass --launcher srun to "
                       r"tune on the allocation's nodes \(one of 2 nodes or more\)$"):
        tune_space.start_config(space, {"nodes": 2}, nodes=1, cores=8, partition=PART,
                                kernel="fft", launcher="mpiexec")


def test_outside_an_allocation_the_machine_is_named_not_an_allocation(monkeypatch):
    """s29 V1-7: tune --nodes 2 outside Slurm said "the allocation has 1"."""
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    space = tune_space.workload_space(PART, "fft", max_nodes=1)
    with pytest.raises(ConfigError, match=r"need 4 nodes, this machine \(outside any "
                                          r"allocation\) has 1; run tune in a larger"):
        tune_space.start_config(space, {"nodes": 4}, nodes=1, cores=8, partition=PART,
                                kernel="fft")


@pytest.mark.parametrize("variables, scheduler", [
    ({"PBS_JOBID": "9.pbs"}, "PBS"), ({"LSB_JOBID": "123"}, "LSF"),
    ({"JOB_ID": "77", "PE_HOSTFILE": "/tmp/pe"}, "Grid Engine")])
def test_inside_another_schedulers_job_the_machine_is_not_said_outside_any(
        monkeypatch, variables, scheduler):
    """s35 fixer L2: inside a PBS job tune said "this machine (outside any allocation)"."""
    from tests.test_places import _without_jobs

    for name in set(os.environ) - set(_without_jobs()):
        monkeypatch.delenv(name)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    space = tune_space.workload_space(PART, "fft", max_nodes=1)
    with pytest.raises(ConfigError) as refused:
        tune_space.start_config(space, {"nodes": 4}, nodes=1, cores=8, partition=PART,
                                kernel="fft")
    assert str(refused.value) == (
        f"your settings N4xR8xT1-cpu-fp64 need 4 nodes, this machine (the {scheduler} job's "
        "nodes are not read) has 1; tune this machine (drop --nodes), or tune in a Slurm "
        "allocation of 4 nodes")
    with pytest.raises(ConfigError, match=rf"do not fit this machine \(the {scheduler} job's "
                                          r"nodes are not read\) \(1 node x 8 cores\)"):
        tune_space.start_config(space, {"ranks_per_node": 16}, nodes=1, cores=8,
                                partition=PART, kernel="fft")


def test_a_max_nodes_above_the_nodes_reached_is_said_with_the_way_to_more(monkeypatch):
    """s35 fixer L3: --max-nodes is a most; one above the nodes tuned was not said."""
    from tests.test_places import _without_jobs

    for name in set(os.environ) - set(_without_jobs()):
        monkeypatch.delenv(name)
    assert tune_space.nodes_note(None, 1, "mpiexec") == ""
    assert tune_space.nodes_note(2, 2, "srun", 4) == ""
    assert tune_space.nodes_note(8, 1, "mpiexec", 4) == (
        "--max-nodes 8: mpiexec's trials run on this machine only, so 1 node is tuned (srun "
        "inside an allocation of 4 nodes runs on them)")
    assert tune_space.nodes_note(99, 2, "srun", 2) == (
        "--max-nodes 99: this Slurm allocation has 2 nodes, so 2 nodes are tuned")  # all of it
    assert tune_space.nodes_note(3, 1, "in-process", 4) == (
        "--max-nodes 3: the launched ranks are on 1 node, so 1 node is tuned (launch tune on "
        "3 nodes for more)")
    monkeypatch.setenv("PBS_JOBID", "9.pbs")  # tune says it of the job, in its own line
    assert tune_space.nodes_note(2, 1, "mpiexec", 4) == ""


def test_a_program_that_cannot_use_threads_is_tuned_at_one_thread(tmp_path):
    """ABINIT (no OpenMP) was tuned to 1 rank x 2 threads, "34 % better" than 2 x 1 on noise
    alone (s28 tester U 5)."""
    from tests.launch.test_elf_libraries import _linked_app

    app = _linked_app(tmp_path, {"libmpi.so.40": "libmpi.so.40"})
    space = tune_space.workload_space(PART, None, max_nodes=1, program=f"{app} {{size}}")
    assert max(c.threads for c in space.configs) > 1
    kept, line = tune_space.one_thread_only(space, f"{app} {{size}}")
    assert {c.threads for c in kept.configs} == {1} and line.startswith("threads = 1 only: app")
    assert tune_space.one_thread_only(space, f"{app} -t {{threads}}") == (space, "")
    assert tune_space.one_thread_only(space, None) == (space, "")  # a kernel
    # s48: {threads} in a file name gives the program no count, as the sweep's advice says
    kept, line = tune_space.one_thread_only(space, f"{app} {{size}} log-{{threads}}.txt")
    assert {c.threads for c in kept.configs} == {1}
    assert line.endswith("(in log-{threads}.txt it is part of a name)"), line
    with pytest.raises(ConfigError, match=r"your settings N1xR1xT2-cpu-fp64: threads = 1 only: "
                                          r"app links .*; use --threads 1, or put \{threads\}"):
        tune_space.start_config(kept, {"threads": 2, "ranks_per_node": 1}, nodes=1, cores=8,
                                partition=PART, kernel=None, why=line)


def test_a_program_whose_runs_ignored_their_threads_is_tuned_at_one_thread():
    """s41 tester A3: its measured 2 threads are left out of the space, and a start at 2
    threads is refused with the reason, not as "never measured"."""
    from hpcds1mpi.surrogates.levels import MeasuredLevels
    from hpcds1mpi.surrogates.measured_offer import measured_offer

    idle = {"threads": [2], "busy": 0.77, "vs_one_thread": 0.96}
    offer = measured_offer(MeasuredLevels("mpqc", True, ("fp64",), ("cpu",), (1, 2), (1,),
                                          (1,), idle_threads=idle), ["cpu"], 8)
    space = tune_space.workload_space(PART, None, max_nodes=1, offer=offer)
    assert {c.threads for c in space.configs} == {1}
    with pytest.raises(ConfigError, match=r"your settings N1xR1xT2-cpu-fp64: threads = 1 only: "
                                          r"mpqc's runs at 2 threads kept 0.77 .*; use "
                                          r"--threads 1$"):
        tune_space.start_config(space, {"threads": 2, "ranks_per_node": 1}, nodes=1, cores=8,
                                partition=PART, kernel=None, offer=offer)


def test_a_refused_idle_thread_start_gives_the_sweeps_advice_for_its_command():
    """A command that gives the program its threads (``cmsearch --cpu {threads}``) was told
    to "put {threads} in its command" by tune, which sweep stopped saying in session 47 (L7):
    both now say it from the measured command, through one function."""
    from hpcds1mpi.measure.thread_use import idle_threads_line
    from hpcds1mpi.surrogates.levels import MeasuredLevels
    from hpcds1mpi.surrogates.measured_offer import measured_offer

    idle = {"threads": [2], "busy": 0.77, "vs_one_thread": 0.96}
    for command, said in (("cmsearch --cpu {threads} {size}", "sweep larger sizes"),
                          ("mpqc {size}", "put {threads} in its command")):
        levels = MeasuredLevels("app", True, ("fp64",), ("cpu",), (1, 2), (1,), (1,),
                                command=command, idle_threads=idle)
        offer = measured_offer(levels, ["cpu"], 8)
        space = tune_space.workload_space(PART, None, max_nodes=1, offer=offer)
        with pytest.raises(ConfigError) as refused:
            tune_space.start_config(space, {"threads": 2, "ranks_per_node": 1}, nodes=1,
                                    cores=8, partition=PART, kernel=None, offer=offer)
        assert said in str(refused.value)
        assert idle_threads_line("app", idle, command) in str(refused.value)
    assert "put {threads}" not in idle_threads_line("app", idle, "cmsearch --cpu {threads}")


def _measured_at_one_rank_per_node():
    """The offer of MrBayes's model in s35 tester A3: fp64, CPU, 1 thread, 1 rank per node."""
    from hpcds1mpi.surrogates.levels import MeasuredLevels
    from hpcds1mpi.surrogates.measured_offer import measured_offer

    levels = MeasuredLevels("mrbayes", True, ("fp64",), ("cpu",), (1,), (1,), (1,))
    return measured_offer(levels, ["cpu"], 2)


def test_start_settings_the_models_offer_left_out_are_refused_for_that_reason(monkeypatch):
    """s35 tester A3: --ranks-per-node 2 on a 2-core machine, with a model that measured the
    program at 1 rank per node, was refused as "do not fit this machine (1 node x 2 cores);
    use at most 2 ranks x threads per node", which 2 x 1 does."""
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    two = Partition("here", cores_per_node=2, memory_gb=4, max_nodes=1)
    offer = _measured_at_one_rank_per_node()
    space = tune_space.workload_space(two, None, max_nodes=1, cores_per_node=2, offer=offer,
                                      program="mb-mpi run.nex")
    asked = dict(nodes=1, ranks_per_node=2, threads=1)
    with pytest.raises(ConfigError) as refused:
        tune_space.start_config(space, asked, nodes=1, cores=2, partition=two, kernel=None,
                                offer=offer)
    assert str(refused.value) == (
        "your settings N1xR2xT1-cpu-fp64: ranks per node 2 is beyond the measured maximum 1 "
        "of mrbayes in --model (left out above); use --ranks-per-node at most 1, drop --model "
        "to search without it, or sweep mrbayes at --ranks-per-node 2 and `hpcds1mpi learn` "
        "it into the model first")
    for wanted, words in (({"threads": 2, "ranks_per_node": 1}, "threads 2 was never measured"
                           " for mrbayes in --model (measured 1; left out above); use "
                           "--threads 1, drop --model"),
                          ({"precision": "fp32"}, "precision fp32 was never measured for "
                           "mrbayes in --model (measured fp64; left out above); use "
                           "--precision fp64, drop --model")):
        with pytest.raises(ConfigError, match=re.escape(words)):
            tune_space.start_config(space, wanted, nodes=1, cores=2, partition=two,
                                    kernel=None, offer=offer)
    with pytest.raises(ConfigError, match=r"do not fit this machine .*use at most 2 ranks"):
        tune_space.start_config(space, {"ranks_per_node": 4}, nodes=1, cores=2, partition=two,
                                kernel=None, offer=offer)  # beyond the cores: the machine's
    assert tune_space.start_config(space, {"ranks_per_node": 1}, nodes=1, cores=2,
                                   partition=two, kernel=None, offer=offer) == \
        Configuration(1, 1, 1)


def test_a_start_beyond_the_ranks_per_node_the_guard_offers_names_both_limits(monkeypatch):
    """s48 tester Q6: tune takes recommend's offer, whose ranks per node may go beyond the
    measured maximum where the guard finds them familiar. A start inside that extension
    runs; one beyond it is refused naming the measured maximum and the guard's, not as
    "beyond the measured maximum 2" (2 was never measured)."""
    from hpcds1mpi.surrogates.levels import MeasuredLevels
    from hpcds1mpi.surrogates.measured_offer import measured_offer

    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    four = Partition("here", cores_per_node=4, memory_gb=8, max_nodes=1)
    offer = measured_offer(MeasuredLevels("mrbayes", True, ("fp64",), ("cpu",), (1,), (1,),
                                          (1,)), ["cpu"], 4)
    offer.max_ranks_per_node = 2  # as extend_ranks_per_node leaves it: the guard accepts 2
    space = tune_space.workload_space(four, None, max_nodes=1, cores_per_node=4, offer=offer)
    assert {c.ranks_per_node for c in space.configs} == {1, 2}
    assert tune_space.start_config(space, {"ranks_per_node": 2}, nodes=1, cores=4,
                                   partition=four, kernel=None, offer=offer) == \
        Configuration(1, 2, 1)
    with pytest.raises(ConfigError) as refused:
        tune_space.start_config(space, {"ranks_per_node": 3}, nodes=1, cores=4,
                                partition=four, kernel=None, offer=offer)
    assert str(refused.value).startswith(
        "your settings N1xR3xT1-cpu-fp64: ranks per node 3 is beyond the measured maximum 1 "
        "of mrbayes in --model and the 2 the guard finds familiar (left out above); use "
        "--ranks-per-node at most 2, drop --model"), str(refused.value)


def test_tunes_first_line_says_what_the_allowed_count_is_made_of():
    """tune said "6 configurations allowed (1 node(s) x 2)": 1 x 2 is not 6, and the 2 (the
    cores per node) had no unit (s40 tester D14)."""
    six = tune_space.Space([Configuration(1, r, t, "cpu", p) for r, t in ((1, 1), (1, 2), (2, 1))
                 for p in ("fp32", "fp64")])
    assert six.allowed_text(1, 2) == ("6 configurations allowed (1 node x 2 cores: 3 layouts, "
                                      "each in cpu fp64 and cpu fp32)")
    uneven = tune_space.Space([Configuration(1, 1, 1, "cpu", "fp64"), Configuration(1, 1, 1, "gpu", "bf16"),
                    Configuration(2, 1, 1, "cpu", "fp64")])
    assert uneven.allowed_text(2, 1) == ("3 configurations allowed (2 nodes x 1 core: 2 layouts "
                                         "in 2 device and precision pairs)")
