"""What a merged telemetry file keeps of how each source's program runs were measured.

A program sweep records its launcher, reading options, ``--workdir`` and ``--setup`` in the
file's ``launch`` attribute and its ``--command`` in ``plan``; the rows do not repeat them, and
a model trained on the file reads them from there (:mod:`hpcds1mpi.records.telemetry_rows`). A
merge used to keep neither, so a model of the merged file knew no launcher, folder or setup for
the program (s30 tester O2). Two sweeps of one program may differ in them (another
``--workdir``, ``--setup``), so one file attribute cannot hold both: each program row carries
its own sweep's (:func:`carry`: ``sweep_launch``, ``command_template``), as if each file were
given to ``train`` alone, and the merged file's attributes say what its rows share
(:func:`shared_attrs`).
"""

from __future__ import annotations

import json

#: The run columns that carry a program row's sweep settings in a merged file.
LAUNCH_COLUMN, TEMPLATE_COLUMN = "sweep_launch", "command_template"
#: The file attributes that record a program sweep's plans.
PLAN, EARLIER_PLANS = "plan", "earlier_plans"
#: The ``launch`` keys that say which launcher started the ranks
#: (:meth:`~hpcds1mpi.launch.preflight.LaunchChoice.describe`): a run's id does not hold them,
#: so one run under two launchers is one key (s40 tester A7: a resume under another measured
#: nothing, a merge kept one launcher's runs as "replaced").
LAUNCHER_KEYS = ("launcher", "command", "mpi", "args")


def same_launch_value(key: str, recorded, given) -> bool:
    """Whether a recorded :data:`LAUNCHER_KEYS` value is ``given``: a launcher file by the
    launch code's rule (:func:`~hpcds1mpi.launch.mpi_installation.same_launcher`: a link to
    it or a copy of its bytes is the same launcher), arguments as a list."""
    if key == "command" and isinstance(recorded, str) and isinstance(given, str):
        from hpcds1mpi.launch.mpi_installation import same_launcher

        return same_launcher(recorded, given)
    if key == "args":
        return list(recorded or []) == list(given or [])
    return (recorded or "") == (given or "")


def launcher_of(row: dict) -> dict | None:
    """The :data:`LAUNCHER_KEYS` of the launch a program row carries (``sweep_launch``); None
    where it carries none (a kernel's run, a file from before)."""
    try:
        launch = json.loads(row.get(LAUNCH_COLUMN) or "{}")
    except (TypeError, ValueError):
        return None
    if not isinstance(launch, dict) or not isinstance(launch.get("launcher"), str):
        return None
    return {k: launch.get(k) for k in LAUNCHER_KEYS}


def launcher_words(launcher: dict) -> str:
    """A launcher as a line names it: "srun --mpi=pmix", "/usr/bin/mpirun.openmpi --bind-to
    none"."""
    import shlex

    head = "srun" if launcher.get("launcher") == "srun" else str(launcher.get("command") or "")
    mpi = f" --mpi={launcher['mpi']}" if launcher.get("mpi") else ""
    args = launcher.get("args") if isinstance(launcher.get("args"), list) else []
    return (head + mpi + (" " + shlex.join(str(a) for a in args) if args else "")).strip()


def carry(row: dict, attrs: dict) -> dict:
    """``row`` with the settings of the file (``attrs``) it comes from, where it is a program
    run (``kind`` external) not carrying its own already (a row of a merged file keeps its)."""
    if row.get("kind") != "external":
        return row
    from hpcds1mpi.records.run_sources import plan_commands

    if not row.get(LAUNCH_COLUMN) and isinstance(attrs.get("launch"), str):
        row[LAUNCH_COLUMN] = attrs["launch"]
    if not row.get(TEMPLATE_COLUMN):
        template = plan_commands(attrs).get(str(row.get("workload") or ""))
        if template:
            row[TEMPLATE_COLUMN] = template
    return row


def shared_attrs(attrs: dict, sources: list[dict], runs) -> None:
    """Set the merged file's ``launch`` and plans (``attrs``, changed in place) from its own
    and its ``sources``' attributes and its merged ``runs`` (rows):

    * ``launch``: the one every program row carries, else none (each row says its own);
    * ``plan``: the one plan of them all; else the file's own (a sweep resuming it goes on
      with it) or none, every other plan in ``earlier_plans``, where ``sweep --resume``
      reads what the file measured under each label (``run_sources.recorded_programs``).
    """
    launches = {str(r.get(LAUNCH_COLUMN) or "") for r in runs if r.get("kind") == "external"}
    if len(launches) == 1 and "" not in launches:
        attrs["launch"] = launches.pop()
    elif launches:
        attrs.pop("launch", None)
    plans = list(dict.fromkeys(p for a in (attrs, *sources) for p in _plans(a)))
    own = attrs.get(PLAN) if isinstance(attrs.get(PLAN), str) else None
    if len(plans) == 1:
        attrs[PLAN] = plans[0]
        attrs.pop(EARLIER_PLANS, None)
    elif plans:
        if own is None:
            attrs.pop(PLAN, None)
        attrs[EARLIER_PLANS] = json.dumps([p for p in plans if p != own])


def _plans(attrs: dict) -> list[str]:
    """The plan texts a file's attributes record: ``plan`` first, then ``earlier_plans``."""
    found = [attrs[PLAN]] if isinstance(attrs.get(PLAN), str) else []
    try:
        earlier = json.loads(attrs.get(EARLIER_PLANS) or "[]")
    except (TypeError, ValueError):
        earlier = []
    return found + [p for p in (earlier if isinstance(earlier, list) else [])
                    if isinstance(p, str)]


def row_sweeps(runs) -> list[tuple[str, str, str, int]]:
    """The distinct program sweeps a merged file's rows (a runs table) carry: (workload, its
    ``--command``, its ``--setup`` or "", how many rows), most rows first; [] where no row
    carries its own (one sweep's file: its attributes say it). ``telemetry show`` lists them
    when they differ (s31: a merged file of two setups showed none)."""
    if not len(runs) or LAUNCH_COLUMN not in runs.columns:
        return []
    counts: dict[tuple[str, str, str], int] = {}
    for workload, launch, template in zip(runs["workload"].astype(str),
                                          runs[LAUNCH_COLUMN].fillna("").astype(str),
                                          runs[TEMPLATE_COLUMN].fillna("").astype(str)
                                          if TEMPLATE_COLUMN in runs.columns
                                          else [""] * len(runs)):
        if not launch and not template:
            continue
        key = (workload, template, setup_of(launch))
        counts[key] = counts.get(key, 0) + 1
    return [(*key, n) for key, n in sorted(counts.items(), key=lambda item: -item[1])]


def setup_of(launch: str) -> str:
    """The ``--setup`` a sweep's ``launch`` attribute (JSON) records; "" for none or damage."""
    try:
        found = json.loads(launch or "{}")
    except (TypeError, ValueError):
        return ""
    return str(found.get("setup") or "") if isinstance(found, dict) else ""
