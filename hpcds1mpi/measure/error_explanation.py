"""The lines under a program's error line that explain it or advise on it, closing its output.

Elk's input errors are three lines, the last being advice::

    Error(readinput): error reading from elk.in
    Problem occurred in 'ngridk' block
    Check input convention in manual

and under ``srun --mpi=pmix`` Elk exits 0 after them. :func:`~hpcds1mpi.measure.ending_error.
ending_error` read only an error line that was the output's last, so the run was stored ``ok``
(s46 tester H4). :func:`explanation` gives the lines after an error line when each, to the end,
only says where or what its problem is (:data:`EXPLAINS`: "Problem occurred in ... block",
"expected an integer", "near line 3") or what to do about it (:data:`ADVICE`: "Check ...",
"See the manual"); at most :data:`EXPLAINED_LINES` of them. A line of results ("Result: E=-1.0"),
a closing word ("Done."), a program that went on (:data:`~hpcds1mpi.measure.error_cause.WENT_ON`:
"using defaults") or a report of no error is none: an error followed by those was mid-run, and
the run stays ``ok`` (a good run failed is worse than a bad one missed).
"""

from __future__ import annotations

import re

#: The most lines under an error line that may explain it (Elk's are 2).
EXPLAINED_LINES = 3
#: Words of a line saying where or what an error's problem is: Elk's "Problem occurred in
#: 'ngridk' block", "expected a real number", "unknown keyword", "must be positive", "near line
#: 3", "at line 12 of elk.in". A bare "Problem" is no such word: "Problem size: 1000" is a value.
EXPLAINS = re.compile(
    r"\bproblem\s+(?:occurred|occurs|with|in|is|was|reading|parsing)\b|\boccurred\s+(?:in|at|"
    r"while|when|during)\b|\bexpected\b|\binvalid\b|\bunknown\b|\bunrecogni[sz]ed\b|\bmissing\b|"
    r"\bwrong\b|\bincorrect\b|\billegal\b|\bmust\s+(?:be|have|not)\b|\bshould\s+(?:be|have)\b|"
    r"\bnot\s+(?:found|allowed|valid|supported|defined|recogni[sz]ed)\b|\bnear\s+line\s+\d|"
    r"\bat\s+line\s+\d|\bon\s+line\s+\d", re.IGNORECASE)
#: A line telling the user what to do: Elk's "Check input convention in manual", "See the
#: documentation", "Please correct elk.in", "Refer to the user guide"; an imperative opening
#: the line, or a pointer to the manual anywhere in it.
ADVICE = re.compile(r"^\W*(?:please\s+)?(?:check|see|consult|refer\s+to|verify|ensure|make\s+sure|"
                    r"correct|fix|edit|try)\b|\b(?:manual|documentation|user\s+guide)\b",
                    re.IGNORECASE)


def explanation(lines: list[str], last: int, end: int) -> list[str] | None:
    """The lines ``lines[last + 1 : end + 1]`` (a stream's program lines after an error line's
    last, ``last``, to the stream's last, ``end``) where each explains the error or advises on it
    (see the module), at most :data:`EXPLAINED_LINES`; ``[]`` where the error line is the last;
    None where another line follows it."""
    from hpcds1mpi.measure.error_cause import WENT_ON
    from hpcds1mpi.measure.program_lines import NO_ERROR

    after = lines[last + 1:end + 1]
    if len(after) > EXPLAINED_LINES:
        return None
    for ln in after:
        if not ln or not (EXPLAINS.search(ln) or ADVICE.search(ln)) or NO_ERROR.search(ln) or \
                WENT_ON.search(ln):
            return None
    return after
