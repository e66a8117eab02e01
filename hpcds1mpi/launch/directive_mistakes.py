"""Directive mistakes the scheduler does not report where the user looks: ``#SBATCH`` /
``#PBS`` lines after the first command, which it skips without a word, and a ``$`` in a
directive's value, which it never expands.

``sbatch`` and ``qsub`` read directives as text: ``#SBATCH --nodes=$NNODES`` is refused
(``"$NNODES" is not a valid node count``) and ``--job-name=run_$X`` names the job ``run_$X``.
A value it parses (counts, times, memory, GPUs, a partition) is refused in one line; a value it
keeps as written (a name, a path, an export list) gets a note (s29 tester D9). A time limit it
cannot parse is refused the same way (``check_time_form``, s35 tester T8), and so is a memory
size sbatch refuses (``memory_forms.py``, s41 tester B9) and a count (``count_forms.py``, s47
tester M4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcds1mpi.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript
    from hpcds1mpi.launch.script_options import Option

#: Options whose value the scheduler keeps as text, ``$`` and all (the test Slurm accepts each
#: with a ``$``; a site may still refuse an account or QOS of that name).
TEXT_VALUED = {
    "slurm": {"job-name", "output", "error", "input", "comment", "chdir", "export",
              "export-file", "mail-user", "wckey", "account", "qos", "reservation",
              "extra", "container", "bb", "bbf"},  # s29 R5: free text or a path
    "pbs": {"N", "o", "e", "v", "M", "A", "d", "D", "P"},
}
_TOOL = {"slurm": "sbatch", "pbs": "qsub"}


def _spelled(opt: "Option", scheduler: str) -> str:
    if scheduler == "pbs":
        return f"-l {opt.name[2:]}={opt.value}" if opt.name.startswith("l:") else \
            f"-{opt.name} {opt.value}"
    return f"--{opt.name}={opt.value}"


def check_unexpanded(script: "JobScript", opt: "Option", magic: str) -> None:
    """Refuse (or note, for a value kept as text) a directive value with a ``$`` in it."""
    if not opt.name or opt.value is None or "$" not in opt.value:
        return
    tool, spelled = _TOOL[script.scheduler], _spelled(opt, script.scheduler)
    if opt.name in TEXT_VALUED[script.scheduler]:
        script.note(f"line {opt.line}: {magic} {spelled[:80]}: {tool} does not expand "
                    "variables in directives, so the value is taken as written; write the "
                    "value itself")
        return
    raise ConfigError(f"line {opt.line}: {magic} {spelled[:80]}: {tool} does not expand "
                      "variables in directives and refuses this value; write the value "
                      f"itself, or pass it when submitting, where the shell expands it ({tool} "
                      f"{spelled[:80]} SCRIPT)")


#: Directives whose value is a time limit, by scheduler (``-t`` is read as ``time``).
TIME_VALUED = {"slurm": ("time", "time-min"), "pbs": ("l:walltime",)}


def check_time_form(script: "JobScript", opt: "Option", magic: str) -> None:
    """Refuse a time limit the scheduler refuses: ``--time=Partition_Limit`` or ``1:2:3:4``
    was "cannot read time ...; ignored" and advised, while sbatch refuses the script
    ("Invalid --time specification", s35 tester T8); a value it takes but this reader cannot
    read stays a note."""
    if opt.name not in TIME_VALUED[script.scheduler] or opt.value is None or "$" in opt.value:
        return
    from hpcds1mpi.launch.time_forms import (PBS_FORMS, SLURM_FORMS, pbs_walltime_accepted,
                                             slurm_time_accepted)

    slurm = script.scheduler == "slurm"
    if (slurm_time_accepted if slurm else pbs_walltime_accepted)(opt.value):
        return
    refusal = '"Invalid --time specification"' if slurm else "an illegal walltime"
    raise ConfigError(f"line {opt.line}: {magic} {_spelled(opt, script.scheduler)[:80]}: "
                      f"{_TOOL[script.scheduler]} refuses this time limit ({refusal}); write "
                      f"{SLURM_FORMS if slurm else PBS_FORMS}")


def check_value_form(script: "JobScript", opt: "Option", magic: str) -> None:
    """Refuse a directive value the scheduler refuses: a time limit (:func:`check_time_form`),
    a Slurm memory size (:func:`~hpcds1mpi.launch.memory_forms.check_memory_form`) or count
    (:func:`~hpcds1mpi.launch.count_forms.check_count_form`)."""
    from hpcds1mpi.launch.count_forms import check_count_form
    from hpcds1mpi.launch.memory_forms import check_memory_form

    check_time_form(script, opt, magic)
    check_memory_form(script, opt, magic)
    check_count_form(script, opt, magic)


#: Ranges of line numbers a note lists; past them it says how many lines more.
SHOWN_RANGES = 10


def _ranges(numbers: list[int], shown: int = SHOWN_RANGES) -> str:
    """``4-6, 9`` of sorted line numbers: the first ``shown`` ranges, then how many lines
    more ("and 12,000 more"). A generated script alternating directives and commands had
    made one 23,631-character note (s29 tester H8)."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    listed = ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in runs[:shown])
    more = sum(b - a + 1 for a, b in runs[shown:])
    return f"{listed} and {more:,} more" if more else listed


def late_directives_note(script: "JobScript", lines: list[int], magic: str) -> str:
    """The note on directive ``lines`` after the script's first command ("" when none): the
    scheduler skips them without a word, the most common mistake in a job script (s29 tester
    D5); the request read, and any ``--rewrite``, leave them out."""
    if not lines or script.first_command is None:
        return ""
    first = script.text.split("\n")[script.first_command - 1].strip()
    first = first if len(first) <= 40 else first[:37] + "..."
    which = f"line{'s' if len(lines) > 1 else ''} {_ranges(lines)}"
    them = "them" if len(lines) > 1 else "it"
    return (f"{which}: {magic} after the first command (line {script.first_command}: "
            f"{first}): {_TOOL[script.scheduler]} ignores {them}, and so do this reading and "
            f"--rewrite (which leaves {them} as written); move {them} above it")
