"""Repeats of one configuration that collide on what the first left in their folder (s38
tester A2, A3): told, not measured, and run again each in a fresh folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hpcds1mpi.measure.repeat_folders import FRESH, FRESH_RUN, RepeatFolders, collision
from hpcds1mpi.records import telemetry
from tests.helpers import run_cli


def _launch(stdout: str, wall: float, stderr: str = "", code: int = 0) -> dict:
    return {"stdout": stdout, "stderr": stderr, "wall_s": wall, "exit_code": code}


FIRST = _launch("Rank 0: assembler memory usage: 107584 KiB\nerror estimate 1.5e-3\n", 35.6)


def test_a_later_launch_saying_the_first_ones_output_exists_collided():
    later = _launch("Error, out_5/ already exists, change -o.\n\nRank 0: memory 417 KiB\n"
                    "error estimate 2.5e-3\n", 0.9)
    assert collision(FIRST, later, {"out_5"}).startswith("Error, out_5/ already exists")
    assert collision(FIRST, later, set()) == ""  # the first made nothing: no collision


def test_new_error_lines_collide_by_name_or_by_a_far_shorter_time_only():
    failed = _launch("fatal: cannot create run.log\n", 10.0)
    assert collision(FIRST, failed, {"run.log"}) == "fatal: cannot create run.log"
    vague = _launch("fatal: the run was set up before\n", 0.5)
    assert collision(FIRST, vague, {"x.out"}) == "fatal: the run was set up before"
    assert collision(FIRST, {**vague, "wall_s": 30.0}, {"x.out"}) == ""  # as long: not told
    same = _launch(FIRST["stdout"].replace("1.5e-3", "9.9e-4"), 0.5)  # numbers aside: same
    assert collision(FIRST, same, {"x.out"}) == ""


#: Real program outputs (tests/data/program_outputs/README.md says how each was captured).
OUTPUTS = Path(__file__).parent.parent / "data" / "program_outputs"


def test_a_crashs_details_or_an_address_new_in_a_later_launch_are_no_collision():
    """s45 tester P2: ffindex's crash traces differ per run (addresses, glibc's message, the
    order its processes' traces interleave in); after a slow first launch a later one had
    collided on them."""
    first, later = (_launch("", wall, (OUTPUTS / f"ffindex-apply-misspelled-command{end}.stderr")
                            .read_text()) for wall, end in ((42.6, "-again"), (0.6, "")))
    made = {"out.ffdata", "out.ffindex"}
    assert collision(first, later, made) == ""
    # what collided is still told beside a crash
    refused = _launch("", 0.6, "Error: out.ffdata already exists\n" + later["stderr"])
    assert collision(first, refused, made) == "Error: out.ffdata already exists"
    # the program's own error line, its address new each run
    first, later = (_launch(f"ERROR: stale handle {at}, reopened\nresult 1.5\n", wall)
                    for at, wall in (("0x55d3c2a8f2a0", 10.0), ("0x5581b03e12c0", 1.0)))
    assert collision(first, later, {"x.out"}) == ""


def test_a_fresh_folder_links_the_earlier_entries_beside_the_folder_and_is_removed(tmp_path):
    home = tmp_path / "wd"
    home.mkdir()
    (home / "in.dat").write_text("input")
    folders = RepeatFolders(str(home))
    with folders.folder() as where:
        assert where == str(home)
        (home / "out_5").mkdir()
    assert not folders.again(_launch("done\n", 2.0), "ok")
    assert folders.created == {"out_5"}
    with folders.folder() as where:
        assert where == str(home)
    assert folders.again(_launch("Error, out_5/ already exists\n", 0.1), "ok")
    with folders.folder() as where:
        assert os.path.dirname(where) == str(tmp_path) and FRESH in where
        assert sorted(os.listdir(where)) == ["in.dat"]
        assert open(os.path.join(where, "in.dat")).read() == "input"
    assert not os.path.exists(where) and (home / "in.dat").exists()
    assert "in a fresh folder, after launch 2" in folders.reason("exit code 1: bad")


# Ray's behaviour: exit 0 with an error when its -o folder exists, else a slow run.
REFUSES = """#!/bin/sh
if [ -e "$2" ]; then echo "Error, $2/ already exists, change the -o parameter."; echo
  echo "Rank 0: memory usage: 41768 KiB"; exit 0; fi
sleep 0.6; mkdir "$2"; echo "Rank 0: memory usage: 107584 KiB"
"""


@pytest.mark.mpi
def test_a_sweep_measures_a_program_that_refuses_its_own_outputs_in_fresh_folders(tmp_path):
    program = tmp_path / "refuses.sh"
    program.write_text(REFUSES)
    program.chmod(0o755)
    (tmp_path / "in.dat").write_text("x")
    out = tmp_path / "r.h5"
    proc = run_cli(["sweep", "--command", f"{program} in.dat out_{{size}}", "--label", "ray",
                    "--sizes", "5", "--ranks-per-node", "1", "--min-time", "0", "--no-progress",
                    "--out", str(out)], timeout=120, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "launch 2 said 'Error, out_5/ already exists" in proc.stderr
    row = telemetry.read_runs(out).iloc[0]
    # before: ok, runtime_s ~0.01 s, the errors' median, noise ~40
    assert row.status == "ok" and row.repeats == 3 and row.runtime_s > 0.5, row
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    assert (tmp_path / "out_5").is_dir()


def test_a_program_that_overwrites_its_outputs_does_not_collide():
    # s38 review 2b: "Warning: ... already exists, overwriting" is a program that is fine.
    from hpcds1mpi.measure.repeat_folders import collision

    first = {"stdout": "wrote out_1.txt\n", "stderr": "", "wall_s": 1.0}
    for line in ("Warning: output file out_1.txt already exists, overwriting",
                 "output file out_1.txt already exists and will be overwritten",
                 "out_1.txt exists: replacing it"):
        later = {"stdout": "wrote out_1.txt\n", "stderr": line + "\n", "wall_s": 1.0}
        assert collision(first, later, {"out_1.txt"}) == "", line
    refused = {"stdout": "", "stderr": "Error: out_1.txt already exists, refusing to overwrite\n",
               "wall_s": 0.1}
    assert collision(first, refused, {"out_1.txt"})


def test_the_sweeps_own_output_lock_is_no_file_the_program_made(tmp_path):
    # s38 tester E1: "launch 1 created .ExaML_info.of_300.hpcds1mpi-lock", the sweep's own.
    from hpcds1mpi.measure.output_lock import LOCK_NAME
    from hpcds1mpi.measure.repeat_folders import entries

    (tmp_path / LOCK_NAME.format(name="ExaML_info.of_300")).write_text("")
    (tmp_path / "ExaML_info.of_300").write_text("")
    assert entries(str(tmp_path)) == {"ExaML_info.of_300"}


# s42 tester E2: GARLI's later launches skip the runs the first completed, with no error word.
GARLI_1 = _launch("MPI Garli started with command line: garli-mpi -2\nprocess 0 starting run 0\n"
                  + "gen 10 lnL -4481.70\n" * 40 + "Completed 1 replicate search(es) (of 1).\n"
                  "all processes completed\n", 10.6)
GARLI_2 = _launch(
    "MPI Garli started with command line: garli-mpi -2\n"
    "It appears that run 0 was completed in a previous MPI invocation.\n"
    "\tRun 0 will not be re-run unless the hidden file \".d-lock0\" and any checkpoint files "
    "for this run (if present) are deleted from this directory.\nall processes completed\n", 0.4)


def test_a_later_launch_that_skipped_the_work_the_first_did_collided():
    made = {".d-lock0", "out.run00.log"}
    assert ".d-lock0" in collision(GARLI_1, GARLI_2, made)
    # at 2 ranks the empty launch waits 4.4 s after the first's 7.2 s: far less output
    assert ".d-lock0" in collision({**GARLI_1, "wall_s": 7.2}, {**GARLI_2, "wall_s": 4.4}, made)
    # naming nothing the first made, only a far shorter time tells it
    assert "previous MPI invocation" in collision(GARLI_1, GARLI_2, {"out.run00.log"})
    assert collision({**GARLI_1, "wall_s": 1.2}, GARLI_2, {"out.run00.log"}) == ""


def test_a_cold_start_or_a_program_that_backs_up_its_outputs_does_not_collide():
    # the same lines, numbers aside, 1.6x (the most measured on this machine) or even 8x
    warm = _launch(FIRST["stdout"].replace("107584", "99000"), FIRST["wall_s"] / 8)
    assert collision(FIRST, warm, {"x.out"}) == ""
    # GROMACS's repeat: a new line naming the first's output, but the whole job again
    first = _launch("Step 1000 done\nwrote md.log\n" * 3, 20.0)
    later = _launch("Back Off! I just backed up md.log to ./#md.log.1#\n" + first["stdout"], 19.0)
    assert collision(first, later, {"md.log"}) == ""


def test_a_launch_many_times_the_others_median_is_noted():
    from hpcds1mpi.measure.repeat_folders import outlier_note

    note = outlier_note("garli-mpi size 2 N1xR1xT1-cpu-fp64", [10.56, 0.62, 0.66])
    assert note.startswith("note: garli-mpi size 2 N1xR1xT1-cpu-fp64: measured launch 1 took "
                           "16x the median of the others") and "wrapper script" in note
    assert outlier_note("x", [2.1, 0.75, 0.81, 0.73]) == ""  # MPB's slowest, 2.8x: noise
    assert outlier_note("x", [10.0, 0.5]) == ""  # two launches: no median of others


GARLI_LIKE = """#!/bin/sh
if [ -e .d-lock0 ]; then echo "It appears that run 0 was completed in a previous invocation."
  echo "Run 0 will not be re-run unless the hidden file \\".d-lock0\\" is deleted."; exit 0; fi
sleep 0.6; i=0; while [ $i -lt 30 ]; do echo "gen $i lnL -4481.7"; i=$((i+1)); done
touch .d-lock0; echo "Completed 1 replicate search"
"""


@pytest.mark.mpi
def test_a_sweep_measures_a_program_that_skips_what_its_first_launch_did_in_fresh_folders(
        tmp_path):
    program = tmp_path / "garli.sh"
    program.write_text(GARLI_LIKE)
    program.chmod(0o755)
    out = tmp_path / "g.h5"
    proc = run_cli(["sweep", "--command", f"{program} -{{size}}", "--label", "garli",
                    "--sizes", "2", "--ranks-per-node", "1", "--min-time", "0", "--no-progress",
                    "--out", str(out)], timeout=120, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "launch 2 said 'Run 0 will not be re-run unless the hidden file \".d-lock0\"" \
        in proc.stderr, proc.stderr
    row = telemetry.read_runs(out).iloc[0]
    # before: ok, runtime_s ~0.01 s, the empty launches' median, noise ~40, no note
    assert row.status == "ok" and row.repeats == 3 and row.runtime_s > 0.5, row
    assert (tmp_path / ".d-lock0").exists()


# s44: a program whose first launch builds a table it keeps (2 s), its timed work the same.
def _timed(stdout: str, wall: float, time: float, **found) -> dict:
    return {**_launch(stdout, wall), "found": {"time": time, **found}}


TABLES_1 = _timed("building lookup tables\ncompute time: 0.100 s\n", 2.25, 0.100)
TABLES_2 = _timed("lookup tables loaded from tables.bin\ncompute time: 0.101 s\n", 0.22, 0.101)


def test_a_later_launch_whose_own_time_shows_it_ran_is_no_collision():
    from hpcds1mpi.measure.repeat_folders import ran_its_work

    assert ran_its_work(TABLES_1, TABLES_2)
    assert collision(TABLES_1, TABLES_2, {"tables.bin"}, ran=True) == ""
    assert collision(TABLES_1, TABLES_2, {"tables.bin"}) != ""  # without the proof: as before
    # a skipped launch printing a far shorter time of its own, or none, proves nothing
    assert not ran_its_work(TABLES_1, {**TABLES_2, "found": {"time": 0.001}})
    assert not ran_its_work(TABLES_1, {**TABLES_2, "found": {}})
    assert not ran_its_work(_launch("x\n", 2.0), TABLES_2)  # wall times only: no proof
    # a reading the first printed and the later did not: no proof
    assert not ran_its_work({**TABLES_1, "found": {"time": 0.1, "fom": 3.0}}, TABLES_2)
    # an error line naming what the first made still collides
    failed = _timed("error: tables.bin is locked\ncompute time: 0.1 s\n", 0.2, 0.1)
    assert collision(TABLES_1, failed, {"tables.bin"}, ran=True) == "error: tables.bin is locked"


def _judged(tmp_path, stdout: str, wall: float) -> tuple[dict, str]:
    """A launch of ``stdout`` in ``wall`` s, read and given its status as the sweep does
    (:meth:`Readings.scan`, :meth:`Readings.time_problem`)."""
    from hpcds1mpi.measure.readings import Readings

    readings = Readings.of(time_regex=r"compute time: ([0-9.]+)")
    (tmp_path / "out").write_bytes(stdout.encode())
    (tmp_path / "err").write_bytes(b"")
    with open(tmp_path / "out", "rb") as out, open(tmp_path / "err", "rb") as err:
        found = readings.scan([out, err])
    status = "failed" if readings.time_problem(found, wall) else "ok"
    return {**_launch(stdout, wall), "found": found}, status


REPRINT = "run 0 was completed in a previous invocation\ncompute time: 0.100 s\n"


@pytest.mark.parametrize("wall", [0.01, 0.06])  # the sweep fails it; the sweep lets it through
def test_a_launch_that_reprints_the_first_ones_time_in_less_wall_proves_nothing(tmp_path, wall):
    first, status = _judged(tmp_path, TABLES_1["stdout"], 2.25)
    assert status == "ok"
    folders = RepeatFolders(str(tmp_path))
    folders.again(first, status)
    folders.created = {"tables.bin"}
    # GARLI-like: skipped its work and reprinted the stored 0.100 s in a shorter launch
    stored, status = _judged(tmp_path, REPRINT, wall)
    assert status == ("failed" if wall < 0.05 else "ok")  # within two clocks' slack: ok
    assert folders.again(stored, status) and folders.fresh
    # a launch that did the work, its own time inside its wall: no collision
    folders = RepeatFolders(str(tmp_path))
    folders.first, folders.created = first, {"tables.bin"}
    later, status = _judged(tmp_path, TABLES_2["stdout"], 0.22)
    assert not folders.again(later, status) and not folders.fresh


COLD_FIRST = """#!/bin/sh
if [ -e tables.bin ]; then echo "lookup tables loaded"; else echo "building lookup tables"
  sleep 1.5; touch tables.bin; fi
sleep 0.1; echo "compute time: 0.100 s"
"""


def _sweep_script(tmp_path, label: str, text: str, time_regex: str):
    """A 1-configuration sweep of the shell program ``text`` timed by ``time_regex``, run in
    ``tmp_path`` (where the program keeps its files): (the process, the telemetry path)."""
    program = tmp_path / f"{label}.sh"
    program.write_text(text)
    program.chmod(0o755)
    out = tmp_path / f"{label}.h5"
    proc = run_cli(["sweep", "--command", f"{program}", "--label", label, "--sizes", "1",
                    "--ranks-per-node", "1", "--min-time", "0", "--no-progress", "--time-regex",
                    time_regex, "--out", str(out)], timeout=120, cwd=str(tmp_path))
    return proc, out


@pytest.mark.mpi
def test_a_sweep_measures_a_program_whose_first_launch_builds_a_cache_in_its_folder(tmp_path):
    proc, out = _sweep_script(tmp_path, "cold", COLD_FIRST, r"compute time: ([0-9.]+)")
    assert proc.returncode == 0, proc.stderr
    assert "fresh folder" not in proc.stderr and "median recorded" not in proc.stderr, proc.stderr
    row = telemetry.read_runs(out).iloc[0]
    # before: every repeat ran cold in a fresh folder, elapsed ~1.7 s a launch
    assert row.status == "ok" and row.repeats == 3 and row.elapsed_s < 1.0, row


# s44 review R1: a program that checkpoints at step 60 of 100 and restarts from it: a rerun
# times the 40 steps left, 0.4x the first's time, far outside a cold start's band (1.6x).
RESUMED_1 = _timed("Starting a new run\nstep 100 energy -1.2345\nLoop time: 1.315\n", 1.35,
                   1.315)
RESUMED_2 = _timed("Restarting from state.chk at step 60\nstep 100 energy -1.2345\n"
                   "Loop time: 0.488\n", 0.52, 0.488)


def test_a_restart_timing_part_of_the_work_proves_nothing_and_collides(tmp_path):
    from hpcds1mpi.measure.repeat_folders import COLD, ran_its_work

    assert not ran_its_work(RESUMED_1, RESUMED_2)
    folders = RepeatFolders(str(tmp_path))
    folders.first, folders.created = RESUMED_1, {"state.chk"}
    assert folders.again(RESUMED_2, "ok") and folders.fresh
    # a later launch within the cold start's band still proves it ran
    band = {**RESUMED_2, "wall_s": 0.9, "found": {"time": RESUMED_1["found"]["time"] / COLD}}
    assert ran_its_work(RESUMED_1, band)


RESUMING = """#!/bin/sh
if [ -e state.chk ]; then echo "Restarting from state.chk at step 60"; from=60
else echo "Starting a new run"; from=0; fi
i=$from; while [ $i -lt 100 ]; do sleep 0.01; i=$((i+1))
  [ $i -eq 60 ] && echo ok > state.chk; done
n=$((100 - from)); printf 'Loop time: %d.%02d\n' $((n / 100)) $((n % 100))
"""


@pytest.mark.mpi
def test_a_sweep_measures_a_program_restarting_from_its_checkpoint_in_fresh_folders(tmp_path):
    proc, out = _sweep_script(tmp_path, "resume", RESUMING, r"Loop time: ([0-9.]+)")
    assert proc.returncode == 0, proc.stderr
    assert "launch 2 said 'Restarting from state.chk at step 60'" in proc.stderr, proc.stderr
    row = telemetry.read_runs(out).iloc[0]
    # before: no note, runtime_s 0.4, the restarts' time
    assert row.status == "ok" and row.runtime_s == pytest.approx(1.0), row


def test_an_errors_quoted_run_id_names_the_earlier_outputs_it_carries():
    from hpcds1mpi.measure.repeat_folders import leftovers

    names = {"ExaML_info.run_8000_1", "ExaML_binaryCheckpoint.run_8000_1_0", "run_8000_10",
             "aln8000.binary", "start.nwk", "out.dat"}
    error = ("exit code 255: ExaML output files with the run ID <run_8000_1> already exist in "
             "directory /tmp/ex/ ...... exiting")
    assert leftovers(error, names) == {"ExaML_info.run_8000_1",
                                       "ExaML_binaryCheckpoint.run_8000_1_0"}
    assert leftovers("Error: out.dat already exists", names) == {"out.dat"}


def test_a_first_launch_refusing_an_earlier_runs_outputs_runs_again_without_them(tmp_path):
    # s48 tester Q2, Q3: stored as the layout's failure, it vetoed a layout measured ok there.
    home = tmp_path / "wd"
    home.mkdir()
    for name in ("in.dat", "info.r", "log.r"):
        (home / name).write_text(name)
    said: list[str] = []
    folders = RepeatFolders(str(home), said.append, "examl size 5 N1xR1")
    error = "exit code 255: output files with the run ID <r> already exist ...... exiting"
    with folders.folder() as where:
        assert where == str(home)
    assert folders.again(_launch("", 0.1, code=255), "failed", error)
    assert "refuses outputs an earlier run left" in said[0] and "info.r, log.r" in said[0]
    with folders.folder() as where:
        assert FRESH in where and sorted(os.listdir(where)) == ["in.dat"]
    # once only: a failure in the fresh folder is the run's, saying where it ran
    assert not folders.again(_launch("", 0.1, code=1), "failed", error)
    assert "in a fresh folder without info.r, log.r" in folders.reason(error)
    assert sorted(os.listdir(home)) == ["in.dat", "info.r", "log.r"]  # the earlier kept


def test_a_first_launch_naming_no_entry_it_refuses_stays_the_runs_failure(tmp_path):
    (tmp_path / "in.dat").write_text("x")
    folders = RepeatFolders(str(tmp_path), own_folder=True)
    with folders.folder():
        pass
    error = "exit code 1: mkdir: File exists"
    assert not folders.again(_launch("", 0.1, code=1), "failed", error)
    # s48 tester Q3: a configuration's own --workdir folder is not to be asked for again
    said = folders.reason(error)
    assert "new, empty --workdir folders" in said and "per configuration" not in said


# ExaML's behaviour: exit 255 when its run's outputs are in the folder, else it reads its
# input and writes them.
REFUSES_EARLIER = """#!/bin/sh
if [ -e "info.$1" ]; then echo "output files with the run ID <$1> already exist ... exiting"
  exit 255; fi
cat in.dat > /dev/null || exit 3
sleep 0.2; echo "time: 0.2"; echo done > "info.$1"
"""


@pytest.mark.mpi
def test_a_sweep_measures_a_program_refusing_an_earlier_sweeps_outputs_in_a_fresh_folder(
        tmp_path):
    program = tmp_path / "examl.sh"
    program.write_text(REFUSES_EARLIER)
    program.chmod(0o755)
    (tmp_path / "in.dat").write_text("x")
    (tmp_path / "info.r5").write_text("an earlier sweep's")
    out = tmp_path / "e.h5"
    proc = run_cli(["sweep", "--command", f"{program} r{{size}}", "--label", "examl",
                    "--sizes", "5", "--ranks-per-node", "1", "--min-time", "0", "--no-progress",
                    "--time-regex", r"time: ([0-9.]+)", "--out", str(out)], timeout=120,
                   cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "launch 1 said" in proc.stderr and "(info.r5)" in proc.stderr, proc.stderr
    row = telemetry.read_runs(out).iloc[0]
    # before: failed, "output files with the run ID <r5> already exist"
    assert row.status == "ok" and row.repeats == 3, row
    assert (tmp_path / "info.r5").read_text() == "an earlier sweep's"
    # kept with the run, so that recommend --emit warns of the folder (s48 tester Q1)
    assert row.error == FRESH_RUN + str(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_refusal_leaves_out_only_names_it_gives_whole_or_as_a_run_tag():
    # s48 review RY2: an entry sharing a word with the error had been left out, inputs too.
    from hpcds1mpi.measure.repeat_folders import leftovers

    # a quoted word names the entry whole, not the input that starts with it
    assert leftovers("Error: output directory 'output' already exists",
                     {"output", "output.cfg", "prog.sh"}) == {"output"}
    # a quoted run tag names the names carrying it after a '.', never the tag's own inputs
    examl = {"aln2000.binary", "aln2000.phy", "start.nwk", "ExaML_info.aln2000",
             "ExaML_log.aln2000", "ExaML_binaryCheckpoint.aln2000_0"}
    error = ("exit code 255: ExaML output files with the run ID <aln2000> already exist in "
             "directory /tmp/ex2/ ...... exiting")
    want = {"ExaML_info.aln2000", "ExaML_log.aln2000", "ExaML_binaryCheckpoint.aln2000_0"}
    assert leftovers(error, examl) == want
    args = ["-s", "aln2000.binary", "-t", "start.nwk", "-m", "PSR", "-n", "aln2000"]
    assert leftovers(error, examl, args) == want
    # a plain word of the error is no name given
    assert leftovers("Error: result file already exists in the data directory, not "
                     "overwriting", {"data", "mesh.msh", "result.h5", "input.cfg"}) == set()
    assert leftovers("Error: data/result.h5 already exists",
                     {"data", "result.h5"}) == {"result.h5"}
    # a file of the command line is its input, whatever the error says of it
    assert leftovers("Error, rayout_5000/ already exists", {"rayout_5000", "r.fa"}) == \
        {"rayout_5000"}
    assert leftovers("Error, rayout_5000/ already exists", {"rayout_5000", "r.fa"},
                     ["-s", "r.fa", "-o", "rayout_5000"]) == set()


def test_a_first_launch_refusing_what_it_names_by_a_plain_word_stays_the_runs_failure(
        tmp_path):
    # s48 review RY2: the input folder 'data' had been left out and the run gone on without it
    for name in ("data", "mesh.msh", "result.h5", "input.cfg"):
        (tmp_path / name).write_text(name)
    folders = RepeatFolders(str(tmp_path))
    with folders.folder():
        pass
    error = "exit code 1: Error: result file already exists in the data directory"
    assert not folders.again(_launch("", 0.1, code=1), "failed", error)
    assert "remove them" in folders.reason(error) and not folders.fresh


def test_a_first_launchs_note_lists_every_name_left_out(tmp_path):
    names = [f"ExaML_binaryCheckpoint.r_{n}" for n in range(4)] + ["ExaML_info.r", "r.binary"]
    for name in names:
        (tmp_path / name).write_text(name)
    said: list[str] = []
    folders = RepeatFolders(str(tmp_path), said.append, "examl size 5 N1xR1", args=["-n", "r"])
    with folders.folder():
        pass
    error = "exit code 255: output files with the run ID <r> already exist ...... exiting"
    assert folders.again(_launch("", 0.1, code=255), "failed", error)
    assert f"({', '.join(sorted(names[:5]))})" in said[0], said  # before: the first 3, "..."
    with folders.folder() as where:
        assert os.listdir(where) == ["r.binary"]


# A program reading its settings from output.cfg where there is one, refusing its earlier
# output folder (s48 review RY2 case A).
READS_ITS_CFG = """#!/bin/sh
if [ -e output ]; then echo "Error: output directory 'output' already exists"; exit 1; fi
t=0.05; [ -e output.cfg ] && t=$(cat output.cfg)
sleep "$t"; echo "solve time $t"; mkdir output
"""
# ExaML's shape (RY2 case B): its input named by the run ID, its outputs carrying it.
EXAML_LIKE = """#!/bin/sh
if [ -e "ExaML_info.$1" ]; then
  echo "ExaML output files with the run ID <$1> already exist ...... exiting"; exit 255; fi
cat "$1.binary" > /dev/null || exit 3
sleep 0.2; echo "time: 0.2"; echo done > "ExaML_info.$1"; echo 1 > "ExaML_binaryCheckpoint.$1_0"
"""


@pytest.mark.mpi
@pytest.mark.parametrize("script, earlier, inputs, regex, time", [
    (READS_ITS_CFG, ["output"], {"output.cfg": "0.4"}, r"solve time ([0-9.]+)", 0.4),
    (EXAML_LIKE, ["ExaML_info.r5", "ExaML_binaryCheckpoint.r5_0"], {"r5.binary": "x"},
     r"time: ([0-9.]+)", 0.2)])
def test_a_sweep_refusing_earlier_outputs_keeps_the_inputs_sharing_their_word(
        tmp_path, script, earlier, inputs, regex, time):
    program = tmp_path / "prog.sh"
    program.write_text(script)
    program.chmod(0o755)
    for name in earlier:
        (tmp_path / name).mkdir()
    for name, text in inputs.items():
        (tmp_path / name).write_text(text)
    out = tmp_path / "e.h5"
    proc = run_cli(["sweep", "--command", f"{program} r{{size}}", "--label", "p",
                    "--sizes", "5", "--ranks-per-node", "1", "--min-time", "0", "--no-progress",
                    "--max-repeats", "2", "--min-repeats", "2",
                    "--time-regex", regex, "--out", str(out)], timeout=120, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert f"({', '.join(sorted(earlier))})" in proc.stderr, proc.stderr
    row = telemetry.read_runs(out).iloc[0]
    # before: output.cfg left out, ok at 0.05 s (14x too fast); r5.binary left out, failed
    assert row.status == "ok" and row.runtime_s == pytest.approx(time, rel=0.01), row
