"""The lines under a program's error line that explain it or advise on it, closing its output."""

from __future__ import annotations

import pytest

from hpcds1mpi.measure.error_explanation import EXPLAINED_LINES, explanation

ELK = ["Error(readinput): error reading from elk.in", "Problem occurred in 'ngridk' block",
       "Check input convention in manual"]


def test_elk_explanation_and_advice_are_the_error_lines_closing_lines():
    assert explanation(ELK, 0, 2) == ELK[1:]


def test_an_error_line_that_is_the_last_has_an_empty_explanation():
    assert explanation(ELK, 2, 2) == []


@pytest.mark.parametrize("after", [
    "Done.", "Result: E=-1.0", "Problem size: 1000", "Using default values",
    "dt must be positive, resetting to 0.01", "0 errors: input not found is fine",
])
def test_a_line_of_results_a_closing_word_or_going_on_is_no_explanation(after):
    assert explanation(["Error: x", "Problem occurred in block a", after], 0, 2) is None


def test_more_lines_than_an_explanation_are_none():
    lines = ["Error: x"] + ["Check the manual"] * (EXPLAINED_LINES + 1)
    assert explanation(lines, 0, len(lines) - 1) is None


@pytest.mark.parametrize("after", [
    "Computed energy: -76.0267 (expected -76.0267)", "Total energy -76.0267 as expected",
    "Invalid samples: 0", "Missing samples: 0", "Unknown atom types: 0",
    "See results.h5 for the output", "Check run.log for the timings",
    "Check results: all values within tolerance", "CUDA devices not found, running on CPU",
    "Plugin is optional; see the manual to enable HDF5 output",
    "LC_ALL must be set to a valid locale",
])
def test_a_result_tally_pointer_or_going_on_under_an_error_is_no_explanation(after):
    # RW2: these words made a good run's mid-run error its ending error.
    assert explanation(["Error: could not write plot.png", after], 0, 1) is None
