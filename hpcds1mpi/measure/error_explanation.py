"""The lines under a program's error line that explain it or advise on it, closing its output.

Elk's input errors are three lines, the last being advice::

    Error(readinput): error reading from elk.in
    Problem occurred in 'ngridk' block
    Check input convention in manual

and under ``srun --mpi=pmix`` Elk exits 0 after them. :func:`~hpcds1mpi.measure.ending_error.
ending_error` read only an error line that was the output's last, so the run was stored ``ok``
(s46 tester H4). :func:`explanation` gives the lines after an error line when each, to the end,
only says where its problem is (:data:`EXPLAINS`: "Problem occurred in ... block",
"near line 3") or tells to mend the input or read the manual (:data:`ADVICE`: "Check input
convention in manual", "See the manual"); at most :data:`EXPLAINED_LINES` of them. A line of results ("Result: E=-1.0"),
a closing word ("Done."), a program that went on (:data:`~hpcds1mpi.measure.error_cause.WENT_ON`:
"using defaults") or a report of no error is none: an error followed by those was mid-run, and
the run stays ``ok`` (a good run failed is worse than a bad one missed).
"""

from __future__ import annotations

import re

#: The most lines under an error line that may explain it (Elk's are 2).
EXPLAINED_LINES = 3
#: A line saying where an error's problem is: Elk's "Problem occurred in 'ngridk' block", "near
#: line 3", "at line 12 of elk.in", "in file elk.in line 4". Words of what went wrong alone
#: ("expected", "invalid", "missing", "unknown") are none: result and tally lines hold them
#: ("Total energy -76.0 as expected", "Invalid samples: 0"), and a good run failed is worse (RW2).
EXPLAINS = re.compile(
    r"\bproblem\s+(?:occurred|occurs)\s+(?:in|at|while|when|during|reading|parsing)\b|"
    r"\berror\s+occurred\s+(?:in|at|while|when|during)\b|\b(?:near|at|on)\s+line\s+\d|"
    r"\bin\s+file\s+\S+\s+(?:at\s+|on\s+)?line\s+\d", re.IGNORECASE)
#: A line telling the user to mend the input or read the manual: Elk's "Check input convention
#: in manual", "See the documentation", "Please correct elk.in", "Refer to the user guide". An
#: imperative opening the line to mend something, or naming the input, the manual or the usage;
#: a pointer to results ("See results.h5 for the output", "Check run.log") is none (RW2).
ADVICE = re.compile(
    r"^\W*(?:please\s+)?(?:(?:correct|fix|edit)\s+\w|(?:check|see|consult|refer\s+to|verify|ensure|"
    r"make\s+sure)\b.*(?:\b(?:input|manual|documentation|docs|user\s+guide|keywords?|"
    r"conventions?|syntax|format|usage)\b|--help))", re.IGNORECASE)
#: Words of a line saying the program went on that :data:`~hpcds1mpi.measure.error_cause.WENT_ON`
#: does not know: "CUDA devices not found, running on CPU", "continuing", "falling back" (RW2).
#: Not merged into it (s47): "running" would clear names_cause's "cannot open in.dat while
#: running step 3", and its "not continuing" that WENT_ON denies still ends no explanation here.
GOES_ON = re.compile(r"\b(?:running|continuing|proceeding|falling\s+back|optional)\b",
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
                WENT_ON.search(ln) or GOES_ON.search(ln):
            return None
    return after
