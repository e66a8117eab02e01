"""The note for a launch that failed reading its input from stdin, which is ``/dev/null``.

A sweep's program reads ``/dev/null`` (:mod:`~hpcds1mpi.measure.program_launch`: it never waits
on the terminal). A program that asks for its input there failed with "exit code 1: EOFError:
EOF when reading a line" and nothing said why (s33 tester D9). :func:`stdin_note` names the
cause and the two ways to give input, as ``--command``'s refusal of ``< in.txt`` does.

An error that names the file whose input ended is none: MPB's "syntax.ctl:3:1: unexpected end
of input while searching for: )" is a syntax error in its ``.ctl`` file, and the note sent the
user to stdin (s47 tester K3). An error naming stdin still gets it (gfortran's "file = 'stdin'").
"""

from __future__ import annotations

import re

#: A failure's reason that says the program hit the end of its input: Python's ``input()``,
#: gfortran's READ of unit 5, C++/Java/R readers.
END_OF_INPUT = re.compile(r"\bEOFError\b|\bEOF when reading\b|\bEnd of file\b|"
                          r"\bunexpected end of (?:file|input|stream)\b|\bNoSuchElementException\b|"
                          r"\bstdin\b|\bstandard input\b", re.IGNORECASE)
#: A reason naming stdin itself ("<stdin>", gfortran's "file = 'stdin'", "/dev/stdin").
STDIN = re.compile(r"\bstdin\b|\bstandard input\b|/dev/null\b", re.IGNORECASE)
#: A file name: a path, or a name with an extension ("syntax.ctl", "../in/run.json").
_NAME = r"(?:\.{0,2}/[\w.+-]+(?:/[\w.+-]+)*|[\w+-]+(?:\.[\w+-]+)*\.[A-Za-z]\w{0,7})"
#: A reason naming the file it was reading: with its place, a parser's "syntax.ctl:3:1:"
#: (Guile's, MPB's), "in.json, line 3", "line 3 of in.dat"; or as the file read, "file =
#: 'in.dat'" (gfortran's), "in file in.dat", "reading in.dat", "parsing 'in.dat'".
NAMED_INPUT = re.compile(
    rf"(?:^|(?<=[\s'\"`(<]))(?:{_NAME})['\"`]?(?::\d+\b|,?\s+(?:at\s+|on\s+)?line\s+\d)"
    rf"|\bline\s+\d+\s+of\s+(?:file\s+)?['\"`]?{_NAME}"
    rf"|\b(?:file\s*=?|reading|parsing|in\s+file|of\s+file)\s+['\"`]?{_NAME}", re.IGNORECASE)

#: Said for both causes: the sweep does not read a wrapper's redirections, and one that
#: already runs ``exec ./app < in.txt`` was sent to write exactly that (s39 tester A1).
NOTE = ("note: the run's input ended early: a sweep's program reads its stdin from /dev/null, "
        "so if it reads its input there, give the input as a file argument (--command './app "
        "{size} in.txt'), or give a script holding 'exec ./app < in.txt' (--command './run.sh "
        "{size}'); if it already reads a file that way, that file ended before the program "
        "expected (check it is whole in each configuration's folder)")


def stdin_note(error: str) -> str:
    """:data:`NOTE` where a failed launch's ``error`` says its input ended, and names stdin or
    no file it was reading (:data:`NAMED_INPUT`), else ""."""
    if not error or not END_OF_INPUT.search(error):
        return ""
    return NOTE if STDIN.search(error) or not NAMED_INPUT.search(error) else ""
