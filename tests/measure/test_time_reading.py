"""How the text --time-regex captured becomes seconds (s33 tester D1, D7, D8), and what its
matches say once (s46 tester G5)."""

from __future__ import annotations

import math
import re

import pytest

from hpcds1mpi.measure.readings import Readings
from hpcds1mpi.measure.time_reading import (copies_note, cut_number, seconds_text,
                                            several_times_note, time_value)


@pytest.mark.parametrize("text, seconds", [("1,122", 1.122), ("-0,5", -0.5), ("2.5", 2.5),
                                           ("3", 3.0)])
def test_one_comma_and_no_dot_is_a_decimal_comma(text, seconds):
    assert time_value(text) == seconds
    assert seconds_text(text)[1] == ("," in text)


@pytest.mark.parametrize("text", ["1,2,3", "1.234,5", "abc", None])
def test_anything_else_is_no_number(text):
    assert math.isnan(time_value(text))


@pytest.mark.parametrize("line, regex, whole", [
    ("Time: 1,122 s", r"Time: ([0-9.]+)", "1,122"),
    ("Time: 1.122 s", r"Time: ([0-9]+)", "1.122"),
    ("Time: 1.5e-03", r"Time: ([0-9.]+)", "1.5e-03"),
    ("Time: 12 s", r"Time: (\d)", "12"),
    ("Time: 1.5 s", r"Time: ([0-9.]+)", ""),
    ("Time: 1,2,3", r"Time: ([0-9]+)", ""),      # a comma list, no decimal comma
    ("t,1.5,2.5", r"t,([0-9.]+)", ""),           # the number already has its decimals
    ("Time: 1.5, 2", r"Time: ([0-9.]+)", ""),
])
def test_a_group_that_stopped_inside_a_number_is_told(line, regex, whole):
    assert cut_number(re.search(regex, line)) == whole


def test_the_several_times_note_names_the_count_and_the_last_match():
    note = several_times_note(["0.3", "0.1", "0.4", "0.5", "0.6"], "0.6", 5, "--time-regex 'x'")
    assert "matched 5 different times" in note and "'0.5', ..." in note
    assert "the last match, '0.6', is recorded" in note and "\n" not in note


#: Two 1-rank copies of ``nrniv tiny.hoc`` (no -mpi) under a 2-rank launch (s46 tester G5).
NRN_COPIES = ("NEURON -- VERSION 8.2.2\npsolve time 0.0899999 s\nnhost=1\n"
              "NEURON -- VERSION 8.2.2\npsolve time 0.11 s\nnhost=1\n")


def _notes(readings: Readings, out: str, ranks: int) -> list[str]:
    said = []
    readings.say = said.append
    readings.note_once(readings.read(out), "ok", "", 1.0, [], ("x", True), (ranks, (out, "")))
    return [note for note in said if "resolution" not in note]  # the coarse timer's aside


def test_a_time_matched_once_per_rank_says_the_ranks_may_be_copies():
    """Was (s46 tester G5): nrniv without -mpi ran two 1-rank copies at 2 ranks; the note said
    "matched 2 different times ... add the words around that one to the regex"."""
    said = _notes(Readings.of(time_regex=r"psolve time ([0-9.]+)"), NRN_COPIES, 2)
    assert said == [
        "note: --time-regex 'psolve time ([0-9.]+)' matched once per rank, in 2 lines alike "
        "('psolve time 0.0899999 s', ...): the 2 ranks may be independent copies of the "
        "program, each a 1-rank job printing its own time; check that the program joins MPI "
        "(NEURON's nrniv needs -mpi) and give --ranks-regex with the rank count it prints to "
        "have that checked; the last match, '0.11', is recorded"], said
    # copies that printed one time alike are as suspect
    assert "may be independent copies" in _notes(
        Readings.of(time_regex=r"psolve time ([0-9.]+)"),
        NRN_COPIES.replace("0.0899999", "0.11"), 2)[0]


@pytest.mark.parametrize("out, ranks, ranks_regex", [
    (NRN_COPIES, 2, r"nhost=(\d+)"),            # its ranks' count checked: one job
    (NRN_COPIES, 3, None),                       # not once per rank
    (NRN_COPIES, 1, None),                       # one rank is one job
    ("psolve time 0.3 s (setup)\ntotal time 0.4 s\n", 2, None),  # lines not alike
])
def test_times_not_once_per_rank_in_lines_alike_keep_the_several_times_note(out, ranks,
                                                                            ranks_regex):
    readings = Readings.of(time_regex=r"time ([0-9.]+)", ranks_regex=ranks_regex)
    said = _notes(readings, out, ranks)
    assert len(said) == 1 and "different times" in said[0] and "copies" not in said[0], said


def test_a_cut_output_is_no_count_of_lines():
    """A full 64 KiB tail may have lost a copy's line before it (s45 review RV5)."""
    import regex

    out = "x" * 2**16 + "\ntime 1.0\ntime 1.1\n"
    assert copies_note(regex.compile(r"time ([0-9.]+)"), 2, (out, ""), "1.1", "r") == ""


def test_a_real_sweep_of_copies_keeps_its_run_and_says_they_may_be_copies(tmp_path):
    """s46 tester G5's run, with a program that never starts MPI: each rank prints its time."""
    import shutil

    from tests.helpers import executable_script, run_cli

    if shutil.which("mpirun.openmpi") is None:
        pytest.skip("Open MPI's mpirun.openmpi is missing")
    program = executable_script(tmp_path, "tiny.sh", '#!/bin/sh\necho "psolve time '
                                '0.0$((OMPI_COMM_WORLD_RANK + 5)) s"\necho nhost=1\n')
    done = run_cli(["sweep", "--command", program, "--label", "tinyhoc", "--sizes", "1",
                    "--ranks-per-node", "2", "--threads", "1", "--no-progress",
                    "--time-regex", r"psolve time ([0-9.]+)",
                    "--mpiexec", shutil.which("mpirun.openmpi"), "--out", "g5.h5"],
                   cwd=tmp_path, timeout=120,
                   env={"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    assert done.returncode == 0, done.stderr
    assert "the 2 ranks may be independent copies" in done.stderr, done.stderr
    assert "add the words around" not in done.stderr and "(ok 1;" in done.stdout + \
        done.stderr, done.stderr
