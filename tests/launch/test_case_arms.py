"""A ``case`` arm's pattern cut off a line's words (:mod:`hpcds1mpi.launch.case_arms`)."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch.case_arms import CaseArms
from hpcds1mpi.launch.shell_words import words


def _cut(*lines: str) -> list[list[str]]:
    arms = CaseArms()
    return [[w.raw for w in arms.cut(words(line, 0, shell=True))] for line in lines]


@pytest.mark.parametrize("lines, read", [
    (("case $P in", "  big) export A=4 ;;", "  (x|y) srun ./a;;", "esac"),
     [["case", "$P", "in"], [";", "export", "A=4", ";;"], [";", "srun", "./a", ";;"],
      ["esac"]]),
    (("case x in x) export A=4 ;; esac", "echo x)"),
     [["case", "x", "in", ";", "export", "A=4", ";;", "esac"], ["echo", "x)"]]),
    (("case x in", "  a | b)", "    ./a", "    ;;", "esac", "./b y)"),
     [["case", "x", "in"], [";"], ["./a"], [";;"], ["esac"], ["./b", "y)"]]),
    # an arm without `;;` before esac; a nested case; `case` as an argument
    (("case x in a) case y in b) ./a;; esac", "  ./c", "esac", "echo case x in y)"),
     [["case", "x", "in", ";", "case", "y", "in", ";", "./a", ";;", "esac"], ["./c"],
      ["esac"], ["echo", "case", "x", "in", "y)"]]),
])
def test_an_arms_pattern_is_cut_to_a_separator_and_nothing_else(lines, read):
    """s46 review RV3: the pattern was read as the command's first word."""
    assert _cut(*lines) == read


def test_a_pattern_not_read_leaves_the_words_in_their_order():
    """``x)echo hi;;`` glues the command to its pattern: its words stay as written."""
    assert _cut("case x in", "  x)echo hi;;", "  y) ./a;;") == [
        ["case", "x", "in"], ["x)echo", "hi", ";;"], [";", "./a", ";;"]]


def test_the_separator_spans_the_pattern():
    separator = CaseArms().cut(words("case x in (a | b) ./a ;; esac", 5, shell=True))[3]
    assert (separator.raw, separator.start, separator.end) == (";", 15, 22)  # `(a | b)`
