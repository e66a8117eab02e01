"""Telling a batch script written for another scheduler than Slurm or PBS.

The script reader takes ``#SBATCH`` and ``#PBS`` directives; an LSF, Grid Engine, Cobalt, Flux,
LoadLeveler, Moab, OAR or HTCondor job read as a Slurm one asks for one node and one rank with
no time limit, and advise "recommends" the layout the job already has (s35 tester X1: an LSF
``#BSUB -n 4 -R "span[ptile=2]"`` job was read as 1 node x 1 rank and ``--rewrite`` added
``#SBATCH`` lines bsub ignores). :func:`check_scheduler` refuses such a script in one line.

Directives are judged as the schedulers read them: lines at column 0 in the script's header,
before its first command (blank and comment lines do not end it), whose prefix is followed by an
option (``#BSUB -n 4``, ``#$ -pe orte 4``): a ``#$`` comment or the word BSUB in a comment or
string does not count. A script with ``#SBATCH`` / ``#PBS`` directives as well is a portable one
and read as the Slurm / PBS script it also is, with one note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hpcds1mpi.errors import ConfigError

#: (the scheduler with its article, its directive prefix, the directive line at column 0).
FOREIGN_DIRECTIVES = (
    ("an LSF", "#BSUB", re.compile(r"#BSUB\s+-")),
    ("a Grid Engine", "#$", re.compile(r"#\$\s*-[A-Za-z]")),
    ("a Cobalt", "#COBALT", re.compile(r"#COBALT\s+-")),
    ("a Flux", "#flux:", re.compile(r"#\s*flux:\s*-")),
    ("a LoadLeveler", "# @", re.compile(
        r"#\s*@\s*(job_type|class|node|tasks_per_node|total_tasks|wall_clock_limit|queue)\b")),
    ("a Moab", "#MSUB", re.compile(r"#MSUB\s+-")),
    ("an OAR", "#OAR", re.compile(r"#OAR\s+-")),
)
#: What the reader reads, for the refusal.
READ_HERE = "advise reads Slurm (#SBATCH) and PBS (#PBS) scripts only"
#: HTCondor's submit description: ``key = value`` lines of its own keys and a ``queue``
#: statement, no ``#!``; two keys at least, spaced as HTCondor writes them, so that a shell
#: script's ``executable=./a.out`` and ``queue`` variables are none (s35 review 4).
_CONDOR_KEY = re.compile(r"(?im)^[ \t]*(universe|executable|arguments|output|error|log|"
                         r"request_cpus|request_memory|getenv|requirements|"
                         r"should_transfer_files)[ \t]+=[ \t]")
_CONDOR_QUEUE = re.compile(r"(?im)^[ \t]*queue\b")
#: A Slurm or PBS directive anywhere: such a script is none of HTCondor's.
_OWN = re.compile(r"(?m)^#(SBATCH|PBS)\b")


@dataclass(frozen=True)
class ForeignScript:
    """Another scheduler's job: which one (with its article), what shows it, and where."""

    scheduler: str
    sign: str
    line: int

    def what(self) -> str:
        """``an LSF script (#BSUB directives, line 2)``."""
        if self.scheduler.endswith("HTCondor"):
            return f"{self.scheduler} submit description ({self.sign} =, line {self.line})"
        return f"{self.scheduler} script ({self.sign} directives, line {self.line})"


def _header(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the script's lines before its first command."""
    out = []
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        out.append((number, line))
    return out


def foreign_script(text: str) -> ForeignScript | None:
    """The other scheduler whose directives open ``text`` (the first one's), or None."""
    for number, line in _header(text):
        for scheduler, prefix, pattern in FOREIGN_DIRECTIVES:
            if pattern.match(line):
                return ForeignScript(scheduler, prefix, number)
    if not text.startswith("#!") and _CONDOR_QUEUE.search(text) and not _OWN.search(text):
        keys = list(_CONDOR_KEY.finditer(text))
        key = keys[0] if len({k.group(1).lower() for k in keys}) >= 2 else None
        if key is not None:
            line = text.count("\n", 0, key.start()) + 1
            return ForeignScript("an HTCondor", key.group(1), line)
    return None


def check_scheduler(text: str, own_prefixes, where: str = "") -> str | None:
    """Refuse a script written for another scheduler, in one line; return a note for a script
    with both its own directives (``own_prefixes``: ``#SBATCH``, ``#PBS``) and another's.

    Args:
        text: the script's text.
        own_prefixes: the directive prefixes the reader reads, at column 0 of the header.
        where: ``"name: "`` to start the error with, or "".

    Raises:
        ConfigError: another scheduler's script without a Slurm / PBS directive.
    """
    foreign = foreign_script(text)
    if foreign is None:
        return None
    own = next((prefix for _, line in _header(text) for prefix in own_prefixes
                if line.startswith(prefix)), None)
    if own is None:
        raise ConfigError(f"{where}this looks like {foreign.what()}: {READ_HERE}; give advise "
                          "the job as a Slurm or PBS script (its request in #SBATCH or #PBS "
                          "lines)")
    reader = "qsub" if own == "#PBS" else "sbatch"
    return (f"line {foreign.line}: {foreign.scheduler.split(' ', 1)[1]} directives "
            f"({foreign.sign}) are comments to {reader}; the {own} ones are read")


__all__ = ["FOREIGN_DIRECTIVES", "ForeignScript", "check_scheduler", "foreign_script"]
