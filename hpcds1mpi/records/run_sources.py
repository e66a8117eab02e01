"""Which program a workload's runs come from: a kernel, or one ``sweep --command`` program.

A workload name means one program: a model learns one runtime per name and configuration, and
``recommend --workload NAME`` answers for it. A runs table whose name holds runs of a kernel and
of a program (``sweep --command ... --label stencil`` resumed into a kernel's file) would be learnt as one
program and answered with a runtime of neither. :func:`mixed_programs` finds a kernel's and a program's rows under
one name in a table (``train``,
``learn``, ``telemetry merge``); :func:`recorded_programs` reads what a telemetry file holds
under each name, for ``sweep --resume`` to refuse adding another program's runs to it.
"""

from __future__ import annotations

import json

import pandas as pd

#: ``kind`` of a kernel's runs and of a program's (``sweep --command``, ``tune --program``).
KERNEL, PROGRAM = "kernel", "external"
#: What :func:`recorded_programs` says of a program whose runs are in a file without its plan.
SOME_PROGRAM = "a --command program"
#: How such rows are kept apart: what every refusal of them ends with.
HINT = "a program's runs need a --label that no kernel or other program uses"
#: The columns that make two runs one measurement's key, besides the workload.
CONFIG_COLUMNS = ("size", "nodes", "ranks_per_node", "threads", "device", "precision")


def recorded_programs(store) -> dict[str, set[str]]:
    """Workload name -> what the file measured under it: ``"kernel"``, a ``--command`` text,
    or :data:`SOME_PROGRAM` where only the runs say so (a merged file keeps no plans).

    Read from the runs' ``kind`` and from the plans the file records (its ``plan`` attribute
    and ``earlier_plans``, which a resumed sweep with another plan keeps): a program's runs
    name their filled-in command only, its plan the command as given.
    """
    found: dict[str, set[str]] = {}
    for plan in _plans(store.attrs):
        if isinstance(plan.get("command"), str):
            found.setdefault(str(plan.get("label") or "external"), set()).add(plan["command"])
        for entry in plan.get("kernel") or []:
            if isinstance(entry, dict) and entry.get("name"):
                found.setdefault(str(entry["name"]), set()).add(KERNEL)
    for row in store.runs.values():
        name, kind = str(row.get("workload") or ""), row.get("kind")
        if kind == KERNEL:
            found.setdefault(name, set()).add(KERNEL)
        elif kind == PROGRAM and not found.get(name, set()) - {KERNEL}:
            found.setdefault(name, set()).add(SOME_PROGRAM)
    return found


def plan_commands(attrs: dict) -> dict[str, str]:
    """Workload label -> the ``--command`` template a telemetry file's plans ran it with (the
    current plan's over earlier ones'), for the rows to carry (``command_template``)."""
    return {str(p.get("label") or "external"): p["command"] for p in reversed(_plans(attrs))
            if isinstance(p.get("command"), str) and p["command"]}


def _plans(attrs: dict) -> list[dict]:
    """The plans a telemetry file records (JSON texts in its attributes), as dicts."""
    texts = [attrs.get("plan")]
    try:
        earlier = json.loads(attrs.get("earlier_plans") or "[]")
        texts += earlier if isinstance(earlier, list) else []
    except (TypeError, ValueError):
        pass
    plans = []
    for text in texts:
        try:
            plan = json.loads(text) if isinstance(text, str) else None
        except ValueError:
            continue
        if isinstance(plan, dict):
            plans.append(plan)
    return plans


def shown(source: str) -> str:
    """A recorded source in words: ``"the kernel"`` or ``"--command '...'"``."""
    if source == KERNEL:
        return "the kernel"
    return source if source == SOME_PROGRAM else f"--command {source!r}"


def mixed_programs(frame: pd.DataFrame, what: str, fix: str) -> str | None:
    """A message about ``what`` when one workload's sweep runs (of one machine) come from a
    kernel and from a program; None otherwise.

    Job-log rows (no ``kind``) are left alone. Two command lines of one program label pass:
    the same program swept with another flag (GROMACS's ``-ntomp``), launcher options or
    launcher path, which the bundle keeps as that label's command lines and ``train`` names
    (:mod:`hpcds1mpi.surrogates.program_command`); telling another program from the same one
    with other options is the user's ``--label``.
    """
    if "kind" not in frame.columns or "workload" not in frame.columns:
        return None
    kind = frame["kind"].astype("string").fillna("")
    rows = frame[kind.isin([KERNEL, PROGRAM])].assign(_kind=kind)
    by = ["machine_id"] if "machine_id" in rows.columns else []
    for key, group in rows.groupby([*by, "workload"], sort=True, dropna=False):
        name = key[-1]
        if group["_kind"].nunique() > 1:
            program = group[group["_kind"] == PROGRAM]
            command = str(program["command"].iloc[0]) if "command" in program else ""
            return (f"{what} holds runs of workload {name!r} from the kernel {name} and from "
                    f"a --command program ({command[:80]!r}, labelled {name!r}); a model would "
                    f"learn one runtime for two programs; {fix} ({HINT})")
    return None
