"""A site's OpenMP binding variables, kept away from this process and from the runs it starts.

A shell's ``OMP_PROC_BIND`` / ``OMP_PLACES`` / ``GOMP_CPU_AFFINITY`` pin the process that loads
libgomp (xgboost and torch do) to the first place: hpcds1mpi itself, then, and every launcher
and rank it starts inherits that one-CPU mask (s36 tester E1: tune "measured" every layout on
CPU 0). :func:`set_aside` takes them out of the environment when the command starts, before
any library loads; ``KMP_AFFINITY`` (Intel's OpenMP) goes with them.

The runs never get them back (s36 tester E2): where the launcher does not bind each rank to
cores of its own (``mpiexec`` without options), every rank's first thread would be pinned to
the same core; where it does, the program rule's own ``OMP_PLACES=cores OMP_PROC_BIND=close``
bind the threads within the rank's cores (:func:`hpcds1mpi.launch.program.environment`). A
batch script ``unset`` s the ones it does not set, so the job runs as its runs were measured,
whatever the submitting shell holds (:func:`script_unset`).
"""

from __future__ import annotations

import os

#: The variables that bind the threads of the process that loads an OpenMP runtime.
SITE_BINDING = ("OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY", "KMP_AFFINITY")

#: What :func:`set_aside` took out of this process's environment: {name: value}.
_aside: dict[str, str] = {}


def set_aside(env=None) -> dict[str, str]:
    """Take the site's binding variables out of ``env`` (this process's environment, before
    xgboost or torch load libgomp). Returns every one set aside so far, {name: value}."""
    env = os.environ if env is None else env
    for name in SITE_BINDING:
        value = env.pop(name, None)
        if value is not None:
            _aside[name] = value
    return dict(_aside)


def set_aside_values() -> dict[str, str]:
    """The site's binding variables :func:`set_aside` took out, {name: value}."""
    return dict(_aside)


def left_out_note(binds_cores: bool, launcher: str = "the launcher") -> str | None:
    """The one line saying which of the site's binding variables the runs were not given and
    why (for the notes, and the telemetry's ``binding``), or None when none was set."""
    if not _aside:
        return None
    given = " ".join(f"{name}={value}" for name, value in _aside.items())
    why = ("its OMP_PLACES=cores OMP_PROC_BIND=close bind each rank's threads within the "
           "rank's own cores" if binds_cores else
           f"{launcher} is not told to give each rank cores of its own, so they could pin "
           "every rank's threads to the same core")
    return f"the shell's {given} left out of the runs: {why}"


def script_unset(exported) -> list[str]:
    """The site binding variables a batch script must ``unset``: those it does not export
    itself (``exported``: the names it does), so the submitting shell's cannot reach the
    ranks the measured runs ran without them."""
    exported = set(exported)
    return [name for name in SITE_BINDING if name not in exported]
