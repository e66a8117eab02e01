"""A program that exited 0 but whose closing trailer says it ended abnormally.

:func:`exit_0_failure` is why a launch that exited 0 failed, for
:func:`~hpcds1mpi.measure.program_launch.classify`: its program's error as its last line
(:mod:`.ending_error`), else such a trailer.

MolDS, its input file missing, prints ``Error in base::InputParser::StoreInputTermsFromFile:
Not found.``, a backtrace, and then the trailer it prints at every exit::

         >>>>>  The MolDS finished abnormally..............  <<<<<
         >>>>>  CPU time: 0.000352[s].  <<<<<
         >>>>>  Elapsed time(OMP): 0.00164166[s].  <<<<<
         >>>>>  See you.  <<<<<

and exits 0. Its last line is no error (:mod:`.ending_error` reads the last line only), and a
time regex matched the trailer's elapsed time: the run was stored ``ok`` with a 0.3 ms
runtime (s44 tester M1). :func:`abnormal_ending` reads the last :data:`TRAILER_LINES` lines the
program wrote (:func:`~hpcds1mpi.measure.program_lines.kept_lines`: a launcher's lines and
Open MPI's help text, where "abnormal termination" is explained, set aside) for one saying the
program itself ended abnormally, in error or unsuccessfully, as the line's plain closing words
(:data:`ENDED_BADLY`); the reason
is the program's last error line before it, as a program states its own
(:data:`~hpcds1mpi.measure.ending_error.ERROR_LINE`,
:data:`~hpcds1mpi.measure.program_lines.SPECIFIC_LINE`, or a line naming its cause:
:func:`~hpcds1mpi.measure.error_cause.names_cause`), after that line's words. A line that
denies it (:data:`NOT_BADLY`: "did not end abnormally", "ended with 0 errors"), counts none
(:func:`~hpcds1mpi.measure.none_counted.counts_none`: "0 of 10 tasks exited with errors"; an
id is no count: "rank=0 terminated abnormally" fails, s44 review A2), is a warning
(:data:`~hpcds1mpi.measure.error_cause.WARNING`), speaks of another run
(:data:`EARLIER_RUN`: "Restarting: previous run terminated abnormally"; not a recovery of this
run's that failed, :data:`FAILED_RECOVERY`: "Recovery failed, program terminated abnormally",
s44 review A1; "Restart file read without errors" worked, s46 review RV1), says the program
went on (:data:`~hpcds1mpi.measure.error_cause.WENT_ON`: "task 3 exited with errors,
continuing") or is a check's verdict that it passed
(:data:`CHECK_PASSED`: "PASSED: handles abnormal termination", s44 review A3), and one
followed by more lines than a trailer's, leave the run ``ok`` (s44 tester O1-O3: a good run
failed is worse than a refusal missed).
"""

from __future__ import annotations

import re

#: The last lines the program wrote (blank ones not counted) that are its closing trailer.
TRAILER_LINES = 8
#: A program's plain statement that it ended badly, closing its line (only decoration after:
#: dots, "*", "<<<<<"): "The MolDS finished abnormally..............  <<<<<", "Program
#: terminated abnormally", "abnormal termination", "Run ended in error", "exited with errors",
#: "completed unsuccessfully". A line that goes on after the words is a tally or a quantity,
#: not the statement ("exited abnormally: 0", "with errors: none", "with error 1.2e-09 after
#: 45 iterations", "in error-free mode", "with failures recovered by retry": s44 tester O2, O3).
ENDED_BADLY = re.compile(
    r"(?:\b(?:finish(?:ed|es)?|end(?:ed|s)?|terminat(?:ed|es|ion)|exit(?:ed|s)?|stopped|quit|"
    r"complet(?:ed|es|ion)|run)\b[^.!;:]{0,40}?\b(?:abnormal(?:ly)?|in error|with (?:an? |some )?"
    r"(?:errors?|failures?)|unsuccessful(?:ly)?)"
    r"|\babnormal(?:ly)?\s+(?:end(?:ed|ing)?|termination|exit|stop|finish))"
    r"(?=[\s.!*<>=#~]*$)", re.IGNORECASE)
#: Words saying it did not end badly ("did not terminate abnormally", "no abnormal exit").
NOT_BADLY = re.compile(r"\b(?:not|never|no|without)\b|n't\b", re.IGNORECASE)
#: A line about another run than this one: a restart's note "Warning: previous run terminated
#: abnormally, restarting from checkpoint", "Previous run ended abnormally - resuming" (s44
#: tester O1); what this run did after is in the lines below it.
EARLIER_RUN = re.compile(r"\b(?:previous|earlier|prior|last|former)\s+(?:\w+\s+)?"
                         r"(?:run|job|attempt|execution|session|calculation|simulation)\b"
                         r"|\b(?:restart|resum|recover)\w*", re.IGNORECASE)
#: A restart or recovery that failed: this run's, which then ended badly ("Recovery failed,
#: program terminated abnormally", "failed to restart: ...", "error during recovery; ..."; s44
#: review A1; "Could not restart from checkpoint", "Resume from checkpoint failed", "Restart
#: not possible", s45 tester F7; "No restart possible", "Restart file corrupt", s46), not a
#: note on another run. "from" only before a checkpoint:
#: "Resuming from failed step 3" is a recovery from an earlier failure. No two runs of spaces
#: side by side: a long one made it quadratic, 500 s on a 100 kB line (s45 review RV4). Its
#: cannot-words are not negation.CANNOT's: "Will not restart: ..." is a choice, ok (s47).
FAILED_RECOVERY = re.compile(
    r"\b(?:restart|resum|recover)\w*(?:\s+(?!from\b|after\b)\w+){0,4}?\s+"
    r"(?:failed|fails|failure|unsuccessful|impossible|not\s+possible|errors?)\b"
    r"|\b(?:restart|resum|recover)\w*\s+from\s+(?:(?:the|last|latest|saved)\s+)*"
    r"(?:checkpoint|restart|snapshot|dump|chk)\S*(?:\s+file)?\s+(?:\S+\s+)?"
    r"(?:failed|fails|failure|unsuccessful|impossible|not\s+possible)\b"
    r"|\b(?:fail(?:ed|s|ure)?|unable|cannot|can't|could(?:\s+not|n't)|errors?)\s+"
    r"(?:(?:to|in|during|while|on)\s+)?(?:\w+\s+)?(?:restart|resum|recover)"
    r"|\bno\s+(?:restart|resum|recover)\w*\s+(?:is\s+)?(?:possible|available)\b"
    r"|\b(?:restart|resum|recover|checkpoint)\w*(?:\s+(?:file|data|dump|point|state)s?)?\s+"
    r"(?:is\s+|was\s+|are\s+)?(?:corrupt\w*|damaged|invalid|unreadable|truncated|missing)\b",
    re.IGNORECASE)
#: A failed recovery's word of failure, which a denial right before it turns into a recovery
#: that worked: "Restart file read without errors", "Recovered from checkpoint without failure"
#: (s46 review RV1).
_FAILURE_WORD = re.compile(r"\b(?:fail\w*|unsuccessful|impossible|errors?)\b", re.IGNORECASE)
#: A check's verdict that it passed, opening a line that names what it checked: a test suite's
#: "PASSED: handles abnormal termination", "[  OK  ] abnormal exit", "ok 3 - abnormal end",
#: "PASS: ..." (s44 review A3); the words name a case tested, not how this run ended. Upper
#: case "PASS" only: "Pass 2 ended in error" is a pass of the program's own. Only a verdict's
#: shape (a colon, brackets, "ok N - "), and no second statement after it: "Passed 120 of 200
#: steps; solver terminated abnormally", "OK so far; run ...", "Success: 3 of 4 ranks done;
#: rank 3 terminated abnormally" say how this run ended (s45 review RV3).
CHECK_PASSED = re.compile(r"^[\W_]*?(?:\[ *(?i:passed|ok|pass|succeeded|success) *\]|"
                          r"(?:(?i:passed|succeeded|success)|PASS) *:|(?i:ok) +\d+ +- )"
                          r"(?!.*?(?:;|\.\s+\w))")
#: The decoration around a trailer's words (">>>>>  ...  <<<<<", "*** ... ***", dots); a run
#: of it ending the line is tried from its start only (linear on long runs of spaces).
_DECORATION = re.compile(r"^[\W_]+|(?<![\W_])[\W_]+$")


def exit_0_failure(stdout: str, stderr: str) -> str:
    """Why a launch that exited 0 failed: its output ends with the program's error line
    (:func:`~hpcds1mpi.measure.ending_error.ending_error`: "exit 0, but the program ended
    with: <its line>", Elk under srun, s30 tester L1), else closes with its word that it ended
    abnormally (:func:`abnormal_ending`); "" when neither: the run is ``ok``."""
    from hpcds1mpi.measure.ending_error import ending_error
    from hpcds1mpi.measure.helper_crashes import helper_crashes

    if said := ending_error(stdout, stderr):
        return f"exit 0, but the program ended with: {said}"
    return abnormal_ending(stdout, stderr) or helper_crashes(stdout, stderr)  # s45 tester P2


def abnormal_ending(stdout: str, stderr: str) -> str:
    """The failure's reason when ``stdout`` or ``stderr`` (stdout first) closes with the
    program's word that it ended abnormally (see the module): "exit 0, but the program said
    <its words>: <its last error line before them>" (escaped, the error cut at 300); "" when
    neither does."""
    from hpcds1mpi.measure.error_cause import WARNING, WENT_ON
    from hpcds1mpi.measure.none_counted import counts_none
    from hpcds1mpi.measure.printable import clipped, printable
    from hpcds1mpi.measure.program_lines import NO_ERROR, kept_lines

    for text in (stdout, stderr):
        kept = kept_lines(text)
        written = [i for i, ln in enumerate(kept) if ln]
        for at in reversed(written[-TRAILER_LINES:]):
            said = kept[at]
            ended = ENDED_BADLY.search(said)
            failed = _failed_recoveries(said)
            if not ended or NOT_BADLY.search(_without(said, failed)) or \
                    NO_ERROR.search(said) or \
                    counts_none(said[:ended.start()]) or WARNING.search(said) or \
                    WENT_ON.search(said) or CHECK_PASSED.search(said) or \
                    (EARLIER_RUN.search(said) and not failed):
                continue
            words = clipped(printable(_DECORATION.sub("", said), keep="\t"), 120)
            error = clipped(printable(_last_error(kept[:at]), keep="\t"), 300)
            cause = f": {error}" if error else ""
            return f"exit 0, but the program said \"{words}\"{cause}"
    return ""


def _failed_recoveries(said: str) -> list[re.Match]:
    """The failed recoveries (:data:`FAILED_RECOVERY`) a line ``said`` tells of, but those
    whose word of failure (:data:`_FAILURE_WORD`) is denied right before it
    (:data:`~hpcds1mpi.measure.negation.DENIED`: "read without errors" is a recovery that
    worked, s46 review RV1)."""
    from hpcds1mpi.measure.negation import DENIED, NEAR

    failed = []
    for found in FAILED_RECOVERY.finditer(said):
        word = _FAILURE_WORD.search(said, found.start(), found.end())
        if word is None or not DENIED.search(said[max(0, word.start() - NEAR):word.start()]):
            failed.append(found)
    return failed


def _without(said: str, failed: list[re.Match]) -> str:
    """``said`` with the ``failed`` recoveries' words blanked: their own "not" ("Could not
    restart", "Restart not possible") denies the recovery, not the ending (s45 tester F7)."""
    for found in reversed(failed):
        said = f"{said[:found.start()]} {said[found.end():]}"
    return said


def _last_error(kept: list[str]) -> str:
    """The last error line of a stream's program lines ``kept`` (with its message); ""."""
    from hpcds1mpi.measure.ending_error import ERROR_LINE, LOG_RECORD
    from hpcds1mpi.measure.error_cause import names_cause
    from hpcds1mpi.measure.program_lines import NO_ERROR, SPECIFIC_LINE, with_message

    last, used = "", -1
    for i, ln in enumerate(kept):  # forward: a title's message is not read as its own error
        if i > used and ln and (ERROR_LINE.search(ln) or SPECIFIC_LINE.search(ln) or
                                names_cause(ln)) and not (NO_ERROR.search(ln) or
                                                          LOG_RECORD.match(ln)):
            last, used = with_message(kept, i)
    return last
