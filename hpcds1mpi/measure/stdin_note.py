"""The note for a launch that failed reading its input from stdin, which is ``/dev/null``.

A sweep's program reads ``/dev/null`` (:mod:`~hpcds1mpi.measure.program_launch`: it never waits
on the terminal). A program that asks for its input there failed with "exit code 1: EOFError:
EOF when reading a line" and nothing said why (s33 tester D9). :func:`stdin_note` names the
cause and the two ways to give input, as ``--command``'s refusal of ``< in.txt`` does.
"""

from __future__ import annotations

import re

#: A failure's reason that says the program hit the end of its input: Python's ``input()``,
#: gfortran's READ of unit 5, C++/Java/R readers.
END_OF_INPUT = re.compile(r"\bEOFError\b|\bEOF when reading\b|\bEnd of file\b|"
                          r"\bunexpected end of (?:file|input|stream)\b|\bNoSuchElementException\b|"
                          r"\bstdin\b|\bstandard input\b", re.IGNORECASE)

#: Said for both causes: the sweep does not read a wrapper's redirections, and one that
#: already runs ``exec ./app < in.txt`` was sent to write exactly that (s39 tester A1).
NOTE = ("note: the run's input ended early: a sweep's program reads its stdin from /dev/null, "
        "so if it reads its input there, give the input as a file argument (--command './app "
        "{size} in.txt'), or give a script holding 'exec ./app < in.txt' (--command './run.sh "
        "{size}'); if it already reads a file that way, that file ended before the program "
        "expected (check it is whole in each configuration's folder)")


def stdin_note(error: str) -> str:
    """:data:`NOTE` where a failed launch's ``error`` says its input ended, else ""."""
    return NOTE if error and END_OF_INPUT.search(error) else ""
