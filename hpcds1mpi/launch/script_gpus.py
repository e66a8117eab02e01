"""The GPUs of a job script: what its directives and its ``srun`` step ask for, which ones its
ranks can see, and what of that the scheduler refuses or the model cannot predict.

A GPU request is read as Slurm reads it (``--gres`` items ``name[:type][:count]``, of which only
``gpu`` counts; ``--gpus*`` values ``[type:]count``:
:func:`~hpcds1mpi.launch.script_options.gpu_items`). A step cannot get GPUs its job does not hold (``srun: error: Unable to create
step ... Invalid generic resource (gres) specification``): :func:`step_refused`. Ranks that
share a GPU (more ranks per node than GPUs, or ``CUDA_VISIBLE_DEVICES`` set by hand to fewer)
are a valid request the model cannot predict, since it models one GPU per rank:
:func:`shared_gpus`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from hpcds1mpi.launch.script_options import gpu_items

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch
    from hpcds1mpi.launch.script_options import Option

#: GPU options of sbatch and srun, in the order their counts are read (the last one given
#: counts, as for the directives).
GPU_OPTIONS = ("gres", "gpus-per-node", "gpus", "gpus-per-task")
#: Variables that pick the GPUs a process sees (NVIDIA's, AMD's two).
VISIBLE_VARIABLES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
#: A device in a visible-devices list: an index, or a GPU / MIG UUID. The runtimes stop at the
#: first entry that is none (``-1`` hides every GPU).
_DEVICE_RE = re.compile(r"[0-9]{1,4}|(GPU|MIG)-[0-9A-Za-z/-]+")


def gpus_of(script: "JobScript", opt: "Option | None", value: str | None = None) -> int | None:
    """The GPUs ``opt`` (a ``--gres`` / ``--gpus*`` option) asks for, its value read from
    ``value`` when given (a launch line's, ``$`` expanded); None when it asks for no GPU
    (``--gres=lscratch:200``) or cannot be read (noted). Its line is where GPUs were read."""
    if opt is None or opt.value is None:
        return None
    value = opt.value if value is None else value
    items = gpu_items(value, opt.name)
    if not items:
        return None
    if any(count is None for _, count in items):
        script.note(f"line {opt.line}: cannot read the GPUs of --{opt.name} {opt.value!r}; "
                    "ignored")
        return None
    script.where("gpus", opt.line)
    return sum(count for _, count in items)


def per_node_gpus(option: str, count: int, nodes: int, ranks_per_node: int) -> int:
    """GPUs per node from ``option``'s count: per task times the tasks on a node, a job's
    total over its nodes (rounded up), else as given (``--gres``, ``--gpus-per-node``)."""
    if option == "gpus-per-task":
        return count * ranks_per_node
    return -(-count // nodes) if option == "gpus" else count


def read_step_gpus(script: "JobScript", launch: "Launch") -> None:
    """Read the GPUs an ``srun`` line asks for its step (they replace the job's for it), and
    keep the option in ``script.step_gpus`` for :func:`step_refused`."""
    nodes = script.nodes or 1
    per_node = script.ntasks_per_node or (-(-script.ntasks // nodes) if script.ntasks else 1)
    for name in GPU_OPTIONS:
        opt = launch.options.get(name)
        if opt is None or not opt.value:
            continue
        value = launch.value(name, launch.scope)
        if value is None:
            script.note(f"line {opt.line}: srun --{name} {opt.value!r} could not be resolved; "
                        "the job's GPUs are read")
            continue
        count = gpus_of(script, opt, value)
        if count:
            script.gpus_per_node = per_node_gpus(name, count, nodes, per_node)
            script.step_gpus = opt


def step_refused(script: "JobScript") -> str:
    """Why Slurm refuses the ``srun`` step ("" when it does not): it asks for GPUs per node
    that the job's directives do not hold."""
    opt = script.step_gpus
    if opt is None or script.base is None:
        return ""
    held = script.base[0]["gpus_per_node"] or 0
    if script.gpus_per_node <= held:
        return ""
    holds = "holds none (no GPU in its directives)" if not held else f"holds {held} per node"
    return (f"line {opt.line}: srun asks for {script.gpus_per_node} GPUs per node "
            f"(--{opt.name}={opt.value}) but the job {holds}: Slurm refuses the step "
            "(Invalid generic resource (gres) specification); ask for the GPUs in the "
            "directives (--gpus-per-node)")


class Visible(NamedTuple):
    """A visible-devices variable the script sets by hand: its name, value (None: unresolved),
    line, and how many GPUs it lets a process see (None: unknown)."""

    name: str
    value: str | None
    line: int
    count: int | None


def visible_gpus(script: "JobScript") -> Visible | None:
    """The ``CUDA_VISIBLE_DEVICES`` (or AMD's) the launched ranks get from the script: set on
    the launch line, else the last one set before it; None when the script sets none."""
    launch = script.launch
    if launch is None:
        return None
    found = None
    for name in VISIBLE_VARIABLES:
        if name in launch.env:
            value, opt = launch.env[name]
            found = (name, value, opt.line)
            break
        before = [s for s in script.settings_before(launch)
                  if s.name == name]
        if before and (found is None or before[-1].line > found[2]):
            found = (name, before[-1].resolved, before[-1].line)
    if found is None:
        return None
    name, value, line = found
    if value is None:
        return Visible(name, None, line, None)
    count = 0
    for item in value.split(",") if value.strip() else []:
        if not _DEVICE_RE.fullmatch(item.strip()) or item.strip() == "-1":
            break
        count += 1
    return Visible(name, value, line, count)


def shared_gpus(script: "JobScript", ranks_per_node: int) -> str:
    """Why a GPU layout whose ranks share GPUs has no prediction ("" when each rank has its
    own): the scheduler accepts more ranks per node than GPUs, but the model predicts one GPU per
    rank only, and inventing a number for shared GPUs would be a guess."""
    held = script.gpus_per_node
    seen = visible_gpus(script)
    if seen is not None and seen.count is not None and (not held or seen.count < held):
        if seen.count < ranks_per_node:
            what = "no GPU" if not seen.count else \
                f"{seen.count} GPU{'s' if seen.count > 1 else ''}"
            return (f"line {seen.line} sets {seen.name}={seen.value}: the {ranks_per_node} "
                    f"ranks per node see {what}, so they share it; the model predicts one GPU "
                    "per rank only, so this layout has no prediction")
        return ""
    if held and held < ranks_per_node:
        scheduler = "Slurm" if script.scheduler == "slurm" else "PBS"  # s33 tester P5
        return (f"{ranks_per_node} ranks per node share the job's {held} GPU"
                f"{'s' if held > 1 else ''} per node ({scheduler} accepts it); the model "
                "predicts one GPU per rank only, so this layout has no prediction")
    return ""


def visible_note(script: "JobScript", device: str, rewrite_ranks: int | None = None
                 ) -> str | None:
    """The note for a visible-devices variable the script sets by hand, or None. Without
    ``rewrite_ranks``: which GPUs the ranks see (or that it cannot be read). With it (the
    rewritten layout's ranks per node, on ``device``): that the rewrite keeps the line while
    those ranks would share fewer GPUs than they are predicted on; None when they would not."""
    seen = visible_gpus(script)
    if seen is None or device != "gpu":
        return None
    head = f"line {seen.line} sets {seen.name}={seen.value if seen.value is not None else '?'}"
    if rewrite_ranks is not None:
        if seen.count is None or seen.count >= rewrite_ranks:
            return None
        return (f"{head} by hand, which --rewrite keeps: the recommended {rewrite_ranks} ranks "
                f"per node would see {seen.count} GPU{'s' if seen.count != 1 else ''} and "
                f"share them, not the {rewrite_ranks} they are predicted on; remove the line "
                f"or list {rewrite_ranks} GPUs")
    if seen.count is None:
        return (f"{head} by hand, to a value that cannot be read here; which GPUs the ranks "
                "see is not checked")
    what = "no GPU" if not seen.count else "that GPU only" if seen.count == 1 else \
        f"those {seen.count} GPUs only"
    return f"{head} by hand: every rank sees {what}"
