"""--ranks-regex's verdict: one job, not one job, or a regex that matched nothing."""

from __future__ import annotations

import math
import shutil

import pytest

from hpcds1mpi.errors import ConfigError, LaunchError
from hpcds1mpi.measure.rank_count import output_lines
from hpcds1mpi.measure.readings import Readings

#: The tester's coarray program's output at 2 ranks (s32 tester X6).
HEAT_OUT = "images: 2 N: 1000\nsum:  7.95402E+01\nelapsed:     0.001159 s\n"


def test_a_regex_that_matched_nothing_says_so_and_no_verdict_on_the_ranks():
    """Was (s32 tester X6): "launched 2 rank(s) but the program's output matched
    --ranks-regex '...' with nothing: its ranks are not one job", the 2-rank probe having just
    shown they were."""
    readings = Readings.of(ranks_regex=r"num_images: (\d+)", time_regex=r"elapsed: +(\S+) s")
    found = readings.read(HEAT_OUT)
    with pytest.raises(ConfigError) as caught:
        readings.check_ranks(found, 2, "heat 1000 N1xR2xT1", ["mpirun", "-n", "2"])
    assert str(caught.value) == (
        "heat 1000 N1xR2xT1: --ranks-regex 'num_images: (\\d+)' matched nothing in the output; "
        "fix it: the output's lines were 'images: 2 N: 1000', 'sum: 7.95402E+01', "
        "'elapsed: 0.001159 s' (nothing was recorded for it)")
    assert "one job" not in str(caught.value)
    # a smaller count keeps the verdict
    counted = Readings.of(ranks_regex=r"images: (\d+)", time_regex=r"elapsed: +(\S+) s")
    with pytest.raises(LaunchError, match="with 1: its ranks are not one job"):
        counted.check_ranks(counted.read(HEAT_OUT.replace("images: 2", "images: 1")), 2, "x",
                            ["mpirun"])
    counted.check_ranks(counted.read(HEAT_OUT), 2, "x", ["mpirun"])  # the right count


def test_the_lines_shown_are_those_with_a_number_first_and_last():
    many = "".join(f"line {i}\n" for i in range(10)) + "no digits\n"
    assert output_lines(many, "") == "'line 0', 'line 1', 'line 2', ..., 'line 7', " \
                                     "'line 8', 'line 9'"
    assert output_lines("ok\n", "done\n") == "'ok', 'done'"
    assert output_lines("", "") == ""
    assert math.isnan(Readings.of(ranks_regex=r"r: (\d+)").read("x 1\n")["ranks"])


def test_a_real_sweep_with_a_ranks_regex_that_matches_nothing_says_fix_it(tmp_path):
    """The tester's OpenCoarrays program under Debian's Open MPI at 2 ranks."""
    from tests.helpers import coarray_heat, run_cli

    mpirun = coarray_heat(tmp_path)
    done = run_cli(["sweep", "--program", "./heat {size}", "--label", "heat", "--sizes", "1000",
                    "--ranks-per-node", "2", "--time-regex", r"elapsed: +([0-9.eE+-]+) s",
                    "--ranks-regex", r"num_images: (\d+)", "--mpiexec", mpirun,
                    "--out", "x6.h5"], cwd=tmp_path, timeout=120,
                   env={"OMPI_MCA_osc": "ucx", "OMPI_ALLOW_RUN_AS_ROOT": "1",
                        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    assert done.returncode == 2, done.stderr
    assert "matched nothing in the output; fix it: the output's lines were 'images: 2 N: " \
           "1000'" in done.stderr and "one job" not in done.stderr, done.stderr


def test_ranks_that_each_saw_a_world_of_one_name_a_program_built_without_mpi():
    """Was (s43 tester I1): "use the program's own launcher (--mpiexec)" for apbs' two copies
    under /usr/bin/mpirun.openmpi, the launcher of the MPI it links, which it never starts."""
    readings = Readings.of(ranks_regex=r"rank \d+ size (\d+)")
    with pytest.raises(LaunchError) as caught:
        readings.check_ranks(readings.read("rank 0 size 1...\n"), 2, "apbs 33 N1xR2xT1",
                             ["/usr/bin/mpirun.openmpi", "-n", "2"])
    said = str(caught.value)
    assert "program is built without MPI" in said and "--ranks-per-node 1" in said
    assert "launcher is not of the MPI" in said and "\n" not in said


def _one_rank_refusal(ranks_regex: str, time_regex: str, output: str, label: str) -> str:
    """The refusal of a 1-rank launch under Open MPI's mpirun that printed ``output``."""
    readings = Readings.of(ranks_regex=ranks_regex, time_regex=time_regex)
    found = readings.read(output)
    with pytest.raises(ConfigError) as caught:
        readings.check_ranks(found, 1, label, ["/usr/bin/mpirun.openmpi", "-n", "1"])
    return str(caught.value)


def test_another_count_at_one_rank_says_the_regex_reads_another_count():
    """Was (s44 tester M5): ParFORM at 1 rank prints "0 workers" (workers = ranks - 1) and the
    sweep said "its ranks are not one job ... use the program's own launcher", of a 1-rank
    launch under the right launcher."""
    said = _one_rank_refusal(r"(\d+) worker", r"out of ([0-9.]+) sec",
                             "ParFORM 4.3 64-bits 0 workers\n  0.05 sec out of 0.07 sec\n",
                             "parform size 10 N1xR1xT1-cpu-fp64")
    assert said.startswith("parform size 10 N1xR1xT1-cpu-fp64: launched 1 rank but the "
                           "program's output matched --ranks-regex '(\\d+) worker' with 0: one "
                           "rank is always one job, so the regex reads another count"), said
    assert "fix --ranks-regex" in said and "one job (" not in said and "launcher" not in said
    assert "\n" not in said


def test_a_larger_count_at_one_rank_says_the_command_may_start_its_own_job():
    """s46 tester H5: FreeFem++'s ff-mpirun at 1 rank started a 2-rank job of its own; the
    message blamed the regex alone, and leaving it out recorded the 2-rank job as 1 rank."""
    said = _one_rank_refusal(r"procs (\d+)", r"solve time ([0-9.]+) s",
                             "procs 2 integral 0.0142506\nsolve time 0.01 s\n",
                             "ffw5 size 50 N1xR1xT1-cpu-fp64")
    assert ("so either the command starts an MPI job of its own (a launcher inside it, as "
            "FreeFem++'s ff-mpirun runs mpiexec: sweep the program that launcher starts "
            "instead, not the wrapper) or the regex reads another count") in said, said
    assert "\n" not in said


#: The head of a real pw.x 6.7 output at 2 ranks under Debian's Open MPI (captured, s45
#: tester A3): one job prints it once, from its rank 0.
PW_HEAD = """
     Program PWSCF v.6.7MaX starts on  7Dec2026 at  8:18:27

     Parallel version (MPI), running on     2 processors

     MPI processes distributed on     1 nodes
     R & G space division:  proc/nbgrp/npool/nimage =       2
     Reading input from si.in
     PWSCF        :      0.81s CPU      4.69s WALL
"""


def test_another_count_in_one_line_of_several_ranks_says_the_regex_reads_another_number():
    """Was (s45 tester A3): pw.x's "distributed on 1 nodes" at 2 ranks stopped the sweep, exit
    1, blaming the launcher or a build without MPI, just after the probe had joined 2 ranks."""
    readings = Readings.of(ranks_regex=r"distributed on\s+(\d+) nodes",
                           time_regex=r"PWSCF\s*:.*?([0-9.]+)s WALL")
    with pytest.raises(ConfigError) as caught:
        readings.check_ranks(readings.read(PW_HEAD), 2, "qerr size 20 N1xR2xT1-cpu-fp64",
                             ["/usr/bin/mpirun.openmpi", "-n", "2"], (PW_HEAD, ""))
    said = str(caught.value)
    assert said == (
        "qerr size 20 N1xR2xT1-cpu-fp64: launched 2 ranks but the program's output matched "
        "--ranks-regex 'distributed on\\s+(\\d+) nodes' with 1 in one line, 'MPI processes "
        "distributed on 1 nodes', where 2 copies would each print theirs: the regex reads "
        "another number (nodes, threads, workers); fix it to read the ranks (the output's "
        "lines with 2 in them were 'Parallel version (MPI), running on 2 processors', 'R & G "
        "space division: proc/nbgrp/npool/nimage = 2'), or leave it out (nothing was "
        "recorded for it)")
    # copies each print their count: still not one job
    copies = PW_HEAD.replace("running on     2", "running on     1") * 2
    with pytest.raises(LaunchError, match="each rank saw a world of 1"):
        readings.check_ranks(readings.read(copies), 2, "x", ["mpirun"], (copies, ""))


def test_a_real_sweep_whose_ranks_regex_reads_another_number_exits_2(tmp_path):
    """One job of 2 ranks under Open MPI's mpirun whose rank 0 prints pw.x's lines."""
    from tests.helpers import executable_script, run_cli

    if shutil.which("mpirun.openmpi") is None:
        pytest.skip("Open MPI's mpirun.openmpi is missing")
    program = executable_script(tmp_path, "pw.sh", '#!/bin/sh\n[ "$OMPI_COMM_WORLD_RANK" = 0 ] '
                                "|| exit 0\nprintf '%s\\n' '" + PW_HEAD.replace("2 processors",
                                "'$OMPI_COMM_WORLD_SIZE' processors") + "'\n")
    done = run_cli(["sweep", "--command", program, "--label", "qerr", "--sizes", "20",
                    "--ranks-per-node", "2", "--threads", "1", "--no-progress",
                    "--time-regex", r"PWSCF\s*:.*?([0-9.]+)s WALL",
                    "--ranks-regex", r"distributed on\s+(\d+) nodes",
                    "--mpiexec", shutil.which("mpirun.openmpi"), "--out", "a3.h5"],
                   cwd=tmp_path, timeout=120,
                   env={"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    assert done.returncode == 2, done.stderr
    assert "the regex reads another number" in done.stderr and \
        "running on 2 processors" in done.stderr and "launcher" not in \
        done.stderr.splitlines()[-1], done.stderr


#: One 2-rank job's rank 0 (s45 tester F8): its node count in a header and in a summary.
HEADER_AND_SUMMARY = ("Running 2 MPI processes on 1 nodes\nstep 1\n"
                      "Summary: 2 processes, 1 nodes, 0.5 s\n")


def test_a_count_in_several_different_lines_names_the_regex_first():
    """Was (s45 tester F8): two lines with "1 nodes" from one joined 2-rank job were blamed on
    the launcher or a build without MPI, exit 1; the regex read the node count."""
    readings = Readings.of(ranks_regex=r"(\d+) nodes")
    with pytest.raises(ConfigError) as caught:
        readings.check_ranks(readings.read(HEADER_AND_SUMMARY), 2, "rk size 1 N1xR2xT1",
                             ["/usr/bin/mpirun.openmpi", "-n", "2"], (HEADER_AND_SUMMARY, ""))
    said = str(caught.value)
    assert said.startswith(
        "rk size 1 N1xR2xT1: launched 2 ranks but the program's output matched --ranks-regex "
        "'(\\d+) nodes' with 1 in 2 different lines ('Running 2 MPI processes on 1 nodes', "
        "'Summary: 2 processes, 1 nodes, 0.5 s'), none repeated as 2 copies would repeat "
        "theirs: most likely the regex reads another number"), said
    assert said.index("fix it to read the ranks") < said.index("launcher is not of the MPI")
    assert "program is built without MPI" in said and "\n" not in said
    # copies repeat each of their lines: still not one job
    copies = HEADER_AND_SUMMARY.replace("2 ", "1 ") * 2
    with pytest.raises(LaunchError, match="each rank saw a world of 1"):
        readings.check_ranks(readings.read(copies), 2, "x", ["mpirun"], (copies, ""))


def test_copies_on_two_nodes_whose_count_lines_name_their_host_are_not_one_job():
    """Was (s46 review RV10): "Hello from rank 0 of 1 on nodeA" and "... on nodeB", none
    repeated, were "most likely the regex reads another number"; a world of 1 in lines a word
    apart is the copies' sign, said as for the same lines on one host."""
    readings = Readings.of(ranks_regex=r"of (\d+) on")
    out = ("Hello from rank 0 of 1 on nodeA\nHello from rank 0 of 1 on nodeB\n"
           "result 1.0\nresult 1.0\n")
    with pytest.raises(LaunchError) as caught:
        readings.check_ranks(readings.read(out), 2, "app size 8 N2xR1", ["mpiexec", "-n", "2"],
                             (out, ""))
    said = str(caught.value)
    assert "its ranks are not one job" in said and "each rank saw a world of 1" in said
    assert "the regex reads" not in said and "\n" not in said
    # one job's header and summary a word apart but counting nodes (2 of them): the regex
    nodes, out = Readings.of(ranks_regex=r"on (\d+) nodes"), "Started on 2 nodes\nDone on 2 nodes\n"
    with pytest.raises(ConfigError, match="most likely the regex reads another number"):
        nodes.check_ranks(nodes.read(out), 4, "x", ["mpirun"], (out, ""))


def test_copies_whose_count_lines_differ_in_their_timings_are_not_one_job():
    """s45 CI: two lone copies of LAMMPS each print "Loop time of T on 1 procs ..." with their
    own T; read as two different lines, the right regex had been blamed (exit 2)."""
    readings = Readings.of(ranks_regex=r"on (\d+) procs")
    copies = ("Loop time of 0.412 on 1 procs for 100 steps with 32000 atoms\n"
              "Loop time of 0.397 on 1 procs for 100 steps with 32000 atoms\n")
    with pytest.raises(LaunchError, match="not one job .* each rank saw a world of 1"):
        readings.check_ranks(readings.read(copies), 2, "x", ["mpirun"], (copies, ""))


def test_copies_whose_other_line_lies_before_the_tail_are_not_one_job():
    """Was (s45 review RV5): the count came from the whole stdout, the one-line evidence from
    its last 64 KiB, which held one copy's "ranks: 1": a right regex was blamed (exit 2)."""
    import tempfile

    from hpcds1mpi.measure.program_launch import stream_tail

    readings = Readings.of(ranks_regex=r"ranks: (\d+)", time_regex=r"time: ([0-9.]+) s")
    filler = ("step data " * 7 + "\n")
    out = ("ranks: 1\n" + filler * 1000 + "ranks: 1\n" + filler * 100 +
           "time: 1.0 s\ntime: 1.0 s\n")
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        stdout.write(out.encode())
        found = readings.scan([stdout, stderr])
        tails = (stream_tail(stdout), stream_tail(stderr))
    assert found["ranks"] == 1 and tails[0].count("ranks:") == 1
    for outputs in ((out, ""), tails):
        with pytest.raises(LaunchError, match="not one job .* each rank saw a world of 1"):
            readings.check_ranks(found, 2, "rk size 1 N1xR2xT1", ["mpirun", "-n", "2"],
                                 outputs)


def test_a_header_and_summary_a_verb_apart_with_a_count_of_one_name_the_regex_first():
    """Was (s46 review RW5): "Job started on 1 node" / "Job finished on 1 node", one job's lines
    a word apart, were taken for copies on two hosts and the launcher blamed alone."""
    readings = Readings.of(ranks_regex=r"on (\d+) nodes?")
    out = ("Job started on 1 node with 2 MPI ranks\nstep 1\n"
           "Job finished on 1 node with 2 MPI ranks\n")
    with pytest.raises(ConfigError, match="most likely the regex reads another number"):
        readings.check_ranks(readings.read(out), 2, "app", ["mpirun", "-n", "2"], (out, ""))
