"""How the text --time-regex captured becomes seconds (s33 tester D1, D7, D8)."""

from __future__ import annotations

import math
import re

import pytest

from hpcds1mpi.measure.time_reading import (cut_number, seconds_text, several_times_note,
                                            time_value)


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
