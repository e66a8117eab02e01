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
``program_launch``) and a failed launch probe (:mod:`hpcds1mpi.launch.probe`) alike.
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


def help_spans(lines: list[str]) -> list[tuple[int, int]]:
    """(top rule, bottom rule) indices of each help text in ``lines`` (stripped lines)."""
    rules = [i for i, ln in enumerate(lines) if HELP_RULE.match(ln)]
    return list(zip(rules[::2], rules[1::2]))


def _first_paragraph(lines: list[str]) -> str:
    """The first paragraph of ``lines`` (from the first non-blank line to the next blank one),
    joined with single spaces and cut at :data:`TITLE_CHARS`."""
    said = []
    for ln in lines:
        if ln:
            said.append(ln)
        elif said:
            break
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


def launcher_says(stderr: str) -> str:
    """The line that says why a launcher failed: the first help text's first paragraph, else
    the last line of ``stderr`` that is not a rule ("" when there is none). Before, the last
    line was taken, the help text's closing rule: "(exit 1: -----...)" (s29 tester A5)."""
    titles = help_titles(stderr)
    if titles:
        return titles[0]
    return next((ln.strip()[:TITLE_CHARS] for ln in reversed(stderr.splitlines())
                 if ln.strip() and not RULE_LINE.match(ln)), "")
