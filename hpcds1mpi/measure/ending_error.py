"""A program that exited 0 but whose output ends with its own error message.

Some programs stop on an error without a failing exit code: Elk's ``Error(readspecies): error
opening species file .../Alx.in`` ends in a Fortran ``stop``, and under ``srun --mpi=pmix`` the
launch exits 0 (under mpirun 1); it was recorded ``ok`` and ``tune`` kept it as its best run
(s30 tester L1). :func:`ending_error` gives the error line such an output ends with:
:func:`~hpcds1mpi.measure.program_launch.classify` makes that launch ``failed``, the reason
"exit 0, but the program ended with: <its line>".

Only the *end* of a stream counts, and only a line that states an error as a program states
its own (:data:`ERROR_LINE`, and :data:`~hpcds1mpi.measure.program_lines.SPECIFIC_LINE`,
the lines a failure's reason prefers): a warning or an error estimate printed mid-run and
followed by results, Elk's "Warning(gndstate): failed to reach self-consistency" under which
it goes on, or a last line "Error: 1.2e-05" (a value, not a message) leave the run ``ok``.
Lines the program did not write are set aside first, as for a failure's reason (a launcher's
log lines, Open MPI's help text, a runtime's trailer), and so are runtime notes printed at
every exit (:data:`RUNTIME_NOTE`: gfortran's "Note: The following floating-point exceptions
are signalling", Elk's stderr under its error). An error line followed only by lines that explain
it or advise on it is still the end (:mod:`.error_explanation`: Elk's "Error(readinput): ..." over
"Problem occurred in 'ngridk' block" and "Check input convention in manual", s46 tester H4).

A last line giving a cause and then that the program stops (MOCASSIN's "!out_in: can't open
file input/input.in - terminating", :data:`CAUSE_THEN_QUIT`, s45 tester E1) is such an ending too.

An error stated mid-run and then an abort of the program's own (GARLI with a fixed
``randseed``: every rank prints "ERROR: You cannot specify a random number seed with the MPI
version. ..." and then "***process 0 aborted run 0 at ...", its closing lines after, and exits
0; s42 tester E3) keeps that rule: ``ok``, but :func:`error_then_abort` gives the two lines,
which the sweep notes once per configuration with the ``--fail-regex`` that would record such
runs failed (as a run that said it did not converge, :mod:`.convergence`).
"""

from __future__ import annotations

import re

from hpcds1mpi.measure.error_explanation import explanation
from hpcds1mpi.measure.none_counted import counts_none
from hpcds1mpi.measure.program_lines import NO_ERROR, SPECIFIC_LINE, kept_lines, \
    message_under, raw_lines

#: A line stating the program's own error: Elk's "Error(readspecies): ...", "ERROR: ...",
#: LAMMPS's "ERROR on proc 0: ...", BAGEL's "ERROR ON MPI PROCESS 1: EXCEPTION RAISED: ..." (its
#: "ERROR: EXCEPTION RAISED: ..." at 2+ ranks: failed at 1 rank, the same run was stored ok at
#: 2, s48 tester O7), Quantum ESPRESSO's "Error in routine latgen (99):", "*** ERROR: ...",
#: "Fatal error: ...", "FATAL: ...", Intel Fortran's "forrtl: severe (29): file
#: not found", a C program's "prog: error: ..." / "prog: fatal error: ..." (not a launcher's or
#: a library's: srun's "srun: error: Not using a pseudo-terminal", slurmstepd's, hwloc's: s30
#: tester R2), C++'s "terminate called after throwing ...". Not a Python traceback's last line:
#: Python exits 1 on an uncaught exception, so one under an exit 0 was caught or ignored
#: ("Exception ignored in: ..." at shutdown, a BrokenPipeError: s30 tester R1).
ERROR_LINE = re.compile(
    r"^(?:\*+\s*)?(?:fatal\s+error|error|fatal)\b\s*(?:\([^)]*\))?"
    r"(?:\s+(?:on\s+(?:mpi\s+)?proc(?:ess)?\s+\d+|in\s+routine\s+[^:]*|in\s+[\w.:/-]+))?\s*[:!]"
    r"|^forrtl:\s+severe\b"
    r"|^(?!(?:srun|slurmstepd|salloc|sbatch|hwloc|mpirun|mpiexec|orterun|orted|prterun|prted|"
    r"prte|pmix|ucx|libfabric|hydra\w*|mca\w*)\b)[\w./-]+:\s+(?:fatal\s+)?error:"
    r"|^terminate called after throwing\b", re.IGNORECASE)
#: A line a language runtime prints at every exit, error or not: gfortran's note on the IEEE
#: flags raised during the run (Elk's stderr under its error, s30 tester L1).
RUNTIME_NOTE = re.compile(r"^Note: The following floating-point exceptions are signalling:")
#: A log record in Python's default format ("ERROR:root:could not reach the server"): what the
#: program logged on its way, not how it ended (s30 tester R1).
LOG_RECORD = re.compile(r"^(?:ERROR|CRITICAL|FATAL):[\w.]+:")
#: A title's message that reports no problem or a value, not an error: "Error: 1.2e-05",
#: "error: 3 %", "Error: 1,234", "error: <1e-6", "Error: none", "Error: OK", "error: false",
#: "error: nan", "Error: within tolerance", "Fatal: no" (s30 tester R3).
_VALUE = re.compile(r"^(?:[~<>\u2264\u2248]\s*)?[-+]?(\d[\d,]*\.?\d*|\.\d+)([eE][-+]?\d+)?(\s|%|$)"
                    r"|^\(?(none|no(?!\s+\w)|null|nil|false|ok|okay|pass|passed|n/?a|nan|"
                    r"[-+]?inf(inity)?|within|below|under|zero)\b\)?", re.IGNORECASE)
#: Words that say a check passed, anywhere in the line ("Error! Check: passed").
_PASSED = re.compile(r"\b(passed|succeeded|successful(ly)?)\b", re.IGNORECASE)


def ending_error(stdout: str, stderr: str) -> str:
    """The error line (with its message, escaped, cut at 300) that ``stdout`` or ``stderr`` ends
    with, stdout's first; "" when neither does. A stream ends with an error when its last line
    the program wrote (:func:`~hpcds1mpi.measure.program_lines.kept_lines`) is an error line,
    or the message under an error title ending at its colon ("Fortran runtime error:" over
    "Cannot open file 'x'", joined by :func:`~hpcds1mpi.measure.program_lines.with_message`),
    or such a line followed only by lines explaining it or advising on it (joined in brackets:
    :func:`~hpcds1mpi.measure.error_explanation.explanation`, Elk's "Check input convention in
    manual", s46 tester H4).
    """
    from hpcds1mpi.measure.printable import clipped, printable

    for text in (stdout, stderr):
        kept = ["" if RUNTIME_NOTE.match(ln) else ln for ln in kept_lines(text)]
        raw = raw_lines(text)
        end = next((i for i in range(len(kept) - 1, -1, -1) if kept[i]), None)
        if end is None:
            continue
        start = end
        while start > 0 and kept[start - 1]:  # the last paragraph: a title over its message
            start -= 1
        for i in range(start, end + 1):
            if (found := _error_line(kept, i, raw)) is None:
                continue
            said, last = found
            if (more := explanation(kept, last, end)) is not None:  # s46 tester H4
                said = f"{said} ({'; '.join(more)})" if more else said
                return clipped(printable(said, keep="\t"), 300)
        if quits(kept[end]):
            return clipped(printable(kept[end], keep="\t"), 300)
        if cause_then_quit(kept[end]):
            return clipped(printable(kept[end], keep="\t"), 300)
    return ""


#: A last line whose final words say the program quit: mpgrafic's " Illegal choice.  Aborting"
#: under an exit 0 having written nothing (s43 tester L1), "Aborting.", "... Aborting!",
#: "aborting run", "Run aborted."; only as the line's end, and not an offer or a condition
#: ("press q to abort", "will abort"): "aborting" mid-run with output after it, or a word
#: holding "abort" ("abortion", "MPI_Abort_hook"), stays ``ok``; so does a count of none
#: before it (:func:`~hpcds1mpi.measure.none_counted.counts_none`: "Finished: 10 done, 0
#: aborted", "Done. 0 of 10 tasks aborted"), not an id ("task: 0 aborted"), a count of some,
#: or a quit's reason ("Setup: no GPU found aborting", s46 review RV6).
QUIT_LINE = re.compile(
    r"(?<![\w-])(?<!to )(?<!or )(?<!will )(?<!would )(?<!may )(?<!can )(?<!not )(?<!never )"
    r"(?:abort(?:ing|ed)?|abort(?:ing|ed)\s+(?:the\s+)?run)[\s.!]*$", re.IGNORECASE)

def quits(line: str) -> bool:
    """Whether ``line`` closes with the program's word that it quit (:data:`QUIT_LINE`), not
    after a count of none (:func:`~hpcds1mpi.measure.none_counted.counts_none`)."""
    quit_ = QUIT_LINE.search(line)
    return quit_ is not None and not counts_none(line[:quit_.start()], quit_[0])


#: A last line giving a cause and then that the program stops: MOCASSIN's " !out_in: can't
#: open file input/input.in - terminating" and " !output directory output/ doesn't exist -
#: terminating" under an exit 0 (s45 tester E1), "config.yml not found, exiting.", "cannot
#: read mesh; giving up". Both are needed: "terminating workers", "Exiting normally" or
#: "Done, exiting" end good runs, and so do a count of none before the cause ("Summary: 0
#: files not found, exiting", as for :data:`QUIT_LINE`) and a stop that did not happen
#: ("cannot open log, not stopping", "without exiting"); nor a search that ended or a tally
#: (:func:`search_done`: "Could not find a better tree; stopping", s46 review RV9).
CAUSE_THEN_QUIT = re.compile(
    r"\b(?:can['\u2019]?t|cannot|can\s+not|could\s*n[o'\u2019]?t|unable\s+to|not\s+found|"
    r"does\s*n[o'\u2019]?t\s+exist|does\s+not\s+exist|no\s+such\s+file)\b", re.IGNORECASE)
#: The stop closing such a line (decoration after it: ".", "!", spaces), which is searched for
#: first and the cause before it: one pattern with ".*?" between them was quadratic, 1.5 s on a
#: line of 1,400 "cannot"s, and "\s*[.!]*\s*$" on a long run of spaces (4 s), as
#: :data:`QUIT_LINE` was.
STOP_AT_END = re.compile(
    r"(?<![\w-])(?<!not )(?<!never )(?<!without )(?<!before )(?<!avoid )(?<!to )"
    r"(?<!will )(?<!would )(?<!may )(?:terminat(?:ing|ed)|exiting|stopping|giving\s+up)"
    r"[\s.!]*$", re.IGNORECASE)


def cause_then_quit(line: str) -> bool:
    """Whether ``line`` gives a cause (:data:`CAUSE_THEN_QUIT`) and then closes with the
    program's stop (:data:`STOP_AT_END`), the cause being no count of none
    (:func:`~hpcds1mpi.measure.none_counted.counts_none`) nor a search that ended
    (:func:`search_done`)."""
    stop = STOP_AT_END.search(line)
    cause = CAUSE_THEN_QUIT.search(line, 0, stop.start()) if stop else None
    return cause is not None and not counts_none(line[:cause.start()]) and \
        not search_done(cause[0], line[cause.end():stop.start()])


#: Words after a cause that make it a search's normal end, no missing thing: an optimiser's
#: "Unable to improve the likelihood further, stopping.", "Could not find a better tree;
#: stopping", a work queue's "Cannot find more work, exiting." (s46 review RV9); "more" only
#: after a verb of finding ("cannot allocate more memory, exiting" is a failure).
_SEARCH_DONE = re.compile(r"\b(?:further|better|improv\w*|any\s*more|any\s+longer)\b|"
                          r"\b(?:find|get|fetch|receive|obtain|pull|claim|take)\s+more\b",
                          re.IGNORECASE)
#: A missing resource in the cause's clause, even beside :data:`_SEARCH_DONE`'s words: "Cannot
#: open any more files" (EMFILE), "Unable to get more memory" (s46 review RW1). Not error_cause's
#: MISSING (a file's absence): "get more memory" would end a search there (s47).
_RESOURCE = re.compile(r"\b(?:open|read|write|load|allocate|alloc|malloc|memory|files?|units?)\b",
                       re.IGNORECASE)
#: A file name or path, whose words are none of :data:`_SEARCH_DONE`'s ("further.in",
#: "improved_mesh.msh", s46 review RW1). Not error_cause's NAMED_FILE: "improved_mesh", no
#: extension, is a name here, none there ("could not find improved_mesh, stopping", s47).
_PATH = re.compile(r"[\w-]+(?:[./][\w-]+)+|\w*_\w*")
#: A tally of none right after a cause, in its clause: "Tasks not found in queue: 0, exiting",
#: "not found: 0; terminating" count what was not found (s46 review RV9); another number is no
#: tally ("cannot open unit=10", "Error code not found: 42", s46 review RW1), nor a file named
#: after the colon ("not found: 3.in, exiting").
_TALLY_AFTER = re.compile(r"^[^,;:=]*:\s*0+(?:\.0+)?\s*(?:[,;]|\.(?!\w)|-|$)")


def search_done(cause: str, after: str) -> bool:
    """Whether a ``cause`` (the words :data:`CAUSE_THEN_QUIT` found) and the words ``after``
    it up to the stop are a search that ended or a tally, not a cause: :data:`_SEARCH_DONE`
    words in its clause outside file names (only there: "cannot open in.dat; no further steps,
    exiting" is a missing file) and no missing resource (:data:`_RESOURCE`), or a count of none
    right after it (:data:`_TALLY_AFTER`)."""
    from hpcds1mpi.measure.negation import CLAUSE

    clause = after[:end.start()] if (end := CLAUSE.search(after)) else after
    words = _PATH.sub(" ", f"{cause}{clause}")
    return bool(_SEARCH_DONE.search(words) and not _RESOURCE.search(words)) or \
        bool(_TALLY_AFTER.match(after))


def _error_line(kept: list[str], i: int, raw: list[str]) -> tuple[str, int] | None:
    """``(said, last)`` where ``kept[i]`` states the program's own error (:data:`ERROR_LINE`,
    :data:`~hpcds1mpi.measure.program_lines.SPECIFIC_LINE`): the line with its message
    (:func:`~hpcds1mpi.measure.program_lines.message_under`, read in the stream's ``raw``
    lines: an empty title's message is its indented continuation, s48 tester O1, else its next
    line, s48 review RY3) and the index of its last line;
    None for any other line, a report of no error, a log record, a check that passed, or an
    error title over a value ("Error:" over "1.2e-05")."""
    ln = kept[i]
    if not ln or not (SPECIFIC_LINE.search(ln) or ERROR_LINE.search(ln)) or \
            NO_ERROR.search(ln) or LOG_RECORD.match(ln) or _PASSED.search(ln):
        return None
    said, last = message_under(kept, i, raw)
    return None if _is_value(said) else (said, last)


#: An error title's end: the text after the last one is its message ("cg: error: 1.2e-08").
_TITLE_END = re.compile(r"(?:error|fatal)[^:!]*[:!]\s*", re.IGNORECASE)


def _is_value(line: str) -> bool:
    """Whether the error title ``line`` (with its message) reports a value ("Error:
    1.2e-05", "Error (relative): 1.2e-10", "cg: error: 1.2e-08"), not an error: what follows
    its last error title, else its first colon."""
    titles = list(_TITLE_END.finditer(line))
    colon = titles[-1] if titles else re.search(r"[:!]\s*", line)
    return bool(colon) and bool(_VALUE.match(line[colon.end():]))


#: A program's word that it stopped its work ("***process 0 aborted run 0", "Run aborted."),
#: with the word after it, for the ``--fail-regex`` to suggest.
ABORTED = re.compile(r"\babort(?:ed|ing|s)?\b(?:[ \t]+[a-z]+\b)?", re.IGNORECASE)


def error_then_abort(stdout: str, stderr: str) -> tuple[str, str]:
    """``(line, words)``: the program's error line (as :func:`ending_error` reads one, its
    message joined) and a later line of the same stream saying it aborted, the two joined by
    " ... ", and the abort's words (:data:`ABORTED`), for a ``--fail-regex``; stdout first;
    ``("", "")`` when no stream has both."""
    from hpcds1mpi.measure.printable import clipped, printable

    for text in (stdout, stderr):
        kept, raw = kept_lines(text), raw_lines(text)
        for i in range(len(kept)):
            if (found := _error_line(kept, i, raw)) is None:
                continue
            said, last = found
            for later in kept[last + 1:]:
                if later and (words := ABORTED.search(later)) and not NO_ERROR.search(later):
                    line = f"{clipped(said, 120)} ... {clipped(later, 80)}"
                    return printable(line, keep="\t"), words.group(0)
    return "", ""


#: The most characters of an error line a ``--fail-regex`` is suggested from.
REGEX_CHARS = 60
#: The end of an error message's first clause: what a ``--fail-regex`` is made of.
_CLAUSE_END = re.compile(r"[,;]|\.(?:\s|$)")


def mid_run_error(stdout: str, stderr: str) -> tuple[str, str]:
    """``(line, words)`` for the note on a run that exited 0 and is ``ok`` although its program
    stated an error (asked after :func:`error_then_abort`, the more telling): its last error
    line (as :func:`ending_error` reads one, its message joined), with its title and its
    message's first clause, for a ``--fail-regex`` ("Error: mesh quality too low" of "Error:
    mesh quality too low, results are invalid" printed before its time line: it had no note,
    while a "did not converge" there had one, s47 tester K4); stdout first; ``("", "")`` when
    neither stream states one. An error the program says it went on from
    (:data:`~hpcds1mpi.measure.error_cause.WENT_ON`: "ERROR: x.dat not found, using defaults")
    is none: it decided so. Only a note: such a run stays ``ok``, a good run failed being worse
    than a bad one missed."""
    from hpcds1mpi.measure.error_cause import WENT_ON
    from hpcds1mpi.measure.printable import clipped, printable

    for text in (stdout, stderr):
        kept, raw = kept_lines(text), raw_lines(text)
        for i in range(len(kept) - 1, -1, -1):
            if (found := _error_line(kept, i, raw)) is None or WENT_ON.search(found[0]):
                continue
            line = kept[i]
            title = _TITLE_END.search(line) or re.search(r"[:!]\s*", line)
            clause = _CLAUSE_END.search(line, title.end() if title else 0)
            words = line[:clause.start()] if clause else line
            if len(words) > REGEX_CHARS:
                words = words[:REGEX_CHARS].rsplit(" ", 1)[0]
            return clipped(printable(found[0], keep="\t"), 300), words.strip()
    return "", ""
