"""What a program says about its own run: time, figure of merit, rank count."""

from __future__ import annotations

import dataclasses
import math
import os
import re

import pytest

from hpcds1mpi.errors import ConfigError, LaunchError
from hpcds1mpi.measure import readings as readings_mod
from hpcds1mpi.measure.readings import FileMark, Readings, compile_regex, number
from tests.apps.scalapack import XDLU_TOTMEM


def test_regexes_need_a_group_and_must_compile():
    with pytest.raises(ConfigError, match="--time-regex needs a group"):
        compile_regex("time", "--time-regex", "t: (.*)")
    with pytest.raises(ConfigError, match="--ranks-regex: "):
        compile_regex("(", "--ranks-regex", "r: (.*)")
    assert compile_regex(None, "--fom-regex", "") is None


def test_the_last_match_is_the_number_and_nan_where_none():
    pattern = compile_regex(r"HPL_time=([0-9.eE+-]+)", "--time-regex", "")
    assert number(pattern, "HPL_time=1.5\nHPL_time=2.5e-1\n") == 0.25
    assert math.isnan(number(pattern, "no time here"))
    assert math.isnan(number(pattern, "HPL_time=inf"))  # not a finite time
    assert math.isnan(number(None, "HPL_time=1"))


def test_only_what_the_launch_appended_to_the_output_file_is_read(tmp_path):
    readings = Readings.of(time_regex=r"HPL_time=([0-9.]+)", output_file="out-{ranks}.txt")
    path = readings.output_path(str(tmp_path), {"ranks": 2})
    assert path == str(tmp_path / "out-2.txt")
    assert readings.new_text(path, readings.mark(path)) == ""  # not there yet
    with open(path, "w") as fh:
        fh.write("HPL_time=9.0\n")  # an earlier run's (HPCC appends to hpccoutf.txt)
    start = readings.mark(path)
    with open(path, "a") as fh:
        fh.write("HPL_time=0.5\n")
    assert readings.read(readings.new_text(path, start))["time"] == 0.5
    start = readings.mark(path)
    with open(path, "a") as fh:
        fh.write("no time this run\n")  # a launch that appends no time has none
    assert math.isnan(readings.read(readings.new_text(path, start))["time"])
    assert readings.runtime_source().startswith("program's own time")
    assert Readings.of().runtime_source() == "launch wall time (s)"


def test_a_launch_whose_program_reports_other_ranks_is_an_error():
    readings = Readings.of(ranks_regex=r"CommWorldProcs=(\d+)")
    one_job = readings.read("CommWorldProcs=2\n")
    readings.check_ranks(one_job, 2, "hpcc 200 1x2x1", ["mpirun", "-n", "2"])
    copies = readings.read("CommWorldProcs=1\nCommWorldProcs=1\n")
    with pytest.raises(LaunchError, match="launched 2 rank.*matched .* with 1: its ranks are "
                                          "not one job"):
        readings.check_ranks(copies, 2, "hpcc 200 1x2x1", ["mpiexec", "-n", "2"])
    timed = Readings.of(ranks_regex=r"CommWorldProcs=(\d+)", time_regex=r"TIME=(\S+)")
    with pytest.raises(ConfigError, match="matched nothing in the output; fix it: the "
                                          "output's lines were 'TIME=0.5'"):  # s32 tester X6
        timed.check_ranks(timed.read("TIME=0.5\n"), 2, "x", ["mpiexec"])
    Readings.of().check_ranks(copies, 2, "x", ["mpiexec"])  # no regex: nothing to check


#: The readings of ScaLAPACK's xdlu (:data:`~tests.apps.scalapack.XDLU_TOTMEM`).
XDLU = dict(time_regex=r"^WALL\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s+([0-9.]+)",
            fom_regex=r"^WALL(?:\s+\S+){9}\s+([0-9.]+)",
            ranks_regex=r"^WALL(?:\s+\S+){6}\s+(\d+)")


@pytest.mark.parametrize("ranks", [1, 2])
def test_a_program_that_printed_no_result_line_failed_its_launcher_is_not_wrong(ranks):
    # Before: LaunchError "its ranks are not one job ... use the program's own launcher",
    # nothing recorded and the sweep stopped, even at 1 rank.
    readings = Readings.of(**XDLU)
    found = readings.read(XDLU_TOTMEM)
    readings.check_ranks(found, ranks, "lu 700 1x1x1", ["mpiexec", "-n", str(ranks)])
    why = readings.time_problem(found, 0.3)
    assert why.startswith("exit 0, but --time-regex '^WALL") and "matched no number" in why
    assert why.endswith("; the program said: Unable to perform factorization: need TOTMEM of "
                        "at least 4494136"), why


def test_no_count_at_one_rank_is_a_failed_run_with_the_programs_reason():
    readings = Readings.of(ranks_regex=r"ranks: (\d+)", time_regex=r"TIME=(\S+)")
    found = readings.read("TIME=0.5\n", "warning: could not query the communicator size\n")
    readings.check_ranks(found, 1, "x", ["mpiexec", "-n", "1"])  # 1 rank: nothing to join
    assert readings.time_problem(found, 1.0) == (
        "exit 0, but --ranks-regex 'ranks: (\\d+)' matched nothing in its output; the "
        "program said: warning: could not query the communicator size")
    only = Readings.of(ranks_regex=r"ranks: (\d+)")
    empty = only.read("")
    only.check_ranks(empty, 4, "x", ["mpiexec"])  # printed none of its lines: not a launcher's
    assert only.time_problem(empty, 1.0) == ("exit 0, but --ranks-regex 'ranks: (\\d+)' "
                                             "matched nothing in its output")
    assert only.time_problem(only.read("ranks: 4\n"), 1.0) == ""
    assert only.read("ranks: 4\n")["said"] == ""  # read only when a reading is missing


def test_scan_finds_the_programs_reason_when_a_reading_is_missing(tmp_path):
    readings = Readings.of(**XDLU)
    out, err = tmp_path / "out", tmp_path / "err"
    out.write_text(XDLU_TOTMEM)
    err.write_text("")
    with open(out, "rb") as o, open(err, "rb") as e:
        found = readings.scan([o, e])
    assert found["said"].startswith("Unable to perform factorization: need TOTMEM")


def test_an_empty_output_file_name_is_refused():
    with pytest.raises(ConfigError, match="--output-file is empty"):
        Readings.of(output_file=" ")


def _rewrite(path, text: str) -> None:
    with open(path, "w") as fh:  # truncates: ``> result.txt``
        fh.write(text)


def test_a_file_the_program_rewrites_is_read_whole_at_any_new_length(tmp_path):
    # The old mark was the file's size: a longer rewrite was read from the old end ("time:
    # 123456 s" gave 56), one of the same length gave nothing ("matched no number").
    readings = Readings.of(time_regex=r"([0-9.]+) s", output_file="result.txt")
    path = readings.output_path(str(tmp_path), {})
    _rewrite(path, "time: 9 s\n")
    for text, expected in (("time: 123456 s\n", 123456.0),  # longer
                           ("time: 654321 s\n", 654321.0),  # as long
                           ("time: 654321 s\n", 654321.0),  # the same bytes again
                           ("time: 7 s\n", 7.0)):  # shorter
        mark = readings.mark(path)
        _rewrite(path, text)
        assert readings.read(readings.new_text(path, mark))["time"] == expected, text
    mark = readings.mark(path)
    tmp = tmp_path / "new"
    tmp.write_text("time: 0.25 s\n")
    os.replace(tmp, path)  # written elsewhere and renamed over it
    assert readings.read(readings.new_text(path, mark))["time"] == 0.25
    mark = readings.mark(path)  # a launch that does not touch the file: nothing of it is read
    assert readings.new_text(path, mark) == ""
    assert math.isnan(readings.scan([], path, mark)["time"])


def test_scan_gives_the_last_match_of_the_whole_output_in_small_windows(tmp_path, monkeypatch):
    # Searched backwards in windows (here 24..120 bytes, so some window's cut falls inside
    # the two-line match): the same last match as the whole text; the file's part wins.
    monkeypatch.setattr(readings_mod, "OVERLAP", 40)
    readings = Readings.of(time_regex=r"T=([0-9.]+)$", fom_regex=r"F:\n  ([0-9.]+)",
                           ranks_regex=r"R=(\d+)", output_file="o.txt")
    lines = [f"line {i} T={i}.5" if i % 7 == 0 else f"filler {i} xxxxxxxx" for i in range(60)]
    lines[13:13] = ["F:", "  42.5"]
    lines.insert(3, "R=4")
    out = tmp_path / "stdout"
    out.write_bytes("\n".join(lines).encode())
    err = tmp_path / "stderr"
    err.write_bytes(b"T=1.0\nwarning: " + b"y" * 300 + b"\n")
    path = readings.output_path(str(tmp_path), {})
    _rewrite(path, "HPL\n")
    mark = readings.mark(path)
    with open(path, "a") as fh:
        fh.write("T=3.25\n" + "z" * 200 + "\n")
    whole = readings.read("\n".join(lines) + "\n" + err.read_text() + "\n"
                          + readings.new_text(path, mark))
    assert (whole["time"], whole["fom"], whole["ranks"]) == (3.25, 42.5, 4)
    whole.pop("time_values")  # the different times of the window it matched in (s33 D7)
    for chunk in range(24, 121):
        monkeypatch.setattr(readings_mod, "CHUNK", chunk)
        with open(out, "rb") as o, open(err, "rb") as e:
            scanned = readings.scan([o, e], path, mark)
            assert scanned.pop("time_values")[-1] == "3.25" and scanned == whole, chunk
    with open(out, "rb") as o, open(err, "rb") as e:
        assert readings.scan([o, e])["time"] == 1.0  # stderr after stdout
    with open(out, "rb") as o:
        assert readings.scan([o])["time"] == 56.5


def test_windows_cover_the_output_and_always_advance(tmp_path, monkeypatch):
    monkeypatch.setattr(readings_mod, "CHUNK", 16)
    monkeypatch.setattr(readings_mod, "OVERLAP", 8)
    data = b"a" * 15 + b"\n" + b"b" * 40 + b"\nccc\n" + "été\n".encode() * 9
    path = tmp_path / "f"
    path.write_bytes(data)
    with open(path, "rb") as fh:
        parts = list(readings_mod.windows(fh, 0, len(data)))
    assert all(p for p in parts) and set("".join(parts)) == set(data.decode())
    assert "\ufffd" not in "".join(parts)  # cut at line ends: no character split


@pytest.mark.parametrize("said, words", [
    ("-0.2", "'-0.2' .* is not a positive finite number"),
    ("nan", "'nan' .* is not a positive finite number"),
    ("inf", "'inf' .* is not a positive finite number"),
    ("1e30", "1e\\+30 s .* is over a year"),
    ("50", "50 s .* is 100x the launch's own wall time 0.5 s: a unit mistake"),
    ("1,2,3", "matched '1,2,3', which is not a number; make its group take the number alone"),
])
def test_a_reported_time_that_cannot_be_the_runtime_is_refused(said, words):
    # Before, each was recorded ok (a negative energy then made train refuse the file).
    readings = Readings.of(time_regex=r"TIME=(\S+)")
    why = readings.time_problem(readings.read(f"TIME={said}\n"), 0.5)
    assert why.startswith("exit 0, but ") and "--time-regex 'TIME=(\\S+)'" in why
    assert re.search(words, why), why
    assert "\n" not in why


def test_a_reported_zero_is_the_runtime_under_one_tick_not_a_failure():
    """s47 tester K1: MPB's whole-second "0 seconds" was a failed run."""
    readings = Readings.of(time_regex=r"TIME=(\S+)")
    found = readings.read("TIME=0\n")
    assert readings.time_problem(found, 0.5) == "" and found["time"] == 0.25
    # a "0.00" claims a finer timer: still failed (s47 review RX1)
    assert readings.time_problem(readings.read("TIME=0.00\n"), 0.5).startswith("exit 0, but")


def test_a_plausible_reported_time_is_the_runtime():
    readings = Readings.of(time_regex=r"TIME=(\S+)")
    # within the wall, or past it by no more than the last digit printed and clock slack
    for said, wall in (("0.4", 0.5), ("0.54", 0.5), ("0.1", 0.01), ("1", 0.7),
                       ("3.6e3", 3601.0)):
        assert readings.time_problem(readings.read(f"TIME={said}\n"), wall) == ""
    assert "matched no number" in readings.time_problem(readings.read("nothing"), 1.0)
    assert Readings.of().time_problem({}, 1.0) == ""


def test_an_output_file_that_is_a_folder_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="names a folder"):
        Readings.of(output_file="results/")
    readings = Readings.of(output_file="out")
    (tmp_path / "out").mkdir()
    with pytest.raises(ConfigError, match="--output-file 'out': .* is a folder"):
        readings.check_output_path(readings.output_path(str(tmp_path), {}))
    readings.check_output_path(str(tmp_path / "missing.txt"))  # written by the program later


@pytest.mark.timeout(20)
def test_an_output_file_that_is_a_fifo_is_refused_and_never_waited_on(tmp_path):
    """Was: --output-file naming a FIFO hung the sweep forever in open(), past --timeout
    (s47 tester M2)."""
    os.mkfifo(tmp_path / "fifo")
    readings = Readings.of(output_file="fifo")
    path = readings.output_path(str(tmp_path), {})
    with pytest.raises(ConfigError, match="--output-file 'fifo': .* is a FIFO, not a regular"):
        readings.check_output_path(path)
    # made by the program during its launch: read as no output file, never waited on
    assert FileMark.of(path) == FileMark()
    assert Readings.new_text(path, FileMark()) == ""


@pytest.mark.timeout(120)
def test_a_backtracking_regex_ends_in_one_line_instead_of_spinning(tmp_path, monkeypatch):
    """Was: '(a|aa)+b([0-9]+)' on 60 characters of output spun at 100 % CPU past --timeout
    until the walltime (s27 tester P, 7): re cannot be stopped."""
    monkeypatch.setattr(readings_mod, "MATCH_TIMEOUT_S", 0.2, raising=False)
    slow = Readings.of(time_regex=r"(a|aa)+b([0-9]+)")
    for search in (lambda: slow.read("a" * 60 + "\n"),
                   lambda: slow.scan([_stream(tmp_path, "a" * 60 + "\n"),
                                      _stream(tmp_path, "")])):
        with pytest.raises(ConfigError, match=r"^--time-regex '\(a\|aa\)\+b\(\[0-9\]\+\)' "
                                              r"searched the program's output for over 0.2 s"):
            search()
    assert Readings.of(time_regex=r"time: ([0-9.]+)").read("time: 1.5\n")["time"] == 1.5


def _stream(tmp_path, text: str):
    path = tmp_path / f"s{len(list(tmp_path.iterdir()))}"
    path.write_text(text)
    return open(path, "rb")


def test_a_time_over_the_wall_time_of_several_ranks_is_said_summed_over_them_first():
    """Was (s28 tester U): ABINIT's "Overall time ... cpu=" (summed over the ranks) was said a
    unit mistake ("milliseconds read as seconds?") at 2 ranks."""
    readings = Readings.of(time_regex=r"cpu=\s*(\S+)")
    why = readings.time_problem(readings.read("Overall time at end (sec) : cpu= 6.3\n"), 3.6, 2)
    assert "1.75x the launch's own wall time 3.6 s: a time summed over the 2 ranks" in why
    one = readings.time_problem(readings.read("Overall time at end (sec) : cpu= 6.3\n"), 3.6, 1)
    assert ": a unit mistake (milliseconds read as seconds?)" in one and "summed" not in one


#: Elk 8.4.30's timings block (its "total" is CPU time, summed over its OpenMP threads).
ELK_TIMINGS = """Timings (CPU seconds) :
 initialisation                        :         0.57
 Hamiltonian and overlap matrix set up :         2.10
 total                                 :         8.03
"""


def test_a_time_over_the_wall_time_of_several_threads_is_said_summed_over_them_first():
    """Was (s30 tester L3): Elk's CPU seconds summed over 2 threads, 8.03 s in a 5.17 s launch,
    were said "a unit mistake (milliseconds read as seconds?)"."""
    readings = Readings.of(time_regex=r"total\s+:\s+([0-9.]+)")
    why = readings.time_problem(readings.read(ELK_TIMINGS), 5.17, 1, threads=2)
    assert "1.55x the launch's own wall time 5.17 s: a CPU time summed over the 2 threads " \
        "(1 rank(s) x 2 threads) (or milliseconds read as seconds?)" in why, why
    assert "wall=, not cpu=" in why
    both = readings.time_problem(readings.read(ELK_TIMINGS), 2.0, 2, threads=2)
    assert "a CPU time summed over the 4 threads (2 rank(s) x 2 threads)" in both, both


def test_a_time_past_the_wall_time_by_more_than_its_last_digit_is_never_a_runtime():
    """Was (s30 verifier V, N2): under 1.5x the wall time it was kept: Elk's CPU seconds over
    2 threads, 1.39 s in a 1.29 s launch, recorded as the runtime of every threaded run."""
    readings = Readings.of(time_regex=r"total\s+:\s+([0-9.]+)")
    why = readings.time_problem(readings.read(ELK_TIMINGS.replace("8.03", "1.39")), 1.29, 1,
                                threads=2)
    assert "1.08x the launch's own wall time 1.29 s: a CPU time summed over the 2" in why, why
    # a time within the wall, or past it by less than its last digit (rounded up), is kept
    assert readings.time_problem(readings.read(ELK_TIMINGS.replace("8.03", "1.25")), 1.29) == ""
    whole = Readings.of(time_regex=r"took (\d+) s")
    assert whole.time_problem(whole.read("took 2 s\n"), 1.3) == ""
    assert whole.time_problem(whole.read("took 3 s\n"), 1.3) != ""


#: CP2K 2023.1 (cp2k.psmp) with MAX_SCF 2: exit 0, its SCF warning above its energy and the
#: timing report it always ends with (cut from a real run).
CP2K_NOT_CONVERGED = (
    "  Total energy:                                               -34.13239468579390\n\n"
    " *** WARNING in qs_scf.F:601 :: SCF run NOT converged ***\n\n\n"
    " ENERGY| Total FORCE_EVAL ( QS ) energy [a.u.]:              -34.132394685793898\n\n"
    " SUBROUTINE                       CALLS  ASD         SELF TIME        TOTAL TIME\n"
    "                                MAXIMUM       AVERAGE  MAXIMUM  AVERAGE  MAXIMUM\n"
    " CP2K                                 1  1.0    0.024    0.024    0.567    0.567\n")
CP2K_TIME = r"^ CP2K\s+1\s+\S+\s+\S+\s+\S+\s+\S+\s+([0-9.]+)"


def test_fail_regex_gives_the_whole_line_it_matched_and_needs_no_group(tmp_path):
    """Was (s28 tester T8): no way to make a non-converged SCF (exit 0) a failure."""
    readings = Readings.of(time_regex=CP2K_TIME, fail_regex="SCF run NOT converged")
    found = readings.read(CP2K_NOT_CONVERGED)
    assert found["time"] == 0.567 and found["said"] == ""
    assert readings.fail_problem(found) == (
        "exit 0, but its output matched --fail-regex 'SCF run NOT converged': *** WARNING in "
        "qs_scf.F:601 :: SCF run NOT converged ***")
    with _stream(tmp_path, CP2K_NOT_CONVERGED) as out, _stream(tmp_path, "") as err:
        assert readings.fail_problem(readings.scan([out, err])) == \
            readings.fail_problem(found)
    converged = CP2K_NOT_CONVERGED.replace(" *** WARNING in qs_scf.F:601 :: SCF run NOT "
                                           "converged ***\n", "")
    assert readings.fail_problem(readings.read(converged)) == ""
    with _stream(tmp_path, converged) as out, _stream(tmp_path, "") as err:
        found = readings.scan([out, err])
    assert readings.fail_problem(found) == "" and found["said"] == ""  # no reason looked for
    assert readings.describe()["fail_regex"] == "SCF run NOT converged"


def test_a_fail_regex_that_matches_every_output_or_does_not_compile_is_refused():
    for text, words in (("", "matches an empty line"), ("x*", "matches an empty line"),
                        ("(", "--fail-regex: ")):
        with pytest.raises(ConfigError, match=re.escape(words)):
            Readings.of(fail_regex=text)


@pytest.mark.timeout(120)
def test_a_backtracking_fail_regex_ends_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(readings_mod, "MATCH_TIMEOUT_S", 0.2, raising=False)
    slow = Readings.of(fail_regex=r"(a|aa)+b")
    with pytest.raises(ConfigError, match=r"^--fail-regex '\(a\|aa\)\+b' searched the "):
        slow.read("a" * 60 + "\n")


@pytest.mark.parametrize("printed, unit", [
    ("Elapsed: 0.040 ms", "ms"), ("Elapsed: 0.086ms", "ms"), ("Elapsed: 12 msec", "msec"),
    ("Elapsed: 40 us", "us"), ("Elapsed: 40 µs", "µs"), ("Elapsed: 40 usec", "usec"),
    ("Elapsed: 40 ns", "ns"), ("Elapsed: 0.02 min", "min"), ("Elapsed: 0.0001 h", "h"),
])
def test_a_time_followed_by_another_unit_than_seconds_is_refused(tmp_path, printed, unit):
    # s28 tester Y3: 'Elapsed: 0.040 ms' read by 'Elapsed: ([0-9.]+)' was an ok 0.040 s run.
    readings = Readings.of(time_regex=r"Elapsed: ([0-9.]+)")
    # s33 tester D8: "capture the number and convert" named no option that converts
    expected = (f"exit 0, but the program's time is followed by {unit!r}: --time-regex "
                "'Elapsed: ([0-9.]+)' reads seconds and nothing converts; match a time the "
                "program prints in seconds, make it print seconds (a wrapper script may "
                "convert), or leave out --time-regex to record the launch's wall time")
    assert readings.time_problem(readings.read(printed + "\n"), 0.5) == expected
    with _stream(tmp_path, printed + "\nbye\n") as out, _stream(tmp_path, "") as err:
        assert readings.time_problem(readings.scan([out, err]), 0.5) == expected


@pytest.mark.parametrize("printed", ["Elapsed: 0.040 s", "Elapsed: 0.040s", "Elapsed: 0.04 sec",
                                     "Elapsed: 0.04 seconds", "Elapsed: 0.04", "Elapsed: 0.04\nms",
                                     "Elapsed: 0.04 hits", "Elapsed: 0.04 mss"])
def test_a_time_in_seconds_or_without_a_unit_is_read(printed):
    readings = Readings.of(time_regex=r"Elapsed: ([0-9.]+)")
    assert readings.time_problem(readings.read(printed + "\n"), 0.5) == ""
    # The regex's own words after the number are the program's too: ' ms' there is refused.
    in_ms = Readings.of(time_regex=r"Elapsed: ([0-9.]+) ms")
    assert "followed by 'ms'" in in_ms.time_problem(in_ms.read("Elapsed: 0.04 ms\n"), 0.5)


def test_a_rewrite_within_one_tick_of_the_file_times_is_read(tmp_path):
    """Was: a program rewriting its output file as long, within one tick of the file system's
    times (Lustre's: 1 s), looked untouched ("matched no number"); its bytes tell it."""
    out = tmp_path / "result.txt"
    out.write_text("time: 1.5 s\n")
    before = FileMark.of(str(out))
    with open(out, "rb") as fh:
        assert before.written_from(fh) is None  # untouched
    out.write_text("time: 2.5 s\n")
    st = os.stat(out)  # the times as a coarse tick leaves them: unchanged
    same_tick = dataclasses.replace(before, stat=(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
                                      st.st_ctime_ns))
    with open(out, "rb") as fh:
        assert same_tick.written_from(fh) == 0  # read whole


@pytest.mark.parametrize("printed, regex, words", [
    ("Time: 1,122 s", r"Time: ([0-9.]+)", "captured '1' of the program's time '1,122': make "
     "its group take the whole number, e.g. ([0-9.,]+)"),
    ("Time: 0,241 s", r"Time: ([0-9.]+)", "captured '0' of the program's time '0,241'"),
    ("time=1.5e-3", r"time=([0-9.]+)", "captured '1.5' of the program's time '1.5e-3': make "
     "its group take the whole number, e.g. ([0-9.eE+-]+)"),
])
def test_a_time_the_regex_cut_inside_its_number_is_refused(tmp_path, printed, regex, words):
    # s33 tester D1: "Time: 1,122" read by 'Time: ([0-9.]+)' was recorded an ok 1.0 s run.
    readings = Readings.of(time_regex=regex)
    assert words in readings.time_problem(readings.read(printed + "\n"), 2.0)
    with _stream(tmp_path, printed + "\nbye\n") as out, _stream(tmp_path, "") as err:
        assert words in readings.time_problem(readings.scan([out, err]), 2.0)


@pytest.mark.parametrize("printed", ["Time: 1.5 s", "Time: 1.5, then 2", "t,1.5,2.5",
                                     "Time: 1,2,3 s"])
def test_a_whole_number_or_a_comma_list_is_not_called_cut(printed):
    readings = Readings.of(time_regex=r"(?:Time: |t,)([0-9.]+)")
    assert "captured" not in readings.time_problem(readings.read(printed + "\n"), 2.0)


def test_a_decimal_comma_is_read_and_noted_once_per_sweep():
    # s33 tester D8: 'Time: ([0-9.,]+)' had said "matched '0,128', which is not a number".
    readings, said = Readings.of(time_regex=r"Time: ([0-9.,]+)"), []
    readings.say = said.append
    for printed in ("Time: 1,122 s", "Time: 0,128 s"):
        found = readings.read(printed + "\n")
        assert readings.time_problem(found, 2.0) == ""
        readings.note_once(found, "ok", "")
    assert found["time"] == 0.128
    assert said == ["note: --time-regex 'Time: ([0-9.,]+)' read the program's time '1,122' as "
                    "1.122 s: a comma between digits is read as a decimal comma, never a "
                    "thousands separator"]


def test_several_different_times_say_once_that_the_last_match_is_recorded(tmp_path):
    # s33 tester D7: setup, solve and total matched one regex; the last was taken silently.
    readings, said = Readings.of(time_regex=r"Time: ([0-9.]+)"), []
    readings.say = said.append
    printed = "Time: 0.300 s (setup)\nTime: 0.100 s (solve)\nTime: 0.400 s (total)\n"
    with _stream(tmp_path, printed) as out, _stream(tmp_path, "") as err:
        found = readings.scan([out, err])
    assert found["time"] == 0.4
    readings.note_once(found, "ok", "")
    readings.note_once(readings.read(printed), "ok", "")
    readings.note_once(readings.read("Time: 0.200 s\nTime: 0.200 s\n"), "ok", "")
    assert said == ["note: --time-regex 'Time: ([0-9.]+)' matched 3 different times in one "
                    "launch's output ('0.300', '0.100', '0.400'); the last match, '0.400', is "
                    "recorded: if it is not the time you mean, add the words around that one "
                    "to the regex"]


def test_a_time_over_the_wall_time_stops_the_sweep_as_the_regexs_reading():
    # s46 tester H2: it was the program's failure (learned as one) though it ran and exited 0
    readings = Readings.of(time_regex=r"TIME=(\S+)")
    found = readings.read("TIME=50\n")
    why = readings.time_problem(found, 0.5, label="app size 4 N1xR1xT1")
    assert why.startswith("exit 0, but the program's own time 50 s")
    with pytest.raises(ConfigError) as err:
        readings.stop_over_wall(found)
    said = str(err.value)
    assert said.startswith(f"app size 4 N1xR1xT1: {why}, or leave out --time-regex to record "
                           "the launch's wall time; a reading of the regex, not a failure of "
                           "the program (it ran, exit 0): nothing was recorded for this "
                           "configuration and the sweep stops"), said
    assert "\n" not in said
    kept = readings.read("TIME=0.4\n")
    assert readings.time_problem(kept, 0.5) == ""
    readings.stop_over_wall(kept)  # a time in its wall: the sweep goes on
    readings.stop_over_wall(None)


def test_a_thread_summed_time_names_the_runs_of_several_threads_it_kept_before():
    """s46 tester H2: Elk's "Timings (CPU seconds)" total, summed over 2 threads, was kept as the
    runtime where it fit under the launch's wall time (start-up included) and made the same
    layout ``failed`` at the next size; the stop names the runs of several threads kept."""
    readings = Readings.of(time_regex=r"total\s+:\s+([0-9.]+)")
    read = readings.read
    for label, ranks, threads, wall in (("elk size 2 N1xR1xT2", 1, 2, 2.07),
                                        ("elk size 2 N1xR1xT2", 1, 2, 2.07),  # a repeat
                                        ("elk size 2 N1xR2xT1", 2, 1, 2.07),
                                        ("elk size 4 N1xR1xT1", 1, 1, 2.07)):
        assert readings.time_problem(read(ELK_TIMINGS.replace("8.03", "1.60")), wall, ranks,
                                     threads, label) == ""
    found = read(ELK_TIMINGS.replace("8.03", "7.19"))
    assert "a CPU time summed over the 2 threads" in readings.time_problem(
        found, 6.42, 1, 2, "elk size 4 N1xR1xT2")
    with pytest.raises(ConfigError) as err:
        readings.stop_over_wall(found)
    why = str(err.value)
    assert why.startswith("elk size 4 N1xR1xT2: exit 0, but the program's own time 7.19 s"), why
    assert why.endswith("the sweep stops; the runs of several threads it read before (elk size 2 "
                        "N1xR1xT2) read the same regex under their wall time, likely the same "
                        "sum: sweep them again into a new --out"), why
