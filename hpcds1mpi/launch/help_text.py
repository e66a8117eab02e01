"""Open MPI's help text: the boxed explanation its launcher and library print on a failure.

Open MPI's show_help (OPAL, ORTE, PMIx, PRRTE) frames each message between two rules of
exactly 74 dashes::

    --------------------------------------------------------------------------
    Your job has requested more processes than the ppr for
    this topology can support:

      App: true
      ...
    --------------------------------------------------------------------------

Its first paragraph says what happened, wrapped over lines; the rest is detail and advice.
:func:`help_titles` gives that paragraph joined, for a launch's reason (measure's
``program_launch``) and a failed launch probe (:mod:`hpcds1mpi.launch.probe`) alike. What a
launcher writes is read as text by one rule, :func:`launcher_text`, for both.
"""

from __future__ import annotations

import re

#: The rule above and below Open MPI's help text: exactly 74 dashes. A program's own framed
#: error (GROMACS: 55 dashes) is not help text.
HELP_RULE = re.compile(r"^-{74}$")
#: A line of punctuation only: the rules around Open MPI's help text, hydra's "=====" box,
#: GROMACS's fatal error, Quantum ESPRESSO's "%%%%" error block.
RULE_LINE = re.compile(r"^\s*[-=*#~_+%]{3,}\s*$")
#: Characters of a help text's first paragraph kept (a reason is one line).
TITLE_CHARS = 300
#: A line of hydra's error stack (MPICH's, Intel MPI's mpiexec and its proxies): "[mpiexec@vm]
#: HYDU_create_process (utils/launch/launch.c:73): execvp error on file ...". Hydra prints the
#: stack cause first; the lines after it only pass the error up ("process manager error
#: waiting for completion"). Group 1: its host tag, group 2: the message.
HYDRA_STACK = re.compile(r"^\s*\[((?:mpiexec|proxy)[^\]\s]*@[^\]\s]+)\]\s+\S+\s+"
                         r"\([^()\s]+:\d+\):\s*(.*?)\s*$")


def launcher_text(raw: bytes | str | None) -> str:
    """A launcher's output (or a program's under it) as text: UTF-8, a byte that is none
    replaced, without NUL characters. Open MPI 5's prterun ends its stderr with its C string's
    terminating NUL (two inside an allocation), which had been the last line and so the
    reason of a failed launch: "exit code 7: \\x00" in the sweep (s40 tester A1), "(exit 1:
    \\x00)" from the 2-rank and rank-host probes (s40 review G1); text never holds one."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw or ""
    return text.replace("\0", "")


def help_spans(lines: list[str]) -> list[tuple[int, int]]:
    """(top rule, bottom rule) indices of each help text in ``lines`` (stripped lines)."""
    rules = [i for i, ln in enumerate(lines) if HELP_RULE.match(ln)]
    return list(zip(rules[::2], rules[1::2]))


#: The most lines of detail kept after a first paragraph that ends in ":".
DETAIL_LINES = 4


def _first_paragraph(lines: list[str]) -> str:
    """The first paragraph of ``lines`` (from the first non-blank line to the next blank one),
    joined with single spaces and cut at :data:`TITLE_CHARS`; one that ends in ":" with the
    short paragraph it introduces ("...unable to create the desired directory: Directory:
    /tmp/ro/ompi.vm.0 Error: Read-only file system": it had stopped at the colon, s36 tester
    E6)."""
    paragraphs: list[list[str]] = [[]]
    for ln in lines:
        if ln:
            paragraphs[-1].append(ln)
        elif paragraphs[-1]:
            if len(paragraphs) == 2 or not paragraphs[0][-1].endswith(":"):
                break
            paragraphs.append([])
    said = paragraphs[0]
    if len(paragraphs) == 2 and 0 < len(paragraphs[1]) <= DETAIL_LINES:
        said = said + paragraphs[1]
    text = " ".join(said)
    return text if len(text) <= TITLE_CHARS else text[:TITLE_CHARS - 3].rstrip() + "..."


def help_titles(text: str) -> list[str]:
    """The first paragraph of each Open MPI help text in ``text``, joined: what happened
    ("Your job has requested more processes than the ppr for this topology can support:").

    Before, only its first line was kept, cut mid-sentence: "Your job has requested more
    processes than the ppr for" (s29 tester A5); and before that, a launch that printed only
    help text got its last line: "therefore will terminate the job."."""
    lines = [ln.strip() for ln in text.splitlines()]
    return [title for a, b in help_spans(lines) if (title := _first_paragraph(lines[a + 1:b]))]


def hydra_cause(text: str) -> str:
    """The cause of hydra's error stack in ``text``: its first line's message after its host
    tag ("[mpiexec@vm] execvp error on file /x/hydra_pmi_proxy (No such file or directory)");
    "" where ``text`` has no such stack."""
    for line in text.splitlines():
        if (match := HYDRA_STACK.match(line)) and match.group(2):
            return f"[{match.group(1)}] {match.group(2)}"[:TITLE_CHARS]
    return ""


def launcher_says(stderr: str) -> str:
    """The line that says why a launcher failed: the first help text's first paragraph, else
    the cause of hydra's error stack (:func:`hydra_cause`; its last line, "process manager
    error waiting for completion", had been taken, s36 tester M5), else the last line of
    ``stderr`` that is not a rule ("" when there is none). Before, the last line was taken,
    the help text's closing rule: "(exit 1: -----...)" (s29 tester A5)."""
    titles = help_titles(stderr)
    if titles:
        return titles[0]
    if cause := hydra_cause(stderr):
        return cause
    return next((ln.strip()[:TITLE_CHARS] for ln in reversed(stderr.splitlines())
                 if ln.strip() and not RULE_LINE.match(ln)), "")
