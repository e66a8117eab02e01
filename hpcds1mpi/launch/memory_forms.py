"""The memory sizes sbatch takes for ``--mem``, ``--mem-per-cpu`` and ``--mem-per-gpu``, read
as it reads them.

sbatch 22.05 (``str_to_mbytes`` of ``src/common/proc_args.c``, held against the test Slurm
with ``sbatch --test-only``) takes a whole number with an optional unit K, M, G or T in any
case, a ``B`` allowed after the unit (``4GB``, ``10mb``), MiB without one, K rounded up to a
MiB; it refuses a fraction (``0.02G``), a negative (``-5``; ``-0`` is 0), another unit
(``10Mi``, ``1P``, ``10b``) with "Invalid --mem specification", and two of the three options
in one job ("mutually exclusive"). A reader that took ``0.02G`` for 20 MiB and ``-5`` or
``--mem`` beside ``--mem-per-cpu`` for no ask advised scripts sbatch never runs (s41 tester
B9); such a directive is now refused in one line, as a time limit sbatch refuses is
(:mod:`hpcds1mpi.launch.time_forms`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hpcds1mpi.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript
    from hpcds1mpi.launch.script_options import Option

#: Slurm's memory options, which one job may give only one of.
MEMORY_OPTIONS = ("mem", "mem-per-cpu", "mem-per-gpu")
#: The forms sbatch takes, as a refusal names them.
SLURM_MEMORY_FORMS = ("a whole number with an optional unit K, M, G or T (4000, 4000M, 4G), "
                      "in MiB without one")
_SIZE_RE = re.compile(r"\s*([+-]?)(\d+)(?:([KMGT])B?)?", re.IGNORECASE)
_SCALE = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 ** 2}


def slurm_memory_mib(value: str) -> float | None:
    """MiB of a ``--mem`` / ``--mem-per-cpu`` / ``--mem-per-gpu`` value as sbatch reads it
    (``3000``, ``3000M``, ``3G``, ``3GB``, ``10k``: 1); None where sbatch refuses it."""
    match = _SIZE_RE.fullmatch(value)
    if match is None or (match.group(1) == "-" and int(match.group(2))):
        return None
    number, unit = int(match.group(2)), (match.group(3) or "M").upper()
    return float(-(-number // 1024)) if unit == "K" else float(number * _SCALE[unit])


def check_memory_form(script: "JobScript", opt: "Option", magic: str) -> None:
    """Refuse, in one line, a Slurm memory directive sbatch refuses: a size it cannot read, or
    a second of :data:`MEMORY_OPTIONS` beside one the script gave before."""
    if script.scheduler != "slurm" or opt.name not in MEMORY_OPTIONS or "$" in (opt.value or ""):
        return
    spelled = f"{magic} --{opt.name}={opt.value or ''}"[:100]
    if slurm_memory_mib(opt.value or "") is None:
        raise ConfigError(f"line {opt.line}: {spelled}: sbatch refuses this memory size "
                          f"(\"Invalid --{opt.name} specification\"); write "
                          f"{SLURM_MEMORY_FORMS}")
    other = next((script.directives[name] for name in MEMORY_OPTIONS
                  if name != opt.name and name in script.directives), None)
    if other is not None:
        raise ConfigError(f"line {opt.line}: {spelled}: sbatch refuses it beside --{other.name}"
                          f" (line {other.line}): \"--mem, --mem-per-cpu, and --mem-per-gpu "
                          "are mutually exclusive\"; keep one of them")


__all__ = ["MEMORY_OPTIONS", "SLURM_MEMORY_FORMS", "check_memory_form", "slurm_memory_mib"]
