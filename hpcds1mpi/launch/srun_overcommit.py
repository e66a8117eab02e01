"""srun's ``--overcommit`` for a step asking more CPUs of a node than the allocation holds.

Inside an allocation srun refuses a step whose ranks per node x ``-c`` threads exceed the
CPUs the allocation gives a node ("Unable to create step ... More processors requested than
permitted"), unless told ``--overcommit`` / ``-O``. A sweep measures the configurations it was
asked for, oversubscribed ones included, with their contention (as Open MPI's mpirun is given
``--oversubscribe``; ``--valid-only`` leaves them out): so srun is given ``--overcommit`` for
them, and says so (s31 tester P4: they had been recorded as the program's failures).
"""

from __future__ import annotations

from typing import Sequence

from hpcds1mpi.config import Configuration

#: How a sweep's pre-flight says such configurations run under srun.
OVERCOMMITTED = ("srun is given --overcommit for them (it refuses such a step without it), so "
                 "their ranks' threads share cpus")


def asks_overcommit(args: Sequence[str]) -> bool:
    """Whether the user's srun options already give ``-O`` / ``--overcommit`` (or srun's
    accepted abbreviation of it, ``--overc``...)."""
    return any(word == "-O" or (word.startswith("--overc") and "--overcommit".startswith(word))
               for word in args)


def overcommitted(config: Configuration, cpus: int | None) -> bool:
    """Whether ``config`` asks more CPUs of a node than ``cpus`` (unknown: never)."""
    return bool(cpus) and config.ranks_per_node * config.threads > cpus


def overcommit_tokens(config: Configuration, cpus: int | None,
                      args: Sequence[str]) -> list[str]:
    """``["--overcommit"]`` where srun would refuse ``config``'s step, unless ``args`` say it."""
    return ["--overcommit"] if overcommitted(config, cpus) and not asks_overcommit(args) else []


def overcommit_note(config: Configuration, cpus: int | None, args: Sequence[str]) -> str:
    """The one line saying srun was given ``--overcommit`` for ``config`` ("" when not)."""
    if not overcommit_tokens(config, cpus, args):
        return ""
    return (f"{config.ranks_per_node} rank(s) x {config.threads} thread(s) on a node whose "
            f"allocation holds {cpus} cpu(s): srun is given --overcommit (it refuses such a "
            "step without it), so their threads share cpus and the time includes the "
            "contention (--valid-only leaves such configurations out)")
