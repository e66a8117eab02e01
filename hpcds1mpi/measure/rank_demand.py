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

Only a stream's last :data:`LAST_LINES` lines the program wrote are read (a refusal ends the
run; a banner's or manual's sentence earlier does not), a warning or advice ("WARNING: ...
should be run with at least 4 processes for good performance") never counts, and a line whose
own number the run's rank count satisfies ("needs at least 2 processes" at 4 ranks) is not
about this run.
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
#: A line that advises or warns: the program goes on ("WARNING: ... should be run with at
#: least 4 processes for good performance", "NOTE: ... recommended").
_ADVICE = re.compile(r"^\W*(?:warn(?:ing)?|note|hint|info|tip)\b|\brecommend|\bfor\s+(?:good|"
                     r"better|best)\b|\befficien|\bperformance\b|\bfaster\b|\bconsider\b",
                     re.IGNORECASE)
#: The number a line's demand names with how it binds: "at least 3", "more than 1",
#: "a multiple of 4", "requires 4".
_BOUND = re.compile(r"\b(at\s+least|(?:strictly\s+)?(?:more|greater|larger)\s+than|exactly|"
                    r"a\s+multiple\s+of|)\s*(\d+)\s+(?:\w+\s+){0,2}?" + _NOUN + r"\b|"
                    r"\b(at\s+least|(?:strictly\s+)?(?:more|greater|larger)\s+than|exactly|"
                    r"a\s+multiple\s+of)\s+(\d+)\b", re.IGNORECASE)
#: Lines read from the end of each stream: a refusal ends the run (see the module).
LAST_LINES = 20


def rank_demand(stdout: str, stderr: str, ranks: int) -> str:
    """The line (escaped, cut at 300) in which the program says it needs another number of
    processes than the ``ranks`` it was given, stdout's first; "" when none does."""
    from hpcds1mpi.measure.printable import clipped, printable
    from hpcds1mpi.measure.program_lines import kept_lines

    for text in (stdout, stderr):
        lines = [ln for ln in kept_lines(text) if ln][-LAST_LINES:]
        for ln in lines:
            demand = RANK_DEMAND.search(ln)
            if demand and not _ADVICE.search(ln) and not _satisfied(ln[demand.start():], ranks):
                return clipped(printable(ln, keep="\t"), 300)
    return ""


def _satisfied(demand: str, ranks: int) -> bool:
    """Whether ``ranks`` meets the number the ``demand`` (a line from its demand word on)
    names ("needs at least 2 processes" at 4 ranks): then the line is not about this run.
    False where it names no number."""
    bound = _BOUND.search(demand)
    if bound is None:
        return False
    how = (bound.group(1) if bound.group(2) else bound.group(3) or "").lower()
    n = int(bound.group(2) or bound.group(4))
    if how.startswith("at"):
        return ranks >= n
    if "than" in how:
        return ranks > n
    if how.startswith("a"):
        return n > 0 and ranks % n == 0
    return ranks == n


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
