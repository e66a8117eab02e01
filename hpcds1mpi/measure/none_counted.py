"""A count of none before a closing verb: a tally, not the program's word on how it ended.

A program's summary counts what went wrong: "0 of 10 tasks exited with errors", "none of the
ranks terminated abnormally", "Finished: 10 done, 0 aborted". Read as a statement, each failed
a good run (s44 tester N1, O2, O4). :func:`counts_none` says whether the words before such a
line's verb are a count of none, for :mod:`.abnormal_ending` ("terminated abnormally", "exited
with errors") and :mod:`.ending_error` ("aborted") alike. An id is not a count: "rank=0
terminated abnormally", "node=0 aborted", "task: 0 aborted", "Process 0 aborted" (s44 review
A2, E1) say that part of the run failed; nor is a count of some ("4 ranks aborted", s44 review
E2). A count after the words ("Ranks that exited abnormally: 0") is no closing verb: the
modules' own patterns leave it be. Nor is a verb in "-ing" one a tally closes: "ERROR - no
restart file found aborting" is the program quitting now, its reason a thing found none of
(s46 review RV6), where "0 of 10 tasks aborted" counts what happened.
"""

from __future__ import annotations

import re

#: A count of none closing the words before the verb, opening the line or after a label,
#: another count or a sentence: 0, zero, none, nothing or no, then "of", "the", a total and up
#: to 3 words ("0 of 10 tasks", "none of the ranks", "Summary: 0 jobs", "10 done, 0", "done;
#: no tasks were", "Done. 0 of 10 tasks").
NONE_COUNTED = re.compile(
    r"(?:^\W*|[:,;(=]\s*|[.!?]\s+|\s-\s*)(?P<none>0+|zero|none|nothing|no)\b"
    r"(?:\s+of)?(?:\s+the)?(?:\s+\d+)?(?:\s+\w+){0,3}\s*$", re.IGNORECASE)
#: What makes a number after it an id: one part of the run named in the singular ("rank",
#: "node", "task: ", "Process", "job #", "myrank") or a name given a value ("pid="). Its
#: spaces are one run before the line's end: two side by side were quadratic (s45 review RV4).
ID_NAME = re.compile(
    r"(?:\b(?:my|i)?(?:rank|node|task|proc|process|processor|pe|thread|worker|job|host|gpu|"
    r"device|core|cpu|id|image|replica|instance|member|client|slave)(?:\s*[:#=])?|\w\s*=)"
    r"\s*$", re.IGNORECASE)
#: A verb of the program's own act now ("aborting", "terminating", "exiting"), which no tally
#: closes.
ACTING = re.compile(r"^\w+ing\b", re.IGNORECASE)


def counts_none(before: str, verb: str = "") -> bool:
    """Whether ``before``, a line's words up to its closing ``verb``, ends with a count of none
    (:data:`NONE_COUNTED`) that is no id (:data:`ID_NAME`: "rank=0 ", "task: 0 "), and the
    verb is none of the program's own act now (:data:`ACTING`)."""
    if ACTING.match(verb):
        return False
    tally = NONE_COUNTED.search(before)
    if not tally:
        return False
    is_number = tally.group("none")[0] in "0zZ"  # "none", "nothing", "no" name no part
    return not (is_number and ID_NAME.search(before[:tally.start("none")]))
