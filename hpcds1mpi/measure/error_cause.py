"""Which of a failure's error lines names its cause (s37 tester G5).

NWChem under Open MPI had failed with the reason ``ARMCI Error: 0:bas_tag_lib: failed opening
basis file:``: its communication runtime's copy, on stderr, of the program's own message,
ending at a colon where the program had said more. NWChem's own account was on stdout::

    Attempting to read a basis set from a  non-existing file:
    /usr/share/nwchem/libraries/sto-3gx
    ----------------------------------------------------------------
    bas_tag_lib: failed opening basis file                   0
    ----------------------------------------------------------------
    There is an error in the specified basis set

Two rules, for any program:

* **A runtime's copy** (:func:`restates`): a stderr error line whose words (its runtime's prefix,
  "ARMCI Error: 0:", aside) are an error line of stdout's is a copy; the program's own account
  on stdout is read instead.
* **The line naming the cause** (:func:`cause_first`): of the error lines of one report (within
  :data:`REPORT_LINES` lines before its last), one saying a named file is missing or cannot be
  opened (:data:`MISSING`, with a path or file name: :data:`NAMED_FILE`) is the reason rather
  than the generic lines after it ("There is an error in the specified basis set"), NWChem's
  "Unable to open h2o-3.nw --- appending .nw" over its "failed to open the input file";
  never one the program went on from: said in words (:data:`WENT_ON`: "..., using built-in
  defaults"), or shown by its progress line coming again after it ("step 2: dt=0.005" after
  "step 1: dt=0.01": :func:`went_on_after`, s43 tester K4). Such a line is an error line even
  with no error word (:func:`error_line`: yorick's "SYNTAX: missing include file nofile.i"
  over its "ERROR (VM idle or lost) ****ABORTING PARSE**** too many errors", a tally of the
  errors before it and no cause, s44 tester M2).
"""

from __future__ import annotations

import re

from hpcds1mpi.measure.negation import CANNOT, DENIED, NOT_POSSIBLE, Unnegated

#: A report's lines: its error lines this close to its last are one report (NWChem's is 12).
REPORT_LINES = 20
#: Words saying a thing is missing or cannot be opened.
MISSING = re.compile(r"\bno such file\b|\bnon-?existing\b|\bnonexistent\b|\b(does|did) not "
                     r"exist\b|\bdoesn't exist\b|\bnot found\b|\bmissing\b|"
                     r"\b(cannot|can't|unable to|could not|couldn't|failed to) (open|read|find)\b|"
                     r"\bfailed opening\b", re.IGNORECASE)
#: Words saying a thing is absent that are no error word of
#: :data:`~hpcds1mpi.measure.program_launch.ERROR_WORDS`: a line with one is an error line too
#: (NWChem's "Attempting to read a basis set from a non-existing file:", the path below it);
#: and a thing already there where the program would write: ExaML's "ExaML output files with
#: the run ID <run_300> already exist" had lost to Open MPI's banner (s38 tester A3).
ABSENT = re.compile(r"\bnon-?existing\b|\bnonexistent\b|\b(does|did) not exist\b|"
                    r"\bdoesn't exist\b|\balready exists?\b|\bexists? already\b",
                    re.IGNORECASE)
#: Words of a program refusing its input or its layout that are no error word of
#: :data:`~hpcds1mpi.measure.program_launch.ERROR_WORDS`: a line with one is an error line, and
#: names the cause (:func:`names_cause`) rather than the generic lines after it. TREE-PUZZLE's
#: "Halt: TREE-PUZZLE needs at least 2 processes for a parallel run!!!" had lost to Open MPI's
#: complaint at its second MPI_Finalize (s43 tester I2), APBS's "MGparm_check: illegal nlev
#: (-1); check your grid dimensions!" to its "Error while parsing input file." (s43 tester I4).
#: "illegal" only with what is illegal and its value: ScaLAPACK's tester's summary "1 tests
#: skipped because of illegal input values." is no error. "too many errors" is a tally of the
#: errors said before it, not their cause: yorick's "ERROR (VM idle or lost) ****ABORTING
#: PARSE**** too many errors" had beaten its "SYNTAX: missing include file nofile.i" (s44 M2).
#: A demand of "at least N" is one too (:data:`NEED`, :func:`refuses`).
REFUSED = re.compile(r"^(\w+: *)?halt(ed)?\b|"
                     r"\billegal (value|argument|parameter|option)\b|"
                     r"\billegal \w+ *(?:[(=:] *)?-?\d|"
                     r"\bout of (range|bounds)\b|"
                     r"\btoo (small|large|few|many)\b(?! (errors?|warnings?|failures?)\b)",
                     re.IGNORECASE)
#: A program's demand: "this code requires at least 4 ranks"; what is needed may be named:
#: ScaLAPACK's "need TOTMEM of at least 4863400" (s44 M3).
NEED = re.compile(r"\b(needs?|requires?)((?: \w+){0,2}) at least \d+(?:\.\d+)?\b *([A-Za-z]*)",
                  re.IGNORECASE)
#: A need of memory, disk or time, by its noun before "at least" ("needs memory of at least
#: 1200 MB", an estimate good runs print, s44 review F2, no refusal) ...
QUANTITY = re.compile(r"\b(mem\w*|ram|disk|storage|space|workspace|time|walltime)\b",
                      re.IGNORECASE)
#: ... or by its number's unit ("needs at least 1200 MB"); a noun right after the number is no
#: unit: "requires at least 3 time levels", "2 space dimensions" are counts (s45 review RV2).
UNIT = re.compile(r"^([kKMGTP]i?B|[kKMGT]?bytes?|[kKMG]?words?|[KMG]W|s|secs?|seconds?|"
                  r"mins?|minutes?|h|hrs?|hours?)$", re.IGNORECASE)
#: Words of a refusal, with which a need of a quantity is one: ScaLAPACK's "Unable to perform
#: Hessenberg reduction: need TOTMEM of at least 4863400"; not one denied: "which does not
#: exceed the 64 GB available", "to avoid failure" are a good run's estimates (s45 tester F6).
REFUSAL_WORD = Unnegated(re.compile(r"\bunable\b|\bcannot\b|\bcan't\b|\bcould(?: not|n't)\b|"
                          r"\bnot enough\b|\binsufficient\b|\btoo (?:small|little|few|low)\b|"
                          r"\berror|\babort|\bfail|\bhalt|\bstop|\brefus|\bexceed|\binvalid\b|"
                          r"\bimpossible\b|\bnot possible\b|\bbut only\b|\bonly [\d.]+",
                          re.IGNORECASE), DENIED)
#: A path or a file name with an extension ("/usr/share/x/sto-3gx", "in.ljj", "'md.tpr'").
NAMED_FILE = re.compile(r"(?:^|[\s'\"`(<:=])(?:\.{0,2}/[\w.+-]+(?:/[\w.+-]*)*|"
                        r"[\w+-]+\.[A-Za-z]\w{0,7})(?=$|[\s'\"`)>:,;])")
#: A warning is no cause of the failure that follows it.
WARNING = re.compile(r"\bwarn(ing)?\b", re.IGNORECASE)
#: Words of a line, to compare a copy with its original.
_WORD = re.compile(r"[A-Za-z_]\w*")
#: Words a copy must share, in order, with its original (and at least half its own).
SHARED_WORDS = 3


def _words(line: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(line)]


def restates(line: str, originals: list[str]) -> bool:
    """Whether ``line`` (a stderr error line) repeats one of ``originals`` (stdout's error
    lines): a run of at least :data:`SHARED_WORDS` words, and half of its own, in the same
    order as in one of them."""
    from difflib import SequenceMatcher

    words = _words(line)
    if len(words) < SHARED_WORDS:
        return False
    for original in originals:
        other = _words(original)
        match = SequenceMatcher(None, words, other, autojunk=False).find_longest_match(
            0, len(words), 0, len(other))
        if match.size >= max(SHARED_WORDS, (len(words) + 1) // 2):
            return True
    return False


#: Words of a line saying the program went on without the file: no cause of a later error
#: (s37 reviewer R3: "optional file tuning.dat not found, using built-in defaults" had
#: replaced "solver diverged at step 3" as the reason); or that it recovered from a value it
#: refused (s43 tester K4: "timestep too large for stability, reducing dt to 0.005", "ghost
#: index 7 out of range, clamped to 6", "... needs at least 3 grids, doing without it",
#: "illegal nlev (-1) replaced by 4" had beaten the later "Error: solver diverged ..."); or
#: that it started afresh without it: "chk.h5 not found, starting from scratch", a first run's
#: missing checkpoint, had failed a good run under a missed --fom-regex (s44 review F1). Not
#: where the line denies it: "cannot start from scratch", "no fallback", "fall back not
#: possible" are a program that could not go on (s45 tester F6, :mod:`.negation`). Its words'
#: gaps are bounded: ".*" was quadratic on "using " x N (s45 review RV4).
WENT_ON = Unnegated(re.compile(r"\busing\b.{0,200}\bdefaults?\b|\bignor(?:e|ed|ing)\b|"
                     r"\bskipp(?:ed|ing)\b|"
                     r"\bcontinu(?:e|es|ing)\b|\bfall(?:s|ing)? ?back\b|\bfell back\b|"
                     r"\binstead\b|\bdefaulting to\b|\bdefaults? (?:\w+ )?(?:will be )?used\b|"
                     r"\bfrom (?:scratch|the beginning)\b|\bfresh start\b|"
                     r"\bstart(?:s|ing)? (?:fresh|afresh|anew|over|(?:a )?new (?:run|calculation|"
                     r"simulation|job))\b|\bwill be (?:created|generated)\b|\breduc(?:ed|ing)\b|"
                     r"\bclamp(?:ed|ing)\b|\breplaced (?:by|with)\b|\bdoing without\b|"
                     r"\bwithout it\b|\bresett?(?:ing)?\b.{0,200}\bto\b|"
                     r"\badjust(?:ed|ing)\b.{0,200}\bto\b|"
                     r"\bcapp(?:ed|ing)\b|\btruncat(?:ed|ing)\b.{0,200}\bto\b", re.IGNORECASE),
                    CANNOT, NOT_POSSIBLE)

#: How far before a refusal its program's progress lines are looked for (:func:`went_on_after`).
PROGRESS_LINES = 200
#: A number in a line, masked to compare progress lines: digits only, so "dt=-1" is no step
#: on from "dt=1" ("1.5" none from "15"), as it would be under ``rank_count.line_shape``'s mask.
_DIGITS = re.compile(r"\d+")


def error_line(text: str) -> bool:
    """Whether ``text``, a line with no error word of
    :data:`~hpcds1mpi.measure.program_launch.ERROR_WORDS`, is an error line all the same: it
    says a thing is absent or already there (:data:`ABSENT`), refuses its input or layout
    (:func:`refuses`), or says a file it names is missing (:func:`names_cause`: yorick's
    "SYNTAX: missing include file nofile.i", which had been no error line, s44 tester M2)."""
    return bool(ABSENT.search(text) or refuses(text) or names_cause(text))


def refuses(text: str) -> bool:
    """Whether a line refuses the program's input or layout: :data:`REFUSED`, or a demand
    (:data:`NEED`) of a count ("this grid needs at least 3 levels"), or of a quantity
    (:data:`QUANTITY`, :data:`UNIT`: memory, disk, time) with a refusal word on the line
    (:data:`REFUSAL_WORD`)."""
    if REFUSED.search(text):
        return True
    need = NEED.search(text)
    return bool(need) and (REFUSAL_WORD.search(text) is not None or not (
        QUANTITY.search(need.group(2)) or UNIT.match(need.group(3))))


def names_cause(text: str) -> bool:
    """Whether an error line says a file it names is missing or cannot be opened, or that the
    program refuses its input or layout (:func:`refuses`)."""
    if WARNING.search(text) or WENT_ON.search(text):
        return False
    return bool(MISSING.search(text) and NAMED_FILE.search(text) or refuses(text))


def cause_first(found: list[tuple[int, str]], lines: list[str] | None = None
                ) -> list[tuple[int, str]]:
    """``found`` (error lines with their line index in ``lines``, the stream's program lines,
    in output order) with the line that names the cause of its last report moved last, where
    one does and the program did not go on from it (:func:`went_on_after`; see the module):
    the reason is the last."""
    if len(found) < 2 or names_cause(found[-1][1]):
        return found
    end = found[-1][0]
    errors = {index for index, _ in found}
    for k in range(len(found) - 2, -1, -1):
        index, text = found[k]
        if end - index > REPORT_LINES:
            break
        # A missing file is no value a program goes on from: only a refusal is tried for
        # progress after it (s44 review R6: ranks' copies of set-up lines had read as progress).
        refusal = not (MISSING.search(text) and NAMED_FILE.search(text))
        if names_cause(text) and not (lines and refusal and
                                      went_on_after(lines, index, end, errors)):
            return found[:k] + found[k + 1:] + [found[k]]
    return found


def went_on_after(lines: list[str], at: int, end: int, errors: set[int]) -> bool:
    """Whether the program, after ``lines[at]`` and before ``lines[end]``, wrote again a line
    it wrote in the :data:`PROGRESS_LINES` lines before it, the same but for its numbers and
    with a number in it and not an exact copy (``step 1: dt=0.01`` ... ``step 2: dt=0.005``;
    another rank's copy of a line is no step): its loop resumed, so
    the refusal at ``at`` was no end of the run, whatever words it used (s43 tester K4: a
    recovery not said in :data:`WENT_ON`'s words). ``errors``: the error lines' places, no
    progress."""
    def shape(i: int) -> str | None:
        ln = lines[i]
        return _DIGITS.sub("#", ln) if ln and i not in errors and _DIGITS.search(ln) else None

    window = range(max(0, at - PROGRESS_LINES), at)
    before, copies = {shape(i) for i in window} - {None}, {lines[i] for i in window}
    # An exact copy, numbers and all, is another rank's line (interleaved ranks), no step on.
    return bool(before) and any(shape(i) in before and lines[i] not in copies
                                for i in range(at + 1, min(end, len(lines))))
