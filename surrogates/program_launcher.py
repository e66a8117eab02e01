"""How a program's sweep launched it, as a bundle keeps it (s29 tester B4: a script for a
program measured with ``mpirun`` refused for srun, which its Open MPI cannot start as one job).

The telemetry's ``launch`` attribute names the launcher; its external rows carry it as
``launched_with`` (:func:`hpcds1mpi.records.telemetry_rows.launched_with`) and a program's
levels keep the one all its rows recorded
(:attr:`hpcds1mpi.surrogates.levels.MeasuredLevels.launched_with`), so a job script can launch
it the same way where no cluster file names a launcher
(:func:`hpcds1mpi.launch.script_launcher.measured_cluster`). A bundle older than the record
keeps none: the script's launcher is as before. Rows that ran under different launchers
(``train`` pooling two sweeps) keep each launcher with the configurations it ran
(:data:`SEVERAL`), and a pick's script takes the one of that configuration's runs, said in a
note (:func:`launch_for`; s31 tester P6: the pooled bundle's script fell back to srun
--mpi=pmi2 / a bare mpiexec without a word).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from hpcds1mpi.launch.program_path import PROGRAM_PATH
from hpcds1mpi.launch.rank_proof import ONE_RANK_ONLY

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: The entries of the ``launch`` attribute that say how the program was started.
LAUNCH_KEYS = ("launcher", "command", "flavour", "args", "mpi")


#: The key of a launch record whose rows ran under several launchers: a list of launches
#: (:data:`LAUNCH_KEYS`), each with ``runs`` (how many rows) and ``configs`` (configuration
#: label -> rows), most runs first.
SEVERAL = "several"


def launch_dict(value) -> dict | None:
    """``value`` as a recorded launch (:data:`LAUNCH_KEYS`: strings, ``args`` a list of
    strings) or several (:data:`SEVERAL`), or None when it is not one (absent, damaged, a
    launcher without its command)."""
    if isinstance(value, dict) and SEVERAL in value:
        return _several_dict(value)
    if not isinstance(value, dict):
        return None
    args = value.get("args") or []
    text = {k: value.get(k) or "" for k in LAUNCH_KEYS if k != "args"}
    if not all(isinstance(v, str) for v in text.values()) or not isinstance(args, list) \
            or not all(isinstance(a, str) for a in args):
        return None
    if not text["launcher"] or not text["command"]:
        return None
    # why the program's ranks cannot be one job, kept only where its sweep said (s39 A2)
    alone = value.get(ONE_RANK_ONLY)
    ran_as = value.get(PROGRAM_PATH)  # the file its bare name ran as (s41 tester D7)
    return {**text, "args": list(args),
            **({ONE_RANK_ONLY: alone} if isinstance(alone, str) and alone else {}),
            **({PROGRAM_PATH: ran_as} if isinstance(ran_as, str) and ran_as else {})}


def _several_dict(value: dict) -> dict | None:
    launches = []
    for item in value.get(SEVERAL) if isinstance(value.get(SEVERAL), list) else [None]:
        launch = launch_dict({k: v for k, v in item.items()
                              if k in (*LAUNCH_KEYS, ONE_RANK_ONLY, PROGRAM_PATH)}) \
            if isinstance(item, dict) else None
        configs, runs = (item or {}).get("configs"), (item or {}).get("runs")
        if launch is None or not isinstance(runs, int) or not isinstance(configs, dict) or \
                not all(isinstance(k, str) and isinstance(n, int) for k, n in configs.items()):
            return None
        launches.append({**launch, "runs": runs, "configs": dict(configs)})
    return {SEVERAL: launches} if len(launches) > 1 else None


def launch_of(rows: "pd.DataFrame") -> dict | None:
    """The one launch a program's rows recorded (``launched_with``, JSON); where they
    recorded several (sweeps launched differently, pooled), each with the configurations it
    ran (:data:`SEVERAL`); None when a row does not say."""
    one = one_recorded(rows, "launched_with", launch_dict)
    return one if one is not None else _several_of(rows)


def _several_of(rows: "pd.DataFrame") -> dict | None:
    """:data:`SEVERAL` of a program's rows, or None when a row says no launch, or a
    configuration column is missing."""
    from hpcds1mpi.config import Configuration

    keys = ("nodes", "ranks_per_node", "threads", "device", "precision")
    if "launched_with" not in rows.columns or not all(k in rows.columns for k in keys):
        return None
    if "kind" in rows.columns:
        rows = rows[rows["kind"].astype(str) == "external"]
    found: dict[str, dict] = {}
    for text, *knobs in zip(rows["launched_with"], *(rows[k] for k in keys)):
        try:
            launch = launch_dict(json.loads(text)) if isinstance(text, str) else None
            label = Configuration(int(knobs[0]), int(knobs[1]), int(knobs[2]), str(knobs[3]),
                                  str(knobs[4])).label()
        except (ValueError, TypeError):
            return None
        if launch is None or SEVERAL in launch:
            return None
        entry = found.setdefault(json.dumps(launch, sort_keys=True),
                                 {**launch, "runs": 0, "configs": {}})
        entry["runs"] += 1
        entry["configs"][label] = entry["configs"].get(label, 0) + 1
    launches = sorted(found.values(), key=lambda e: (-e["runs"], e["command"]))
    return {SEVERAL: launches} if len(launches) > 1 else None


def one_rank_only(recorded: dict | None) -> str:
    """Why a program's ranks cannot be one job, as its sweep recorded it in a launch
    (:func:`launch_dict`; of several, the first that says so): its ranks would be copies of a
    program that links no MPI (:func:`hpcds1mpi.launch.rank_proof.one_rank_only`); "" where no
    launch says so, or none is recorded (a bundle older than the record)."""
    launches = (recorded or {}).get(SEVERAL) or [recorded or {}]
    return next((e[ONE_RANK_ONLY] for e in launches if e.get(ONE_RANK_ONLY)), "")


def launcher_said(launch: dict) -> str:
    """A launch as a user names it: ``srun --mpi=pmix``, or the mpiexec's path."""
    if launch.get("launcher") == "srun":
        return "srun" + (f" --mpi={launch['mpi']}" if launch.get("mpi") else "")
    return str(launch.get("command") or launch.get("launcher"))


def launch_for(recorded: dict | None, label: str) -> tuple[dict | None, str]:
    """(the launch a script of configuration ``label`` repeats, why, where the program's
    rows ran under several launchers: "" otherwise). Of several, the one that ran the most
    runs of ``label``, else the most runs of all (ties: the first by path)."""
    if not recorded or SEVERAL not in recorded:
        return recorded, ""
    launches = recorded[SEVERAL]
    chosen = max(launches, key=lambda e: (e["configs"].get(label, 0), e["runs"]))
    mine = chosen["configs"].get(label, 0)
    of = sum(e["configs"].get(label, 0) for e in launches)
    listed = ", ".join(f"{launcher_said(e)} ({e['runs']} runs)" for e in launches)
    why = (f"ran {mine} of the {of} runs of {label}" if mine else
           f"ran the most runs ({chosen['runs']}; none of {label})")
    return ({k: chosen[k] for k in (*LAUNCH_KEYS, PROGRAM_PATH) if k in chosen},
            f"the pooled sweeps launched the program with {len(launches)} launchers ({listed}); "
            f"this script's is {launcher_said(chosen)}, which {why}")


def one_recorded(rows: "pd.DataFrame", column: str, parse) -> dict | None:
    """The one value a program's (``kind`` external) rows recorded as JSON in ``column``,
    read by ``parse`` (None: not such a value); None where the rows do not say, a row's
    value is unreadable, or they differ."""
    if column not in rows.columns:
        return None
    if "kind" in rows.columns:
        rows = rows[rows["kind"].astype(str) == "external"]
    found = set()
    for text in rows[column]:
        try:
            value = parse(json.loads(text)) if isinstance(text, str) else None
        except ValueError:
            value = None
        if value is None:
            return None
        found.add(json.dumps(value, sort_keys=True))
    return json.loads(found.pop()) if len(found) == 1 else None
