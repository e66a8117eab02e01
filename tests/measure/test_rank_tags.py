"""Rank tags before a parallel program's lines, and the trailers under its errors."""

from __future__ import annotations

import pytest

from hpcds1mpi.measure.rank_tags import ERROR_TRAILER, FATAL_TRAILER, untagged


@pytest.mark.parametrize("line, bare", [
    ("[0] --> FOAM FATAL ERROR: ", "--> FOAM FATAL ERROR:"),  # OpenFOAM (s29 tester A5)
    ("[0] ", ""),  # a bare tag: a blank line, which ends a paragraph
    ("[12]PETSC ERROR: Caught signal number 11 SEGV", "PETSC ERROR: Caught signal number 11 SEGV"),
    ("[1,0]<stderr>: ERROR: cannot open in.lj", "ERROR: cannot open in.lj"),  # --tag-output
    ("[vm:20017] *** Process received signal ***", "[vm:20017] *** Process received signal ***"),
    ("[ 0] /lib/libc.so.6(+0x3c050)", "[ 0] /lib/libc.so.6(+0x3c050)"),  # a backtrace frame
    ("x[0] = 1", "x[0] = 1"),
])
def test_a_rank_tag_is_removed_and_nothing_else(line, bare):
    assert untagged(line) == bare


def test_openfoams_trailers_are_told_from_its_messages():
    for line in ("FOAM exiting", "FOAM aborting", "FOAM parallel run exiting"):
        assert ERROR_TRAILER.match(line)
    assert not ERROR_TRAILER.match("FOAM exiting because the mesh is bad")


def test_a_considered_fatal_trailer_is_told_from_a_message():
    """s29 V1-3: OpenFOAM's "For debug level (= 2) > 1 this is considered fatal" says only
    that the line above it is an error."""
    for line in ("For debug level (= 2) > 1 this is considered fatal", "This is considered fatal.",
                 "which is considered as fatal"):
        assert FATAL_TRAILER.search(line), line
    assert not FATAL_TRAILER.search("considered fatal errors: 3")
