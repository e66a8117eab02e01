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

An error section is framed by two rules with a title in them, each of its lines often tagged
with the rank that wrote it. PETSc writes every error so::

    [0]PETSC ERROR: --------------------- Error Message ------------------------------------
    [0]PETSC ERROR: Argument out of range
    [0]PETSC ERROR: Partition in x direction is too fine! 2 4
    [0]PETSC ERROR: See https://petsc.org/release/faq/ for trouble shooting.
    [0]PETSC ERROR: Petsc Release Version 3.18.5, Feb 27, 2023
    [0]PETSC ERROR: #1 DMSetUp_DA_2D() at ./src/dm/impls/da/da2.c:257
    [0]PETSC ERROR: PETSc Option Table entries:
    [0]PETSC ERROR: -da_grid_x 2
    [0]PETSC ERROR: ----------------End of Error Message -------send entire error message ...

Its message is the lines between the title and the first line of boilerplate (a link alone or
"See <link>", a traceback frame, a warning about something else, a rule): read line by line,
its last "title" ("PETSc Option Table entries:") and the options under it were the reason (s29
tester C4). A message line with a link in it is still a message: PETSc's "Unknown type. Check
for miss-spelling or missing package: https://..." had ended the message before it began
(s29 V2-2). :func:`framed_boxes` gives both kinds.
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
    """The framed boxes and error sections of ``lines`` (stripped lines of a program's
    output), in order."""
    return sorted(_boxes(lines) + _sections(lines), key=lambda box: box.first)


def _boxes(lines: list[str]) -> list[FramedBox]:
    """The boxes framed by rules of one frame character (CP2K's)."""
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


#: A rank's tag before each line of a section ("[0]PETSC ERROR: ", "[3]"), and the rule with a
#: title that opens an error section ("--------------------- Error Message -------").
SECTION_HEADER = re.compile(r"^(?P<tag>\[\d+\](?:[A-Za-z][\w ]*:)?\s*)?[-=]{3,}\s*"
                            r"(?P<title>[^-=\s][^-=]*?)\s*[-=]{3,}.*$")
#: The title of the rule that closes a section ("End of Error Message").
SECTION_END = re.compile(r"^End of\b", re.IGNORECASE)
#: A section's title that opens an error: its message is the reason.
SECTION_ERROR = re.compile(r"\b(error|fatal|abort)", re.IGNORECASE)
#: The first line of a section's boilerplate, which ends its message: a traceback frame ("#1
#: DMSetUp() at da2.c:257"), a warning about something else (PETSc's unused options), a rule;
#: or a link line (:data:`LINK`, :data:`SEE_LINK`).
SECTION_BOILERPLATE = re.compile(r"^#\d+\s|^WARNING\b|^[-=*]{3,}", re.IGNORECASE)
#: A link in a line.
LINK = re.compile(r"https?://\S+", re.IGNORECASE)
#: A line that points at a link, nothing of its own: "See https://petsc.org/release/faq/ for
#: trouble shooting.", "Please visit ...", "For more information see ...".
SEE_LINK = re.compile(r"^(?:please\s+)?(?:see|visit|refer to|consult|"
                      r"for (?:more|further) (?:information|details|help))\b", re.IGNORECASE)
#: Message lines a section's reason joins (its title first).
SECTION_MESSAGE_LINES = 4


def _section_tag(tag: str) -> re.Pattern:
    """The tag of a section's lines, any rank's ("[0]PETSC ERROR: " as "[N]PETSC ERROR:")."""
    label = re.sub(r"^\[\d+\]", "", tag).strip()
    return re.compile(r"^\[\d+\]" + re.escape(label) + r"\s*" if tag else "")


def _sections(lines: list[str]) -> list[FramedBox]:
    """The error sections of ``lines``: a header rule with an error title; each following
    line carrying the header's tag (of any rank) up to the closing "End of" rule. A section of
    untagged lines needs its closing rule (else nothing tells where it ends)."""
    found, i, unclosed = [], 0, False
    while i < len(lines):
        header = SECTION_HEADER.match(lines[i])
        if header is None or SECTION_END.match(header.group("title")) \
                or not SECTION_ERROR.search(header.group("title")) \
                or (unclosed and not header.group("tag")):
            i += 1
            continue
        tag = _section_tag(header.group("tag") or "")
        inner, j, closed = [], i + 1, False
        while j < len(lines) and (tagged := tag.match(lines[j])):
            text = lines[j][tagged.end():].strip()
            end = SECTION_HEADER.match(text)
            if end and SECTION_END.match(end.group("title")):
                closed = True
                break
            inner.append(text)
            j += 1
        if not (closed or header.group("tag")) or not inner:
            # an untagged section runs to the first "End of" rule: none up to the end here,
            # none for any later untagged header either; each scanning again to the end made
            # 64 KB of "---error---" lines take a minute (s29 tester H2)
            unclosed = unclosed or not (closed or header.group("tag"))
            i += 1
            continue
        message = []
        for text in inner:
            if _boilerplate(text):
                break
            if text:
                message.append(text)
        found.append(FramedBox(i, j if closed else j - 1,
                               _joined(message[:SECTION_MESSAGE_LINES]),
                               " ".join([header.group("title"), *inner])))
        i = j + 1
    return found


def _boilerplate(text: str) -> bool:
    """Whether a section's line is boilerplate: :data:`SECTION_BOILERPLATE`, or a line with a
    link that is the link alone (no word left without it) or points at it (:data:`SEE_LINK`);
    a line that says more than its link is a message (s29 V2-2)."""
    if SECTION_BOILERPLATE.search(text):
        return True
    if not LINK.search(text):
        return False
    return bool(SEE_LINK.match(text)) or re.search(r"\w", LINK.sub("", text)) is None


def _joined(message: list[str]) -> str:
    """A section's message lines as one: a line that goes on in lower case continues its
    sentence; another is a sentence of its own ("Argument out of range; Partition in x
    direction is too fine! 2 4")."""
    text = ""
    for line in message:
        if not text:
            text = line
        elif line[0].islower() or text[-1] in ".!?:;,":
            text = f"{text} {line}"
        else:
            text = f"{text}; {line}"
    return text
