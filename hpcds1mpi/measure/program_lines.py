"""Which lines of a program's output the program wrote, and the message under an error title.

A launch's output mixes the program's lines with lines it did not write: a launcher's log lines
(:data:`LAUNCHER_LINE`), a runtime's trailer (:data:`GENERIC_LINE`), Open MPI's help text and
rules. :func:`program_lines` blanks those, :func:`with_message` joins a title ending at its
colon to the paragraph under it (:func:`message_under`: to its message, as a verdict reads it),
and :data:`SPECIFIC_LINE` / :data:`NO_ERROR` say which lines name an error most exactly and
which report none. The one reading of a failure's reason
(:func:`~hpcds1mpi.measure.program_launch.reason_line`) and of an exit 0 that ends in the
program's error (:func:`~hpcds1mpi.measure.ending_error.ending_error`) share it; before, the
second took these readers as arguments to avoid an import loop (s31 review M2).
"""

from __future__ import annotations

import re

from hpcds1mpi.launch.help_text import RULE_LINE, help_spans

#: Lines an MPI library or launcher writes for every failure, whatever the program said: Open
#: MPI's "[host:pid] ..." log lines, hydra's "=   EXIT CODE: 1" box, "MPI_Abort was called",
#: srun's status of each task ("srun: error: n2: task 1: Killed": the last line, s29 V1-1).
LAUNCHER_LINE = re.compile(r"^\s*\[[\w.-]+:\d+\]|^\s*=|MPI_Abort|MPI_ABORT|"
                           r"^srun: error: \S+: tasks? [\d,-]+: |"
                           # srun ending the step after a task's exit ("srun: launch/slurm:
                           # _step_signal: Terminating StepId=5.0" had been the reason over Open
                           # MPI's help text, s30 verifier V N1), slurmstepd's CANCELLED banner,
                           # named "slurmstepd-n1" by a multiple-slurmd build (s40 tester A6)
                           r"^srun: (launch/slurm: |Job step aborted|Terminating |forcing job "
                           r"termination|got SIGCONT|Force Terminated)|"
                           r"^slurmstepd(-[\w.-]+)?: error: \*\*\* (STEP|JOB) \S+ ON \S+ "
                           r"CANCELLED",
                           re.IGNORECASE)
#: Lines that name the error most exactly, preferred to any other: gfortran's "Fortran runtime
#: error: Cannot open file 'LU.dat'" and "ERROR STOP <message>" (not a bare stop code), a C
#: assert's "prog: f.c:5: main: Assertion `x' failed.", C++'s "what():  ..." under "terminate
#: called after throwing", and the titles of GROMACS's fatal errors ("Fatal error:", "Error in
#: user input:", the other gmx::ErrorCode names), whose message is the paragraph under them;
#: OpenFOAM's "FOAM FATAL ERROR:" / "FOAM FATAL IO ERROR:" (:data:`FOAM_HEADER`).
SPECIFIC_LINE = re.compile(r"^Fortran runtime error:|^ERROR STOP\b(?!\s*-?\d*$)|"
                           r"^FOAM FATAL (IO )?ERROR:$|"
                           r": Assertion .+ failed\.?$|^what\(\):|^Fatal error:|"
                           r"^(Error in user input|Inconsistency in user input|Out of memory|"
                           r"Simulation instability detected|Feature not implemented|"
                           r"File not found|System I/O error|Unknown error|"
                           r"Requested tolerance cannot be achieved|Invalid (value|call) \(bug\)|"
                           r"(Internal|API|Range checking|Communication) error \((possible )?bug\))"
                           r":$")
#: Characters of a title's message that :func:`with_message` joins (a reason is cut at 300).
MESSAGE_CHARS = 400
#: A line that is one parenthesised remark, read as the line above's continuation: Elk's
#: "(blank line required after tasks block)" under "Error(readinput): error reading tasks",
#: the fix the reason had lost (s43 tester G5).
REMARK_LINE = re.compile(r"^\([^()]*\)\.?$")
#: The header of OpenFOAM's error block, "--> FOAM FATAL ERROR: " / "--> FOAM FATAL IO ERROR:
#: (openfoam-2306)": read as its title "FOAM FATAL ERROR:", the message lines under it.
#: Before, the launcher's "exited on signal 6 (Aborted)" was the reason (s29 tester A5).
FOAM_HEADER = re.compile(r"^-->\s*(FOAM FATAL (?:IO )?ERROR)\s*:?\s*(?:\([\w.-]+\))?\s*$")
#: A line that ends a title's message: where in the source it was raised (OpenFOAM's "From
#: function Foam::UPstream::init(...)" / "From Foam::dictionary::lookupEntry(...)" and "in
#: file UPstream.C at line 259.").
MESSAGE_END = re.compile(r"^From\s+\S.*\(|^in file \S+ at line \d+")
#: Where a hoc interpreter's error is, on the line under it: NEURON's " in ring.hoc near line
#: 12" under "nrniv: syntax error", each line tagged with its rank ("0 ") at several ranks,
#: a tag :data:`~hpcds1mpi.measure.rank_tags.RANK_TAG` cannot take generally ("2 errors").
#: Joined to the error, its tag dropped: the reason had been "0 nrniv: syntax error", the file
#: and line lost (s41 tester A4). Python's ``h(...)`` gives no file: " near line 1" (s46 G3).
NEAR_LINE = re.compile(r"^(?:(\d+) +)?((?:in \S.* )?near line \d+)$")
#: Lines every failure of a runtime prints, whatever the error: gfortran's "Error termination.
#: Backtrace:" trailer and its "#3  0x7f... in ???" / "at file.c:58" frames, glibc's and Open
#: MPI's "*** Process received signal ***" / "*** End of error message ***", and a Fortran
#: program's bare stop code ("STOP 2", "ERROR STOP 1"): the exit code again, no reason (pw.x's
#: on stderr under its own "convergence NOT achieved" on stdout), OpenFOAM's stack frames
#: ("#1  Foam::error::abort() at ??:?", "#4  ? in /usr/bin/simpleFoam"), and Open MPI's abort
#: banner ("*** An error occurred in MPI_Init_thread", "*** MPI_ERRORS_ARE_FATAL (processes
#: ...": it had beaten the help text saying why, s30 tester L2; its "*** MPI_ERR_RANK: invalid
#: rank" line is kept); and its complaint at a second MPI_Finalize, which a program's own
#: exit path after its fatal message makes ("*** The MPI_Finalize() function was called after
#: MPI_FINALIZE was invoked.", "*** This is disallowed by the MPI standard.", "*** Your MPI job
#: will now abort.", "[host:pid] Local abort after MPI_FINALIZE started completed ..."): it had
#: beaten TREE-PUZZLE's "Halt: TREE-PUZZLE needs at least 2 processes ..." (s43 tester I2).
GENERIC_LINE = re.compile(r"^\*\*\* (An error occurred in \w+|on (a NULL )?communicator\b|"
                          r"reported by process\b|MPI_ERRORS_ARE_FATAL\b|\s*and potentially "
                          r"your MPI job|The \w+\(\) function was called after MPI_FINALIZE|"
                          r"This is disallowed by the MPI standard|Your MPI job will now abort)|"
                          r"^(\[[\w.-]+:\d+\] )?Local abort after MPI_FINALIZE\b|"
                          r"^Error termination\b|^Backtrace for this error|^#\d+\s+0x[0-9a-f]+|"
                          r"^#\d+\s+.*(?:\bat \S+:(?:\d+|\?+)|\bin /\S+)$|"
                          r"^at \S+:\d+$|^\*\*\* (Process received signal|End of error message)|"
                          r"^(ERROR )?STOP( -?\d+)?$", re.IGNORECASE)
#: A report of no error: "0 tests completed and failed residual checks", "errors: 0",
#: "completed with 0 errors" (the error words in them say nothing went wrong); not "Error: 0:"
#: followed by a message (Global Arrays' "ARMCI Error: 0:input_parse: unknown directive",
#: rank 0's error, which NWChem's generic "There is an error in the input file" had beaten).
NO_ERROR = re.compile(r"^\s*(0|no|zero)\s+(\w+\s+){0,3}(errors?|failures?|failed)\b|"
                      r"\b(0|no|zero)\s+(errors?|failures?)\b|"
                      r"\b(errors?|failures?|failed)\s*[:=]\s*0\b(?!\s*:)", re.IGNORECASE)


def program_lines(lines: list[str], boxes: list) -> list[str]:
    """The ``lines`` of a stream (stripped), with "" for each line the program did not write (a
    rule, Open MPI's help text (:func:`~hpcds1mpi.launch.help_text.help_spans`), a
    launcher's log line :data:`LAUNCHER_LINE`, a runtime's trailer :data:`GENERIC_LINE` or a
    program's :data:`~hpcds1mpi.measure.rank_tags.ERROR_TRAILER`) and each blank line: the
    "" entries end a paragraph. A line is read without its rank tag
    (:func:`~hpcds1mpi.measure.rank_tags.untagged`: "[0] ", s29 tester A5), OpenFOAM's error
    header as its title (:data:`FOAM_HEADER`), a hoc error's location joined to it
    (:data:`NEAR_LINE`). Each of its framed ``boxes``
    (:func:`~hpcds1mpi.measure.framed_boxes.framed_boxes`) is one line, its message.

    Open MPI's error-handler banner is one line, its message, at its first line
    (:func:`~hpcds1mpi.measure.mpi_error_banner.banner_messages`, s32 tester X4).

    Before, the text between any two rules was taken for Open MPI's help text and dropped:
    every GROMACS fatal error (framed by 55 dashes) with it."""
    from hpcds1mpi.measure.mpi_error_banner import banner_messages
    from hpcds1mpi.measure.rank_tags import ERROR_TRAILER, FATAL_TRAILER, untagged

    boxed = {i for a, b in help_spans(lines) for i in range(a, b + 1)}
    plain = [untagged(ln) for ln in lines]
    kept, joined = [], set()  # joined: the places of locations joined to their error
    for i, ln in enumerate(plain):
        ln = FOAM_HEADER.sub(r"\1:", ln)
        if kept and kept[-1] and FATAL_TRAILER.search(ln):  # one line: what was wrong, and
            kept[-1] = f"{kept[-1]} ({ln[:1].lower()}{ln[1:]})"  # that it is fatal (s29 V1-3)
            ln = ""
        if (near := NEAR_LINE.match(ln)) and (at := _error_of(kept, near[1], joined)) is not None:
            title = kept[at].removeprefix(f"{near[1]} ") if near[1] else kept[at]
            kept[at], ln = f"{title} {near[2]}", ""
            joined.add(i)
        kept.append("" if i in boxed or RULE_LINE.match(ln) or LAUNCHER_LINE.search(ln)
                    or GENERIC_LINE.search(ln) or ERROR_TRAILER.match(ln) else ln)
    for banner in banner_messages(plain):  # one message, not six lines of boilerplate
        for i in banner.lines:
            kept[i] = ""
        kept[banner.first] = banner.message
    for box in boxes:  # one message, not a line of art or half a sentence
        kept[box.first:box.last + 1] = ["", box.message] + [""] * (box.last - box.first - 1)
    return kept


def _error_of(kept: list[str], tag: str | None, joined: set[int]) -> int | None:
    """Where in ``kept`` the error a hoc location (:data:`NEAR_LINE`) tagged ``tag`` belongs:
    the line above it, or, tagged "N", the paragraph's last line of rank N (the places
    of locations already ``joined`` end no paragraph), for ranks' lines interleave ("0 nrniv:
    ..." "1 nrniv: ..." "0  in ..."): the location had been joined to another rank's error,
    its tag kept (s41 review F4)."""
    above = len(kept) - 1 if kept and kept[-1] else None
    for at in range(len(kept) - 1, -1, -1) if tag else ():
        if at in joined:
            continue
        if not kept[at]:
            break
        if kept[at].startswith(f"{tag} "):
            return at
    return above


def with_message(lines: list[str], i: int, raw: list[str] | None = None) -> tuple[str, int]:
    """``lines[i]``, followed by its message when it is a title that ends at its colon: the
    paragraph under it, joined ("Fortran runtime error:" alone on its line; GROMACS's "Fatal
    error:" over a wrapped message; Quantum ESPRESSO's "Error in routine latgen (99):" over
    "nonexistent bravais lattice"; OpenFOAM's "FOAM FATAL ERROR:" up to its "From ..."), any
    other line by a parenthesised remark right under it (:data:`REMARK_LINE`); and the index
    of the last line used.

    Given the stream's ``raw`` lines (:func:`raw_lines`, indexed as ``lines``), as a verdict
    reads them (:mod:`~hpcds1mpi.measure.ending_error`), a title other than a
    :data:`SPECIFIC_LINE` one (whose formats put the message under it) takes only the lines
    under it indented deeper than itself, its message's continuation ("Error:" over
    "  1.2e-10"), never the program's later output: gretl's "Error: " printed with an empty
    message, then "work done" and its time line, was one error line ending the output, and
    the exit-0 run failed where "Error: x" on one line is ok with a note (s48 tester O1)."""
    ln, last = lines[i], i
    if ln.endswith(":"):
        own = None if raw is None or SPECIFIC_LINE.search(ln) else _indent(raw[i])
        while last + 1 < len(lines):  # not a slice: that copied the rest of the output per
            nxt = lines[last + 1]  # title, quadratic in 64 KB of "ERROR:" lines (s29 H2)
            if not nxt or len(ln) > MESSAGE_CHARS or MESSAGE_END.match(nxt) or \
                    (own is not None and _indent(raw[last + 1]) <= own):
                break
            ln, last = f"{ln} {nxt}", last + 1
    elif last + 1 < len(lines) and REMARK_LINE.match(lines[last + 1]) and \
            len(ln) + len(lines[last + 1]) < MESSAGE_CHARS:
        ln, last = f"{ln} {lines[last + 1]}", last + 1
    return ln, last


def _indent(line: str) -> int:
    """How many whitespace characters ``line``'s text starts with, after its rank tag where it
    has one (:data:`~hpcds1mpi.measure.rank_tags.RANK_TAG`, which :func:`kept_lines` strips):
    "[0]   cannot allocate 3 GB" is indented under "[0] Error:", as srun --label's and Open
    MPI's --tag-output lines are; read whole, both were 0 deep (s48 review RY3)."""
    from hpcds1mpi.measure.rank_tags import RANK_TAG

    if tag := RANK_TAG.match(body := line.lstrip()):
        line = body[len(tag[0].rstrip()):]  # the tag's own separator, not the indentation
    return len(line) - len(line.lstrip())


def message_under(lines: list[str], i: int, raw: list[str]) -> tuple[str, int]:
    """:func:`with_message` as a verdict reads ``lines[i]`` (``raw``: :func:`raw_lines`): a
    title ending at its colon with no continuation under it takes exactly the next line of its
    paragraph as its message ("FATAL ERROR:" over "cannot open file x.dat" at column 0, the
    output's end: exit 0 had been stored ok, s48 review RY3), unless the title was printed
    with an empty message, a blank after its colon (gretl's ``printf "Error: %s"``, then
    its time line: ok with a note, s48 tester O1)."""
    said, last = with_message(lines, i, raw)
    nxt = lines[i + 1] if last == i and i + 1 < len(lines) else ""
    if said.endswith(":") and nxt and not MESSAGE_END.match(nxt) and \
            not raw[i][-1:].isspace() and len(said) <= MESSAGE_CHARS:
        said, last = f"{said} {nxt}", i + 1
    return said, last


def raw_lines(text: str) -> list[str]:
    """The lines of a stream's last 20,000 characters as written, those :func:`kept_lines`
    reads, indexed as it gives them."""
    return text[-20000:].splitlines()


def kept_lines(text: str) -> list[str]:
    """The lines of a stream's last 20,000 characters, "" where the program did not write
    them (:func:`program_lines`)."""
    from hpcds1mpi.measure.framed_boxes import framed_boxes

    lines = [ln.strip() for ln in raw_lines(text)]
    return program_lines(lines, framed_boxes(lines))
