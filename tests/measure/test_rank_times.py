"""``measure/rank_times``: a time matched once per rank of one job is its slowest rank's (s48
testers O6, Q8)."""

from __future__ import annotations

import pytest

from hpcds1mpi.measure.rank_times import per_rank_lines, take_slowest
from hpcds1mpi.measure.readings import Readings

#: gretl's s.inp at 2 ranks under Open MPI (s48 tester O6): each rank prints its loop time.
GRETL = "rank 0 of 2: loop time 0.5750 s\nrank 1 of 2: loop time 0.3486 s\n"
#: s48 tester Q8's imb.R: rank 1 (4x the work) prints first, rank 0 after a barrier.
IMB = "rank 1 Elapsed time: 0.809 s\nranks 2\nrank 0 Elapsed time: 0.220 s\n"


def _launch(readings: Readings, out: str, ranks: int, probed: bool) -> tuple[dict, list]:
    """One ok launch's readings of ``out`` as the sweep takes them, and the notes said."""
    said = []
    readings.say = said.append
    found = readings.read(out)
    take_slowest(readings, found, ranks, (out, ""), probed)
    readings.note_once(found, "ok", "", 5.0, [], ("x", True), (ranks, (out, "")))
    return found, [note for note in said if "resolution" not in note]


def test_lines_of_ranks_the_probe_joined_are_one_jobs_not_copies():
    """Was (s48 tester O6): "the 2 ranks may be independent copies" after "launch probe: 2
    ranks joined", for lines saying "of 2"; the last rank's time was recorded."""
    for out in (GRETL, "\n".join(reversed(GRETL.splitlines()))):
        found, said = _launch(Readings.of(time_regex=r"loop time ([0-9.]+) s"), out, 2, True)
        assert found["time"] == 0.575 and found["time_text"] == "0.5750", found
        assert len(said) == 1 and "copies" not in said[0], said
        assert "of one job (the launch probe joined its ranks and each line counts 2)" in \
            said[0] and "the largest of them, '0.5750', is recorded, not the last" in said[0]


def test_a_counted_job_whose_ranks_each_print_a_time_records_the_slowest():
    """Was (s48 tester Q8): 0.220 s, rank 0's, stored for a job whose rank 1 ran 0.809 s."""
    readings = Readings.of(time_regex=r"Elapsed time: ([0-9.]+)", ranks_regex=r"^ranks (\d+)")
    found, said = _launch(readings, IMB, 2, True)
    assert found["time"] == 0.809 and found["time_text"] == "0.809"
    assert said == [
        "note: --time-regex 'Elapsed time: ([0-9.]+)' matched once per rank, in 2 lines alike "
        "('rank 1 Elapsed time: 0.809 s', ...), of one job (--ranks-regex counted 2): a job's "
        "time is its slowest rank's, so the largest of them, '0.809', is recorded, not the last "
        "match (the rule for a program printing several times)"], said


@pytest.mark.parametrize("out, ranks, ranks_regex, probed", [
    (IMB, 2, None, True),                    # no count: the probe joined the launcher's only
    (GRETL, 2, None, False),                 # no probe
    (GRETL.replace("rank 1", "rank 0"), 2, None, True),  # both rank 0: no index each once
    (GRETL, 3, None, True),                  # not once per rank
    ("time 0.4\ntime 0.3\nranks 2\n", 2, r"^ranks (\d+)", True),  # no rank in them: progressive
    ("step 0 time 0.4\ntotal 1 time 0.3\nranks 2\n", 2, r"^ranks (\d+)", True),  # not alike
])
def test_anything_else_keeps_the_last_match(out, ranks, ranks_regex, probed):
    regex = r"time ([0-9.]+)"
    readings = Readings.of(time_regex=regex, ranks_regex=ranks_regex)
    found, said = _launch(readings, out, ranks, probed)
    assert found["time_text"] == readings.read(out)["time_text"] and "per_rank" not in found
    assert not any("of one job" in note for note in said), said


def test_a_cut_output_and_a_time_in_several_units_keep_the_last_match():
    import regex

    pattern = regex.compile(r"loop time ([0-9.]+) s")
    assert per_rank_lines(pattern, 2, (GRETL, ""), False, True) == [
        ("rank 0 of 2: loop time 0.5750 s", "0.5750"), ("rank 1 of 2: loop time 0.3486 s",
                                                         "0.3486")]
    assert per_rank_lines(pattern, 2, ("x" * 2**16 + "\n" + GRETL, ""), False, True) == []
    # a time in several units, read whole: left as read, said as maybe one rank's
    found, said = _launch(Readings.of(time_regex=r"loop time 0m([0-9.]+)s"),
                          GRETL.replace(" 0.", " 0m0.").replace(" s\n", "s\n"), 2, True)
    assert found["time_text"] == "0m0.3486s" and "the last match, '0m0.3486s', is recorded, " \
        "which may be one rank's" in said[0], said


def test_a_real_sweep_of_ranks_that_each_print_their_time_records_the_slowest(tmp_path):
    """s48 tester O6 / Q8 end to end under Open MPI: rank 1 prints its (longer) time first,
    rank 0 its own after it; the stored repeats are rank 1's."""
    import shutil

    from hpcds1mpi.records.telemetry import read_runs
    from tests.helpers import executable_script, run_cli

    if shutil.which("mpirun.openmpi") is None:
        pytest.skip("Open MPI's mpirun.openmpi is missing")
    program = executable_script(
        tmp_path, "ranks.sh", '#!/bin/sh\nr=$OMPI_COMM_WORLD_RANK\nn=$OMPI_COMM_WORLD_SIZE\n'
        'if [ "$r" = 1 ]; then echo "rank 1 of $n: loop time 0.0931 s"; else sleep 0.4; '
        'echo "rank 0 of $n: loop time 0.0312 s"; fi\n')
    done = run_cli(["sweep", "--command", program, "--label", "ranks", "--sizes", "1",
                    "--ranks-per-node", "2", "--threads", "1", "--no-progress",
                    "--time-regex", r"loop time ([0-9.]+) s", "--min-repeats", "2",
                    "--max-repeats", "2", "--min-time", "0", "--warmup", "0",
                    "--mpiexec", shutil.which("mpirun.openmpi"), "--out", "r.h5"],
                   cwd=tmp_path, timeout=180,
                   env={"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    assert done.returncode == 0, done.stderr
    assert "may be independent copies" not in done.stderr, done.stderr
    assert "the largest of them, '0.0931', is recorded" in done.stderr, done.stderr
    assert read_runs(tmp_path / "r.h5")["runtime_s"].tolist() == [0.0931]  # rank 0's: 0.0312
