"""What to say when a reading's regex matched nothing in a launch's output.

A regex that found nothing is the user's to fix, not the program's failure: the launch's
reason names the regex and the output line nearest it (:func:`nearest_line`: MrBayes's
"Analysis completed in less than 1 second" for ``'Analysis completed in (\\d+) seconds?'``),
and the program's own line only where it says something went wrong
(:func:`program_reason`). s35 tester A4: the reason had been MrBayes's closing banner, "or
use 'set mode=interactive'", its last line. A last paragraph that refuses the run is the
program's reason, though: Debian's cmsearch wrapper's "... needs SSE2 which is not / available
on this machine. / ... Exiting", exit 0, had been reported as the regex's miss alone (s47
tester L5; :func:`refusal`).
"""

from __future__ import annotations

import re

#: What a pattern holds besides its literal words: escapes, classes, an optional letter.
_NOT_LITERAL = re.compile(r"\\.|\[(?:\\.|[^\]])*\]|\w(?:[?*]|\{0,?\d*\})|\(\?[^)]*?[:=!>]")
#: A literal word of a pattern: three letters or more.
_WORD = re.compile(r"[A-Za-z]{3,}")
#: Characters of the nearest line shown.
LINE_CHARS = 80
#: The most lines of stdout's last paragraph read as one refusal (the cmsearch wrapper's are 3).
PARAGRAPH_LINES = 3
#: Words of a program refusing to run here that are no error word of
#: :data:`~hpcds1mpi.measure.program_launch.ERROR_WORDS`: "needs SSE2 which is not available on
#: this machine" (Debian's cmsearch wrapper, s47 tester L5), "AVX2 not supported", "unsupported".
UNAVAILABLE = re.compile(r"\bnot\s+(?:available|supported|enabled|installed)\b|"
                         r"\b(?:unavailable|unsupported)\b", re.IGNORECASE)


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
        return refusal(stdout)
    return said


def refusal(stdout: str) -> str:
    """``stdout``'s last paragraph (its last :data:`PARAGRAPH_LINES` lines at most, joined)
    where it refuses the run: closing with the program's word that it quits or stops
    (:func:`~hpcds1mpi.measure.ending_error.quits`,
    :data:`~hpcds1mpi.measure.ending_error.STOP_AT_END`: "... Exiting") after its cause, an
    error word (:data:`~hpcds1mpi.measure.program_launch.ERROR_WORDS`), a refusal or an absence
    (:func:`~hpcds1mpi.measure.error_cause.error_line`) or a thing not available
    (:data:`UNAVAILABLE`), read across its lines ("... is not" over "available ..."); escaped
    and with its spaces made one; "" for any other, MrBayes's closing banner. Both are needed:
    the reason also decides a ``--fom-regex`` miss (:mod:`.fom_miss`), and a good run's closing
    lines that only count errors stay no reason."""
    from hpcds1mpi.measure.ending_error import STOP_AT_END, quits
    from hpcds1mpi.measure.error_cause import error_line
    from hpcds1mpi.measure.printable import printable
    from hpcds1mpi.measure.program_launch import ERROR_WORDS

    paragraph: list[str] = []
    for line in reversed(stdout.splitlines()):
        if not line.strip():
            if paragraph:
                break
            continue
        paragraph.insert(0, line.strip())
        if len(paragraph) == PARAGRAPH_LINES:
            break
    said = " ".join(" ".join(paragraph).split())
    if not paragraph or not (quits(paragraph[-1]) or STOP_AT_END.search(paragraph[-1])):
        return ""
    if ERROR_WORDS.search(said) or UNAVAILABLE.search(said) or error_line(said):
        return printable(said, keep="\t")
    return ""
