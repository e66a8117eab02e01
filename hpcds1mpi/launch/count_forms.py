"""The node, task, CPU and GPU counts sbatch takes in ``#SBATCH`` directives, read as it reads
them, so that a count it refuses is refused here in one line, as a time limit or memory size
it refuses is (:mod:`~hpcds1mpi.launch.directive_mistakes`).

sbatch 22.05 (held against the test Slurm with ``sbatch --test-only``): ``--ntasks``,
``--ntasks-per-node`` and ``--cpus-per-task`` take a whole number from 1 (a leading ``+`` or
zeros allowed) and refuse anything else with ``Invalid numeric value "0" for --ntasks.``;
``--nodes`` takes a count or a range ``min-max`` (either with a ``k`` or ``m`` suffix, ``0``
and ``-1`` too) and refuses another form ("is not a valid node count"), one over 2^31 - 1,
and a range whose maximum is under its minimum. A GPU count (``--gpus*`` ``[type:]count``,
``--gres`` ``gpu[:type][:count]``) that is not a whole number is refused ("Invalid generic
resource (gres) specification"). Such a script had been read with the count "ignored" and
advised as "already asks the recommended layout", exit 0 (s47 tester M4).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.script_gpus import GPU_OPTIONS
from hpcds1mpi.launch.script_options import GPU_GRES, GRES_BINDING_RE, gpu_items

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript
    from hpcds1mpi.launch.script_options import Option

#: Count options sbatch reads as a whole number from 1.
TASK_COUNTS = ("ntasks", "ntasks-per-node", "cpus-per-task")
#: The largest count sbatch reads (a signed 32-bit int).
MAX_COUNT = 2**31 - 1
#: Up to 12 digits, as :data:`~hpcds1mpi.launch.script_options.DIGITS` (more is over
#: :data:`MAX_COUNT`, and over 4,300 a ValueError of ``int``).
_NODES_RE = re.compile(r"([+-]?[0-9]{1,12})([km]?)(?:-([0-9]{1,12})([km]?))?", re.IGNORECASE)
_SCALE = {"": 1, "k": 1024, "m": 1024**2}


def count_refusal(name: str, value: str) -> tuple[str, str] | None:
    """(what sbatch says refusing ``--name=value``, the form to write) for a count option of
    :data:`TASK_COUNTS`, ``nodes`` or one of :data:`~hpcds1mpi.launch.script_gpus.GPU_OPTIONS`;
    None when it takes it (or ``name`` is no count)."""
    value = value.strip()
    shown = value if len(value) <= 24 else value[:21] + "..."  # the line shows it whole
    if name in TASK_COUNTS:
        if re.fullmatch(r"\+?[0-9]{1,12}", value) and 1 <= int(value) <= MAX_COUNT:
            return None
        return f'Invalid numeric value "{shown}" for --{name}', "a whole number from 1 (4)"
    if name == "nodes":
        return _nodes_refusal(value, shown)
    if name in GPU_OPTIONS and _bad_gpu_count(name, value):
        return "Invalid generic resource (gres) specification", (
            "gpu[:type][:count] (gpu:2, gpu:a100:2)" if name == "gres" else
            "[type:]count (2, a100:2)")
    return None


def _nodes_refusal(value: str, shown: str) -> tuple[str, str] | None:
    form = "a node count (2) or a range min-max (2-4)"
    match = _NODES_RE.fullmatch(value)
    if match is None:
        return f'"{shown}" is not a valid node count', form
    low = int(match.group(1)) * _SCALE[match.group(2).lower()]
    high = None if match.group(3) is None else int(match.group(3)) * _SCALE[
        match.group(4).lower()]
    if max(low, high or 0) > MAX_COUNT:
        return f'"{shown}" is not a valid node count', f"{form}, at most {MAX_COUNT}"
    if high is not None and high < low:
        return f"Maximum node count {high} is less than minimum node count {low}", form
    return None


def _bad_gpu_count(name: str, value: str) -> bool:
    """A GPU item whose count is no whole number (``abc``, ``-1``, ``2x``), or a ``--gres``
    GPU item counting a negative number (``gpu:-1``, read as a type otherwise)."""
    if any(count is None for _, count in gpu_items(value, name)):
        return True
    if name != "gres":
        return False
    items = (GRES_BINDING_RE.sub("", item).strip().split(":") for item in value.split(","))
    return any(f[0] in GPU_GRES and re.fullmatch(r"-[0-9]{1,12}", f[-1]) for f in items)


def check_count_form(script: "JobScript", opt: "Option", magic: str) -> None:
    """Refuse, in one line naming its line, a Slurm count directive sbatch refuses.

    Raises:
        ConfigError: :func:`count_refusal` has a reason.
    """
    if script.scheduler != "slurm" or opt.value is None or "$" in opt.value:
        return
    refusal = count_refusal(opt.name or "", opt.value)
    if refusal is not None:
        said, form = refusal
        raise ConfigError(f"line {opt.line}: {magic} --{opt.name}={opt.value}"[:110]
                          + f": sbatch refuses this count ({said}); write {form}")


__all__ = ["MAX_COUNT", "TASK_COUNTS", "check_count_form", "count_refusal"]
