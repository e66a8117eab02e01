"""Framed boxes in a program's output: one message each."""

from __future__ import annotations

from hpcds1mpi.measure.framed_boxes import framed_boxes
from tests.measure.test_program_launch import CP2K_NO_BASIS


def test_a_box_is_its_text_joined_without_frame_art_tag_or_source_location():
    lines = [ln.strip() for ln in CP2K_NO_BASIS.splitlines()]
    (box,) = framed_boxes(lines)
    assert box.message == ("The requested basis set <DZVP-MOLOPT-XX-GTH> for element <O> was "
                           "not found in the basis set files </usr/share/cp2k/BASIS_MOLOPT>")
    assert "[ABORT]" in box.inner and lines[box.first] == lines[box.last] == "*" * 79


def test_only_a_closed_frame_is_a_box():
    rule = "#" * 20
    assert framed_boxes([rule, "# a #", "# b #", rule])[0].message == "a b"
    assert framed_boxes([rule, "# a #", "no frame", rule]) == []  # not framed throughout
    assert framed_boxes([rule, "# a #"]) == []  # never closed
    assert framed_boxes(["*" * 20, "* a *", "#" * 20]) == []  # closed by another character
    assert framed_boxes(["%" * 20, "  Error in routine x (1):", "%" * 20]) == []  # QE's block
    two = framed_boxes(["*" * 20, "* a *", "*" * 20, "* b *", "*" * 20])  # a shared rule
    assert [b.message for b in two] == ["a", "b"]
