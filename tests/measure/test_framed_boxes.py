"""Framed boxes in a program's output: one message each."""

from __future__ import annotations

from hpcds1mpi.measure.framed_boxes import framed_boxes
from tests.measure.test_program_launch import CP2K_NO_BASIS
from tests.scaling import best_seconds


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


def test_an_error_section_is_its_message_up_to_its_first_boilerplate_line():
    """s29 tester C4: PETSc's error section (real text), its rank tags, link, traceback,
    option table and closing rule left out."""
    from tests.measure.test_program_launch import OUTPUTS

    lines = [ln.strip() for ln in
             (OUTPUTS / "petsc-partition-too-fine.stderr").read_text().splitlines()]
    (section,) = framed_boxes(lines)
    assert section.message == "Argument out of range; Partition in x direction is too fine! 2 4"
    assert lines[section.first].endswith("Error Message " + "-" * 62)
    assert "End of Error Message" in lines[section.last] and section.last == len(lines) - 2
    assert "-da_grid_x 2" in section.inner and "Error Message" in section.inner


def test_a_message_line_with_a_link_is_a_message_and_a_link_alone_is_boilerplate():
    """Was (s29 V2-2): PETSc's "Unknown type. Check for miss-spelling or missing package:
    https://..." (real text) ended the message before it began: no message at all."""
    from tests.measure.test_program_launch import OUTPUTS

    lines = [ln.strip() for ln in
             (OUTPUTS / "petsc-unknown-pc-type.stderr").read_text().splitlines()]
    (section,) = framed_boxes(lines)
    assert section.message == ("Unknown type. Check for miss-spelling or missing package: "
                               "https://petsc.org/release/install/install/#external-packages; "
                               "Unable to find requested PC type jacobii")
    head = "[0]LIB: ----- Error Message -----"
    for link in ("See https://x.org/faq for help.", "https://x.org/faq", "<http://x.org>",
                 "see http://x.org/a and http://x.org/b", "Please see https://x.org"):
        found = framed_boxes([head, "[0]LIB: Out of range", f"[0]LIB: {link}", "[0]LIB: more"])
        assert found[0].message == "Out of range", link


def test_a_section_needs_an_error_title_and_where_untagged_its_closing_rule():
    head, end = "----- Error Message -----", "----- End of Error Message -----"
    assert framed_boxes([head, "bad input", "went on", end])[0].message == "bad input went on"
    assert framed_boxes([head, "bad input", "more output"]) == []  # untagged: never closed
    assert framed_boxes(["----- Timing Summary -----", "x", end]) == []  # no error title
    tagged = framed_boxes(["[2]LIB: " + head, "[2]LIB: Out of range", "[2]LIB: See http://x",
                           "program output"])  # tagged: ends at the first untagged line
    assert [(b.message, b.first, b.last) for b in tagged] == [("Out of range", 0, 2)]


def test_an_unclosed_untagged_title_repeated_is_read_in_linear_time():
    """Was (s29 tester H2): each untagged "---error---" scanned to the end for its "End of"
    rule: 2,000 / 4,000 / 8,000 such lines took 2.7 / 11.3 / 43.9 s."""
    small, large = ["---error---"] * 2000, ["---error---"] * 8000
    assert framed_boxes(large) == []  # never closed: no section, as before
    took = (best_seconds(lambda: framed_boxes(small), 5),
            best_seconds(lambda: framed_boxes(large), 5))
    assert took[1] < 1.0 and took[1] < 8 * max(took[0], 1e-3), took  # 4x the lines
    # the first untagged header with a closing rule after it still gets its section
    found = framed_boxes(["---error---", "a", "--- End of error ---", "---error---", "x"])
    assert [(b.message, b.first, b.last) for b in found] == [("a", 0, 2)]
