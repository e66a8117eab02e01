"""Framed boxes in a program's output: one message each, its text lines joined.

A framed box is a rule of one frame character (``*``, ``#`` or ``%``, 10 or more), lines that
start and end with that character, and the same rule again. CP2K writes every abort so, its
message wrapped beside an ASCII-art figure::

     *******************************************************************************
     *   ___                                                                       *
     *  /   \\                                                                      *
     * [ABORT]                                                                     *
     *  \\___/    The requested basis set <DZVP-MOLOPT-XX-GTH> for element <O> was  *
     *    |       not found in the basis set files </usr/share/cp2k/BASIS_MOLOPT>  *
     *  O/|                                                                        *
     * /| |                                                                        *
     * / \\                                          aobasis/basis_set_types.F:1509 *
     *******************************************************************************

Read line by line, such a box gave half a sentence ("not found in the basis set files ...")
or its art ("* [ABORT] ... *") as a failure's reason (s28 tester T). :func:`framed_boxes`
gives its message whole, without the frame, the figure, its ``[TAG]`` or a line that only
names a source location.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The top or bottom of a framed box: one frame character, 10 or more times.
BOX_RULE = re.compile(r"^([*#%])\1{9,}$")
#: The ASCII art at the start of a box line: CP2K's figure beside its message ("___",
#: "\___/", "O/|", "/| |", "/ \") and its tag ("[ABORT]", "[WARNING]"); a word of the
#: message is never art (it has a letter other than the figure's "O").
BOX_ART = re.compile(r"^(?:(?:[\\/|_O]*[\\/|_][\\/|_O]*|\[[A-Z]+\])(?:\s+|$))+")
#: A box line that only names where in the program's source it stopped
#: ("aobasis/basis_set_types.F:1509"): no help to the user.
SOURCE_LOCATION = re.compile(r"^[\w./-]+\.\w+:\d+$")


@dataclass(frozen=True)
class FramedBox:
    """One box: ``first`` / ``last`` index of its rules in the lines, ``message`` (its text
    joined, art and frame removed) and ``inner`` (every line inside the frame, art and tag
    kept, joined: what tells an error box, "[ABORT]", from another)."""

    first: int
    last: int
    message: str
    inner: str


def _message(inner_lines: list[str]) -> str:
    """The text of a box's inner lines, art, tags and source locations removed, joined with
    single spaces ("SCF , File" as "SCF, File": CP2K pads before its commas)."""
    words = []
    for line in inner_lines:
        text = BOX_ART.sub("", line).strip()
        if text and not SOURCE_LOCATION.match(text):
            words.append(text)
    return re.sub(r"\s+([,;.])", r"\1", " ".join(" ".join(words).split()))


def framed_boxes(lines: list[str]) -> list[FramedBox]:
    """The framed boxes of ``lines`` (stripped lines of a program's output), in order."""
    boxes, i = [], 0
    while i < len(lines):
        rule = BOX_RULE.match(lines[i])
        if rule is None:
            i += 1
            continue
        frame, j = rule.group(1), i + 1
        while j < len(lines) and not BOX_RULE.match(lines[j]) and len(lines[j]) >= 2 \
                and lines[j][0] == frame and lines[j][-1] == frame:
            j += 1
        if j > i + 1 and j < len(lines) and BOX_RULE.match(lines[j]) and lines[j][0] == frame:
            inner = [ln[1:-1].strip() for ln in lines[i + 1:j]]
            boxes.append(FramedBox(i, j, _message(inner), " ".join(inner)))
        i = j  # a bottom rule may be the top of the next box
    return boxes
