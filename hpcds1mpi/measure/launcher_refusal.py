"""Whose refusal of its options a launch ended with: the sweep's launcher's, or that of an MPI
launcher the program started itself.

:func:`~hpcds1mpi.measure.program_launch.options_refused` reads a launcher's refusal as it ends
its output. The sweep's launcher is given only the sweep's options and ``--launcher-args``; a
refused option that none of its words carries was another launcher's: one the program started
with options of its own (gretlcli's ``mpi`` block runs ``mpiexec --oversubscribe -np 2
gretlmpi``, which MPICH's hydra refuses; s48 tester O2: the sweep told the user to fix the
``--launcher-args`` they had never given). The sweep stops either way, recording nothing.
"""

from __future__ import annotations

import re
from typing import Sequence

from hpcds1mpi.measure.program_launch import options_refused

#: The option a launcher's refusal names: hydra's "unrecognized argument oversubscribe" (its
#: dashes dropped), Open MPI's 'unknown option "--bogus"', srun's "unrecognized option
#: '--bogus'".
_REFUSED_OPTION = re.compile(r"unrecognized argument (\S+)|unknown option \"([^\"]+)\"|"
                             r"(?:unrecognized|invalid) option '([^']+)'")


def refused_option(refusal: str) -> str | None:
    """The option ``refusal`` (a launcher's refusing line) names, None where it names none."""
    match = _REFUSED_OPTION.search(refusal)
    return next((g for g in match.groups() if g), None) if match else None


def _bare(word: str) -> str:
    """An option word without its dashes and value: ``--map-by=x`` -> ``map-by``."""
    return word.lstrip("-").split("=", 1)[0]


def refusal_error(result: dict, tokens: Sequence[str]) -> str:
    """The one line that stops the sweep where a launch of ``tokens`` (the launcher first)
    ended with a launcher's refusal of its options, "" where it did not: the sweep's launcher's
    names ``--launcher-args``; one whose refused option no word of ``tokens`` carries (its
    dashes and value aside) names the program's own launcher."""
    refused = options_refused(result, tokens[0])
    if not refused:
        return ""
    option = refused_option(refused)
    if option is None or any(_bare(t) == _bare(option) for t in tokens):
        return (f"the launcher refused its options ({refused}); nothing was recorded for this "
                "configuration: fix --launcher-args (or launcher_args)")
    return (f"the program started an MPI launcher of its own, which refused the option "
            f"{option!r} ({refused}): neither the sweep's launch line nor --launcher-args gives "
            "it; nothing was recorded for this configuration: sweep the program that launcher "
            "runs instead, with --mpiexec naming its MPI's launcher")
