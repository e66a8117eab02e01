"""What to say when a reading's regex matched nothing in a launch's output.

A regex that found nothing is the user's to fix, not the program's failure: the launch's
reason names the regex and the output line nearest it (:func:`nearest_line`: MrBayes's
"Analysis completed in less than 1 second" for ``'Analysis completed in (\\d+) seconds?'``),
and the program's own line only where it says something went wrong
(:func:`program_reason`). s35 tester A4: the reason had been MrBayes's closing banner, "or
use 'set mode=interactive'", its last line.
"""

from __future__ import annotations

import re

#: What a pattern holds besides its literal words: escapes, classes, an optional letter.
_NOT_LITERAL = re.compile(r"\\.|\[(?:\\.|[^\]])*\]|\w(?:[?*]|\{0,?\d*\})|\(\?[^)]*?[:=!>]")
#: A literal word of a pattern: three letters or more.
_WORD = re.compile(r"[A-Za-z]{3,}")
#: Characters of the nearest line shown.
LINE_CHARS = 80


def pattern_words(pattern: str) -> list[str]:
    """The literal words of ``pattern`` (lower case, in order), escapes, character classes
    and optional letters left out: ``'Analysis completed in (\\d+) seconds?'`` gives
    analysis, completed, second."""
    return [w.lower() for w in _WORD.findall(_NOT_LITERAL.sub(" ", pattern))]


def nearest_line(pattern: str, stdout: str, stderr: str) -> str:
    """The program's output line (stdout, then stderr) holding most of ``pattern``'s literal
    words, the last of equals (a regex takes its last match), escaped and cut; "" when no line
    holds any."""
    from hpcds1mpi.measure.printable import printable
    from hpcds1mpi.measure.program_lines import kept_lines

    words = pattern_words(pattern)
    best, score = "", 0
    for line in (ln for text in (stdout, stderr) for ln in kept_lines(text) if ln):
        low = line.lower()
        held = sum(w in low for w in words)
        if held and held >= score:
            best, score = line, held
    return printable(" ".join(best.split()))[:LINE_CHARS]


def program_reason(said: str, stdout: str) -> str:
    """``said`` (:func:`~hpcds1mpi.measure.program_launch.reason_line`) where it is the
    program's reason: not where it is only stdout's last line and holds no error word, which
    every run prints (MrBayes's "or use 'set mode=interactive'")."""
    from hpcds1mpi.measure.printable import printable
    from hpcds1mpi.measure.program_launch import ERROR_WORDS

    lines = [ln.strip() for ln in stdout.splitlines() if ln.strip()]
    if said and lines and said == printable(lines[-1], keep="\t") and \
            not ERROR_WORDS.search(said):
        return ""
    return said
