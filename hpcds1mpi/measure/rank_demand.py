"""A program that says it cannot run with the number of processes it was given.

MPI programs often check their communicator's size and quit with one line, and some exit 0:
mplrs at 2 ranks prints "mplrs requires at least 3 processes." and nothing else, exit 0, having
enumerated nothing; it was stored ``ok``, and recommend picked that layout at confidence 1.00
(s43 tester G1). :func:`refused_rank_count` makes such a launch ``failed``, whatever its exit
code, the program's line its reason, so no model learns a run that did no work.

The pattern set (:data:`RANK_DEMAND`) was built from these texts: mplrs's "mplrs requires at
least 3 processes." (2 ranks, exit 0), TREE-PUZZLE's "Halt: TREE-PUZZLE needs at least 2
processes for a parallel run!!!" (``tree-ppuzzle`` at 1 rank, exit 1), PhyML's "The number of
CPUs used in the MPI bootstrap analysis should be strictly greater than 1", HPL's ">>> Need at
least 4 processes for these tests <<<", and the common forms "must be run with at least 4
processes", "This example requires 4 MPI tasks", "number of processes must be a multiple of
4", "World size must be greater than 1", "nprocs must be a power of 2", "too few processes",
"invalid number of MPI ranks", "At least 2 MPI processes are required". It was checked to
stay silent on the outputs of hpcc, LAMMPS, LIGGGHTS, mplrs at 3 and 4 ranks, Elk and the
kernels, which *print* their process counts ("Loop time of 0.1 on 2 procs", "1 by 1 by 2 MPI
processor grid", "CommWorldProcs=2", "using 1 OpenMP thread(s) per MPI task", mplrs's "3
processes"): a line counts only where a demand word (requires, needs, must, should, at least,
a multiple of, too few, ...) governs a process noun.

Only a stream's last lines the program wrote count, those after which it wrote nothing but
the same refusal or exit / MPI trailers (a refusal ends the run; a banner's sentence earlier, or
a check followed by more work, does not); a warning, advice or a line saying the program goes
on ("skipping it, using Jacobi", "ideally") never counts; and the rule a line states is read in
full (at least, N or more, at most, more / fewer than, exactly, a multiple of, a power of two,
even, odd, between A and B) and one the run's rank count meets, a per-node count, or a rule it
cannot read is not a refusal (s43 tester K1, K2): a good run failed is worse than a refusal
missed, which ``--fail-regex`` records.
"""

from __future__ import annotations

import re

#: A process noun as programs write one: processes, procs, processors, (MPI) ranks / tasks,
#: CPUs, PEs, and the world's or communicator's size.
_NOUN = (r"(?:processes|process(?:\(es\))?|processors?|procs?|ranks|(?:MPI\s+)?tasks?|"
         r"MPI\s+ranks?|cpus?|PEs|processing\s+elements|"
         r"(?:MPI\s+)?(?:world|communicator|comm)\s+size|n_?procs?|num_?procs|n_?ranks|np)")
#: The nouns that name MPI processes only: Open MPI's own "not enough cpus are available" (a
#: binding it cannot make) is the launcher's, not the program's.
_RANKS = r"(?:processes|processors?|procs|ranks|(?:MPI\s+)?tasks)"
#: A quantity a demand names: "at least 3", "exactly 4", "a multiple of 4", "an even number of".
_AMOUNT = (r"(?:at\s+least|at\s+most|exactly|(?:strictly\s+)?(?:more|greater|larger|fewer|less)"
           r"\s+than|a\s+(?:multiple|divisor|power)\s+of|an?\s+(?:even|odd|square|perfect\s+"
           r"square)\s+number\s+of|\d+)")
#: A line saying the program needs another number of processes than it has (see the module).
RANK_DEMAND = re.compile(
    # requires / needs / must be run with / is meant to be run with / expects ... N processes
    r"\b(?:requires?|required|needs?|needed|expects?|expected|(?:must|should|has\s+to|have\s+to"
    r"|is\s+meant\s+to|is\s+designed\s+to)\s+(?:be\s+)?(?:run|started|launched|used|executed)"
    r"\s+(?:with|on|using)|please\s+(?:re)?run\s+(?:it\s+)?(?:with|on|using)|only\s+(?:works|"
    r"runs|supported)\s+(?:with|on)|cannot\s+(?:be\s+)?run\s+(?:with|on))\s+(?:only\s+)?"
    rf"{_AMOUNT}\s+(?:\w+\s+){{0,2}}?{_NOUN}\b"
    # the number of processes must be / should be strictly greater than 1 / a multiple of 4
    rf"|\b(?:number\s+of\s+(?:\w+\s+)?{_NOUN}|{_NOUN})\b[^.;:!]{{0,60}}?\b(?:must|should|has\s+"
    r"to|have\s+to|needs?\s+to)\s+be\s+(?:strictly\s+)?(?:at\s+least|at\s+most|exactly|greater|"
    r"larger|bigger|more|less|fewer|smaller|equal|a\s+(?:multiple|divisor|power|perfect)|an?\s+"
    r"(?:even|odd|square)|even|odd|divisible|square|\d+|one\s+of|between)\b"
    # the number of processes 3 is not a power of two
    rf"|\b{_NOUN}\b[^.;:!]{{0,40}}?\bis\s+not\s+(?:a\s+(?:multiple|divisor|power)\s+of|"
    r"(?:an?\s+)?(?:even|odd|perfect\s+square|square(?:\s+number)?)\b|divisible\s+by)"
    # too few processes / not enough MPI ranks / invalid number of processes
    rf"|\b(?:not\s+enough|too\s+(?:few|many)|insufficient)\s+(?:MPI\s+)?{_RANKS}\b"
    rf"|\b(?:invalid|wrong|bad|unsupported|illegal|incorrect)\s+(?:number|count)\s+of\s+"
    rf"(?:MPI\s+)?{_NOUN}\b"
    # at least 2 MPI processes are required
    rf"|\b{_AMOUNT}\s+(?:MPI\s+)?{_NOUN}\s+(?:are|is)\s+(?:required|needed|necessary)\b",
    re.IGNORECASE)
#: A line that advises or warns, or says the program goes on (s43 tester K2): "WARNING: ...
#: should be run with at least 4 processes for good performance", "... per level; skipping it,
#: using Jacobi.", "needs 4 processes per node ideally", "requires at least 2 processes to go
#: fast", "verification skipped"; or that its check passed ("... equal to 4 -- passed").
_ADVICE = re.compile(r"^\W*(?:warn(?:ing)?|note|hint|info|tip)\b|\brecommend|\bfor\s+(?:good|"
                     r"better|best)\b|\befficien|\bperformance\b|\bfast(?:er)?\b|\bslow(?:er|"
                     r"ly)?\b|\bconsider\b|\bideal(?:ly)?\b|\boptimal\b|\bskip(?:s|ped|ping)?\b|"
                     r"\bcontinu(?:e|es|ed|ing)\b|\bfall(?:s|ing)?\s+back\b|\binstead\b|"
                     r"\bgoing\s+on\b|[;,:.)-]\s*(?:and\s+|so\s+)?using\b|\bpass(?:ed|es)?\b|"
                     r"\bfine\b|\bok(?:ay)?\b|\bno\s+errors?\b|\bsatisfied\b",
                     re.IGNORECASE)
#: A count of processes per node, GPU, level, ...: not the run's rank count, so never judged
#: (s43 tester K1: "requires 1 process per node" at 2 ranks had failed the run).
_PER = re.compile(_NOUN + r"\s+(?:per|for\s+each|on\s+each|each)\b|\bper\s+(?:node|host|gpu|"
                  r"socket|core|level|group|device|card|replica|image)\b", re.IGNORECASE)
#: A line's stated verdict on the run's count, no rule needed: "too few processes", "not
#: enough MPI ranks", "invalid number of processes".
_VERDICT = re.compile(rf"\b(?:not\s+enough|too\s+(?:few|many)|insufficient)\s+(?:MPI\s+)?"
                      rf"{_RANKS}\b|\b(?:invalid|wrong|bad|unsupported|illegal|incorrect)\s+"
                      rf"(?:number|count)\s+of\s+(?:MPI\s+)?{_NOUN}\b", re.IGNORECASE)
_N = r"(\d+)"
#: The rules a line can state, each read in full, with the test of a rank count against it
#: (s43 tester K1: before, only at least / more than / a multiple of / exactly were checked,
#: and "even", "a power of two", "between 1 and 64", "2 or more" failed runs that met them).
_RULES = [
    (re.compile(rf"\bbetween\s+{_N}\s+and\s+{_N}\b", re.I), lambda r, a, b: a <= r <= b),
    (re.compile(rf"\b(?:at\s+least|no\s+(?:fewer|less)\s+than|not\s+(?:fewer|less)\s+than|"
                rf"a\s+minimum\s+of|minimum\s+(?:of\s+)?)\s*{_N}\b|\b{_N}\s+or\s+more\b", re.I),
     lambda r, a, b=None: r >= (a if a is not None else b)),
    (re.compile(rf"\b(?:at\s+most|no\s+more\s+than|not\s+more\s+than|a\s+maximum\s+of|"
                rf"maximum\s+(?:of\s+)?)\s*{_N}\b|\b{_N}\s+or\s+(?:fewer|less)\b", re.I),
     lambda r, a, b=None: r <= (a if a is not None else b)),
    (re.compile(rf"\b(?:more|greater|larger|bigger)\s+than\s+{_N}\b", re.I),
     lambda r, a: r > a),
    (re.compile(rf"\b(?:fewer|less|smaller)\s+than\s+{_N}\b", re.I), lambda r, a: r < a),
    (re.compile(rf"\b(?:a\s+multiple\s+of|divisible\s+by)\s+{_N}\b", re.I),
     lambda r, a: a > 0 and r % a == 0),
    (re.compile(r"\ba\s+power\s+of\s+(?:2|two)\b", re.I), lambda r: r & (r - 1) == 0),
    (re.compile(r"\b(?:a\s+)?(?:perfect\s+)?square\b", re.I),
     lambda r: round(r ** 0.5) ** 2 == r),
    (re.compile(r"\beven\b", re.I), lambda r: r % 2 == 0),
    (re.compile(r"\bodd\b", re.I), lambda r: r % 2 == 1),
    (re.compile(rf"\b(?:exactly|equal\s+to|must\s+be|should\s+be|has\s+to\s+be)\s+{_N}\b|"
                rf"\b{_N}\s+(?:\w+\s+){{0,2}}?{_NOUN}\b", re.I), lambda r, a, b=None: r == (
                    a if a is not None else b)),
]
#: The count a line says it got: "(got 4)", "4 given", "running on 4".
_GOT = re.compile(rf"\b(?:got|given|have|has|running\s+(?:on|with)|found)\s*:?\s*{_N}\b|"
                  rf"\b{_N}\s+(?:\w+\s+)?(?:given|found|available|used|requested)\b", re.I)
#: A line after a refusal that is no more work: a separator, an abort or exit notice, the
#: launcher's or MPI's trailer, a usage line (the program quit at the refusal).
_TRAILER = re.compile(r"^[^A-Za-z0-9]*$|\babort|\bexit|\bterminat|\bfinali[sz]|\bhalt|\bstop|"
                      r"\bquit|\busage\b|\bkill|\bMPI_|\bmpirun|\bmpiexec|\bsrun\b|\bhydra|"
                      r"\berror\s*code|\bprocess(?:es)?\s+returned|\bbye\b", re.IGNORECASE)
#: Lines read from the end of each stream: a refusal ends the run (see the module).
LAST_LINES = 20


def rank_demand(stdout: str, stderr: str, ranks: int) -> str:
    """The line (escaped, cut at 300) in which the program says it needs another number of
    processes than the ``ranks`` it was given, stdout's first; "" when none does. Only a
    stream's last lines count, those after which it wrote nothing but the same refusal or
    exit / MPI trailers (s43 tester K2: a run that printed more work did not quit there)."""
    from hpcds1mpi.measure.printable import clipped, printable
    from hpcds1mpi.measure.program_lines import kept_lines

    for text in (stdout, stderr):
        lines = [ln for ln in kept_lines(text) if ln][-LAST_LINES:]
        for ln in reversed(lines):
            if refuses(ln, ranks):
                return clipped(printable(ln, keep="\t"), 300)
            if not _TRAILER.search(ln) and not RANK_DEMAND.search(ln):
                break  # the program's work after any earlier line: it did not quit there
    return ""


def refuses(line: str, ranks: int) -> bool:
    """Whether ``line`` states a process-count requirement that ``ranks`` does not meet,
    read in full (:data:`_RULES`) or as a verdict ("too few processes"); advice, a line saying
    the program goes on, a per-node count, and a rule it cannot read are no refusal: a good
    run failed is worse than a refusal missed, which ``--fail-regex`` records."""
    demand = RANK_DEMAND.search(line)
    if not demand or _ADVICE.search(line) or _PER.search(line):
        return False
    if _VERDICT.search(line):
        return True
    met = _meets(line, ranks)
    if met is None or met:
        return False
    got = _GOT.search(line)
    count = got and int(got.group(1) or got.group(2))
    return not (count and _meets(line, count))  # "(got 4)" meeting it: not this run's


def _meets(line: str, ranks: int) -> bool | None:
    """Whether ``ranks`` meets the first rule :data:`_RULES` reads in ``line``; None where it
    reads none."""
    for rule, test in _RULES:
        found = rule.search(line)
        if found:
            return test(ranks, *[int(g) if g else None for g in found.groups()])
    return None


def refused_rank_count(result: dict, status: str, error: str) -> tuple[str, str]:
    """(``status``, reason) of a launch ``result`` classified ``status`` / ``error``: ``failed``
    with the program's own line where it says it cannot run at ``result["ranks"]`` processes
    (:func:`rank_demand`), whatever its exit code; otherwise unchanged. A launch the launcher
    refused or that the allocation's end interrupted is never the program's and is kept."""
    if status in ("unsupported", "interrupted"):
        return status, error
    ranks = int(result.get("ranks", 1) or 1)
    said = rank_demand(result["stdout"], result["stderr"], ranks)
    if not said:
        return status, error
    code = result["exit_code"]
    head = "exit 0, but" if code == 0 else f"exit code {code}:"
    return "failed", (f"{head} the program refused to run at {ranks} rank{'s' * (ranks != 1)}: "
                      f"{said}")
