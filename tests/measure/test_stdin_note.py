"""The note for a program that read its input from stdin, /dev/null (s33 tester D9)."""

from __future__ import annotations

import subprocess
import sys

from hpcds1mpi.measure.program_launch import reason_line
from hpcds1mpi.measure.stdin_note import NOTE, stdin_note


def test_a_python_program_reading_stdin_gets_the_note_with_both_ways_to_give_input():
    # the real program's failure, under a sweep's stdin
    run = subprocess.run([sys.executable, "-c", "n = int(input('size? '))"],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True)
    error = f"exit code {run.returncode}: {reason_line(run.stdout, run.stderr)}"
    assert "EOFError" in error and stdin_note(error) == NOTE
    assert "'exec ./app < in.txt'" in NOTE and "./app {size} in.txt" in NOTE
    # a wrapper that already redirects is told its file ended (s39 tester A1: it was only
    # sent to write the wrapper it had)
    assert "if it already reads a file that way, that file ended before" in NOTE


def test_other_failures_get_no_note():
    assert stdin_note("exit code 1: ERROR: Cannot open input script in.ljj") == ""
    assert stdin_note("") == ""


def test_an_end_of_input_in_a_file_the_error_names_gets_no_note():
    """s47 tester K3: MPB's syntax error in its .ctl file, named with its place, had the note
    sending the user to stdin."""
    assert stdin_note("exit code 1: syntax.ctl:3:1: unexpected end of input while searching "
                      "for: )") == ""
    for error in ("exit code 1: /tmp/x/in.yaml, line 4: unexpected end of stream",
                  "exit code 1: Error reading in.json: unexpected end of file",
                  "exit code 2: At line 5 of file read.f90 (unit = 10, file = 'in.dat') "
                  "Fortran runtime error: End of file"):
        assert stdin_note(error) == "", error
    # stdin named, or no file named: the note, as before
    for error in ("exit code 2: At line 5 of file read.f90 (unit = 5, file = 'stdin') Fortran "
                  "runtime error: End of file", "exit code 1: <stdin>:1:1: unexpected end of "
                  "input", "exit code 2: Fortran runtime error: End of file",
                  "exit code 1: Exception in thread \"main\" java.util.NoSuchElementException"):
        assert stdin_note(error) == NOTE, error


def test_a_sweep_of_a_program_reading_stdin_says_the_note_once(tmp_path):
    from tests.helpers import run_cli

    app = tmp_path / "app"
    app.write_text(f"#!{sys.executable}\nimport sys\nn = int(input('size? '))\n")
    app.chmod(0o755)
    run = run_cli(["sweep", "--command", "./app {size}", "--label", "s", "--sizes", "1,2",
                   "--max-repeats", "1", "--ranks-per-node", "1", "--no-progress", "--out",
                   "s.h5"], cwd=tmp_path, timeout=120)
    assert run.stderr.count(NOTE) == 1, run.stderr
    assert "failed: exit code 1: EOFError: EOF when reading a line" in run.stderr
