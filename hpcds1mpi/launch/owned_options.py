"""Launcher options that set what a configuration sets: its rank count, nodes, ranks per node,
cpus per rank and threads.

A user's launcher options (``--launcher-args``, a cluster file's ``launcher_args``) are
written after the launcher's own, so one that sets the rank count wins over the sweep's
``-n`` (Open MPI takes the last ``-np``), and one that gives the ranks ``OMP_NUM_THREADS``
(hydra's ``-genv`` / ``-env``, Open MPI's ``-x NAME=VALUE``, srun's ``--export``) over the
environment the configuration sets: the run was recorded as 1 rank / 1 thread where 2 ran
(s36 tester M3). :func:`refuse_owned` refuses them in one line naming the sweep's option
that sets it, or for a job script (whose layout is the configuration it writes) saying to
remove it. Options that only bind or place on hosts are the user's (the sweep records
them; where ranks land is asked by :mod:`~.rank_hosts`).
"""

from __future__ import annotations

from typing import Sequence

from hpcds1mpi.errors import ConfigError

_RANKS = ("the rank count", "--nodes x --ranks-per-node")
_PER_NODE = ("the ranks per node", "--ranks-per-node")
_NODES = ("the node count", "--nodes")
_THREADS = ("the threads per rank", "--threads")
#: Option (as written, before any ``=``) -> (what it sets, the sweep's option that sets it):
#: hydra's (MPICH, Intel MPI), Open MPI's (``-c`` is its ``-np``) and srun's spellings.
OWNED = {
    **dict.fromkeys(("-n", "-np", "--np", "--n", "--ntasks"), _RANKS),
    **dict.fromkeys(("-ppn", "-perhost", "-npernode", "--npernode", "-pernode", "--pernode",
                     "-rr", "-grr", "--ntasks-per-node"), _PER_NODE),
    **dict.fromkeys(("--nodes",), _NODES),
    **dict.fromkeys(("--cpus-per-task",), _THREADS),
}
#: Options whose meaning is the launcher's: Open MPI's ``-c`` is its ``-np``, ``-N`` its
#: ranks per node; srun's are cpus per task and nodes. Both are a configuration's.
_EITHER = {"-c": ("the rank count (Open MPI's -c) or the cpus per rank (srun's)",
                  "--ranks-per-node / --threads"),
           "-N": ("the ranks per node (Open MPI's -N) or the node count (srun's)",
                  "--ranks-per-node / --nodes")}
#: Variables the configuration sets for the ranks' threads (:func:`~.program.environment`).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "HPCDS1MPI_THREADS")
#: Options that set one variable for the ranks: hydra's ``-genv NAME VALUE`` / ``-env``,
#: Open MPI's ``-x NAME=VALUE`` (``-x NAME`` passes mpirun's own, the configuration's: kept),
#: srun's ``--export=NAME=VALUE,...``.
_SETS_VARIABLE = ("-genv", "-env", "--genv", "--env")
_EXPORTS = ("-x", "--x", "--export")


def owned_option(args: Sequence[str]) -> tuple[str, str, str] | None:
    """(the option as given, what it sets, the sweep's option that sets it) for the first of
    launcher options ``args`` that sets what a configuration sets; None when none does."""
    words = [str(w) for w in args]
    for i, word in enumerate(words):
        name, eq, value = word.partition("=")
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if name in OWNED:
            return (word if eq else f"{word} {nxt}".strip()), *OWNED[name]
        if name in _EITHER:
            return (f"{word} {nxt}".strip(), *_EITHER[name])
        if name == "--map-by" or name == "-map-by":
            mapping = value if eq else nxt
            if mapping.startswith("ppr:") and ":node" in mapping:
                return (word if eq else f"{word} {nxt}"), *_PER_NODE
        if name in _SETS_VARIABLE:
            variable = (value if eq else nxt).partition("=")[0]
            if variable in THREAD_VARIABLES:
                shown = word if eq else " ".join(words[i:i + 3])
                return shown, *_THREADS
        if name in _EXPORTS:
            given = value if eq else nxt
            for item in given.split(","):
                variable, set_to, _ = item.partition("=")
                if set_to and variable in THREAD_VARIABLES:
                    return (word if eq else f"{word} {nxt}"), *_THREADS
    return None


def refuse_owned(args: Sequence[str], what: str = "--launcher-args",
                 script: bool = False) -> None:
    """Refuse launcher options ``args`` (from ``what``) that set what a configuration sets.
    ``script``: they are for a job script, which sets the layout from the configuration it
    writes (``recommend --emit``: no ``--threads`` to give, s36 review 2), not for a sweep.

    Raises:
        ConfigError: one line naming the option, what it sets and, for a sweep, the sweep's
            option for it.
    """
    found = owned_option(args)
    if found is None:
        return
    option, sets, ours = found
    if script:
        raise ConfigError(f"{what} {option!r} sets {sets}, which the script sets from the "
                          "configuration it writes (the job would run another layout than "
                          f"that one); remove it from {what}")
    raise ConfigError(f"{what} {option!r} sets {sets}, which the sweep sets from {ours} (a run "
                      "would be recorded with a layout that did not run); remove it from "
                      f"{what} and give {ours}")
