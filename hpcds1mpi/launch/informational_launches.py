"""Launcher lines that start no ranks: ``mpirun --version``, ``srun --test-only ...``.

A launcher given one of these options prints something (its version, its usage, when a job
step would start, a map of where ranks would go) and exits without running the program: such a
line is no launch. Read as one, a ``mpirun --version`` before the real launch made advise say
"the program mpirun starts could not be read" and "the script launches more than once" and keep
the whole walltime (s42 tester F3).

Only the launcher's own words count (those before the program): ``mpirun ./app --version`` is a
launch of ``./app``, whatever ``./app`` does with the word.
"""

from __future__ import annotations

from hpcds1mpi.launch.script_options import (TABLES, Word, launcher_kind, mpi_options,
                                              slurm_options)

#: Options with which the launcher exits before it starts a rank, by option table
#: (:func:`~hpcds1mpi.launch.script_options.launcher_kind`), as written (``=value`` cut off).
#: srun(1): ``--version``/``-V``, ``--help``/``-h``, ``--usage``, ``--test-only`` (validates the
#: request and says when it would start), ``--mpi=list``. Open MPI's mpirun/prterun:
#: ``--version``/``-V``, ``--help``/``-h``, ``--do-not-launch`` (with ``--display-map``);
#: hydra (MPICH, Intel MPI), one or two dashes alike: ``-version``, ``-V`` (Intel), ``-help``,
#: ``-h``, ``-info`` (its build). aprun and ibrun: none known, read as launches.
_NO_RANKS = {
    "slurm": frozenset({"--version", "-V", "--help", "-h", "--usage", "--test-only",
                        "--mpi=list"}),
    "mpi": frozenset({"version", "V", "help", "h", "info", "do-not-launch"}),
}


def starts_no_ranks(command: list[str]) -> str | None:
    """The option, as written, with which the launcher line ``command`` (a simple command's
    words, the launcher first) starts no ranks; None for a launch or another command."""
    kind = launcher_kind(command[0]) if command else None
    table = _NO_RANKS.get(kind)
    if table is None:
        return None
    rest = [Word(text, i, i + 1, text) for i, text in enumerate(command[1:])]
    for word in _launcher_words(rest, kind):
        spelled = word.text if kind == "slurm" else word.text.lstrip("-").partition("=")[0]
        if spelled in table:
            return word.text
    return None


def _launcher_words(rest: list[Word], kind: str) -> list[Word]:
    """The words of ``rest`` (a launcher line's, after the launcher) before the program."""
    at = 0
    while at < len(rest):
        if kind == "slurm":  # its notes are said where the line is read as a launch
            options = slurm_options(rest[at:], 0, lambda _line: None)
        else:
            options = mpi_options(rest[at:], 0, TABLES[kind])
        operand = next((o for o in options if not o.name), None)
        if operand is None:
            return rest
        at = next(i for i, w in enumerate(rest) if w.start == operand.span[0])
        if not rest[at].text.startswith("-"):
            return rest[:at]  # the program
        at += 1  # an option srun's table lacks (``-V``): read on after it
    return rest
