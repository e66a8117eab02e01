"""Text from a program's output or a file made safe to print: a sweep's reasons and notes,
``telemetry show``'s columns (s29 tester H5)."""

from __future__ import annotations

import sys

from hpcds1mpi.measure.printable import printable

#: The tester's failing program's line (s29 H5): clears the screen, sets the window title.
HOSTILE_REASON = "ERROR: bad \x1b[2J\x1b]0;PWN\x07 input\r"
#: The tester's unused option: recolours, sets the title, backspaces over what follows.
HOSTILE_OPTION = "Option left: name:-ksp\x1b[31mRED\x1b]0;TITLE\x07\x08\x08 value: cg"


def _controls(text: str) -> set[str]:
    """The C0 (but newline), DEL and C1 characters of ``text``."""
    return {ch for ch in text if (ord(ch) < 32 and ch != "\n") or 0x7F <= ord(ch) <= 0x9F}


def test_control_characters_are_escaped_visibly_and_printable_text_kept():
    assert printable(HOSTILE_REASON) == "ERROR: bad \\x1b[2J\\x1b]0;PWN\\x07 input\\r"
    assert printable("a\x7fb\x9bc\u202ed\x00") == "a\\x7fb\\x9bc\\u202ed\\x00"  # DEL, C1, bidi
    assert printable("tab\there", keep="\t") == "tab\there" and printable("\t") == "\\t"
    assert printable("café 3.2 µs ✓") == "café 3.2 µs ✓"
    assert printable("f\udcffe") == "f\\xffe"  # a file name's byte that is not UTF-8
    assert printable(printable(HOSTILE_REASON)) == printable(HOSTILE_REASON)  # idempotent
    assert printable(3) == "3"


def test_a_programs_hostile_reason_and_note_reach_neither_terminal_nor_telemetry(tmp_path):
    """Was (s29 tester H5): the sweep printed "failed: exit code 3: ERROR: bad ^[[2J^[]0;PWN^G
    input^M" as the program wrote it, and stored it so in the ``error`` column; the unused-
    options note likewise."""
    from hpcds1mpi.records import telemetry
    from tests.helpers import run_cli

    (tmp_path / "bad.py").write_text(f"import sys\nsys.stderr.write({HOSTILE_REASON + chr(10)!r})"
                                     "\nsys.exit(3)\n")
    (tmp_path / "opt.py").write_text(f"print({HOSTILE_OPTION!r})\n")
    for name, code in (("bad", 1), ("opt", 0)):
        proc = run_cli(["sweep", "--command", f"{sys.executable} {name}.py {{size}}",
                        "--label", name, "--sizes", "1", "--ranks-per-node", "1",
                        "--min-repeats", "1", "--max-repeats", "1", "--min-time", "0",
                        "--no-progress", "--out", f"{name}.h5"], cwd=tmp_path, timeout=60)
        assert proc.returncode == code, proc.stderr
        assert not _controls(proc.stderr + proc.stdout), proc.stderr
        runs = telemetry.read_runs(tmp_path / f"{name}.h5")
        assert not _controls("".join(runs["error"])), list(runs["error"])
    assert list(runs["status"]) == ["ok"]
    assert "did not use option -ksp\\x1b[31mRED\\x1b]0;TITLE\\x07\\x08\\x08, so" in proc.stderr
    error = telemetry.read_runs(tmp_path / "bad.h5")["error"].iloc[0]
    assert error == "exit code 3: ERROR: bad \\x1b[2J\\x1b]0;PWN\\x07 input"  # "\r": stripped


def test_a_fail_regex_line_and_a_programs_own_reason_are_escaped():
    """The line --fail-regex matched and a missing reading's program reason were printed and
    stored raw (s29 tester H5, after FH2's fix of the failure reasons)."""
    from hpcds1mpi.measure.readings import Readings

    readings = Readings.of(time_regex=r"time: ([0-9.]+) s", fail_regex="NOT converged")
    said = readings.fail_problem({"fail_line": "SCF NOT converged \x1b]0;PWN\x07 \x9b2J"})
    assert "\x1b" not in said and "\x07" not in said and "\x9b" not in said
    assert "\\x1b]0;PWN\\x07" in said
    missing = readings.time_problem({"time": float("nan"), "said": "need \x1b[2J more"}, 1.0)
    assert "\x1b" not in missing and "\\x1b[2J" in missing, missing


def test_a_long_reason_is_cut_at_a_word_and_says_so():
    # s37 tester G4/G5: "File '../../md.tpr' does not ex" had been cut mid-word, silently
    from hpcds1mpi.measure.printable import clipped

    text = "Error in user input: File '../../md.tpr' does not exist or is not accessible"
    assert clipped(text, 200) == text
    cut = clipped(text, 48)
    assert cut == "Error in user input: File '../../md.tpr' [...]" and len(cut) <= 48
    assert clipped("x" * 50, 20) == "x" * 14 + " [...]"
