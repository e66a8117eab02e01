"""A telemetry file's runs as training rows, with what the file says of its program runs.

The file's attributes are not on the rows, and a bundle trains on the rows: each external run
carries which runtime its sweep measured (``runtime_source``), how it was read
(``measure_options``: a calibration sweep repeats it), the command as swept, placeholders
in place (``command_template``: a script runs it at another size), the launcher that started
it (``launched_with``: a script launches it alike where no cluster file names one), the
folder its sweep ran in (``swept_in``: a script runs it there) and the stamps of the inputs
it read (``input_stamps``: recommend says where one was edited since). Every run
carries the CPU of its machine (``cpu_model``, from the machines table): a bundle records it
per partition and the guard compares it with the CPU asked about.
"""

from __future__ import annotations

import os

import pandas as pd

# A program sweep's reading options, as its ``launch`` attribute records them and the bundle
# reads them back: a calibration sweep repeats them (one list, in ``launch/sweep_step.py``).
from hpcds1mpi.launch.sweep_step import ABSENT_IS_NONE, READING_KEYS
from hpcds1mpi.records.unmeasured_rows import without_fake_gpu_runs

__all__ = ["READING_KEYS", "UNKNOWN_SOURCE", "input_stamps", "launched_with",
           "measure_options", "runtime_source", "swept_in", "telemetry_rows"]

#: ``runtime_source`` of an external run whose telemetry does not say (written before the
#: ``launch`` attribute, or without its ``runtime`` entry).
UNKNOWN_SOURCE = "unknown"


def runtime_source(attrs: dict) -> str:
    """What ``runtime_s`` of a telemetry file's external runs holds: the ``runtime`` entry of
    its ``launch`` attribute (JSON; ``measure/readings.py`` writes it), else
    :data:`UNKNOWN_SOURCE`."""
    import json

    try:
        launch = json.loads(attrs.get("launch") or "{}")
        text = launch.get("runtime") if isinstance(launch, dict) else None
    except (TypeError, ValueError):
        text = None
    return str(text) if isinstance(text, str) and text else UNKNOWN_SOURCE


def measure_options(attrs: dict) -> str | None:
    """A telemetry file's reading options (:data:`READING_KEYS`, "" for one not used) as JSON
    for its external runs' ``measure_options``; None when its ``launch`` attribute does not
    record them all (a file written before it did). A key added later (``ABSENT_IS_NONE``:
    ``fail_regex``) that the file lacks is "": the sweep that wrote it could not use it."""
    import json

    try:
        launch = json.loads(attrs.get("launch") or "{}")
    except (TypeError, ValueError):
        return None
    if not isinstance(launch, dict):
        return None
    options = {k: launch.get(k, "" if k in ABSENT_IS_NONE else None) for k in READING_KEYS}
    if not all(isinstance(v, str) for v in options.values()):
        return None
    return json.dumps(options, sort_keys=True)


def launched_with(attrs: dict) -> str | None:
    """How a telemetry file's program runs were launched, as JSON for their ``launched_with``
    (the ``launch`` attribute's launcher, command, flavour, args and mpi; s29 tester B4: a
    script launches the program the way it was measured; and its ``one_rank_only``, s39 tester
    A2: recommend offers no unmeasured rank count); None when not recorded."""
    import json

    try:
        launch = json.loads(attrs.get("launch") or "{}")
    except (TypeError, ValueError):
        return None
    if not isinstance(launch, dict) or not isinstance(launch.get("launcher"), str):
        return None
    from hpcds1mpi.launch.program_path import PROGRAM_PATH
    from hpcds1mpi.launch.rank_proof import ONE_RANK_ONLY

    # and why the program's ranks cannot be one job, where its sweep found so (s39 tester A2);
    # the file its bare name ran as, which a script runs by path (s41 tester D7)
    keys = ("launcher", "command", "flavour", "args", "mpi", ONE_RANK_ONLY, PROGRAM_PATH)
    return json.dumps({k: launch[k] for k in keys if k in launch}, sort_keys=True)


def swept_in(attrs: dict) -> str | None:
    """The folder a telemetry file's program sweep ran in (the ``launch`` attribute's
    :data:`~hpcds1mpi.launch.program_folder.SWEPT_IN`), as JSON for its external runs'
    ``swept_in``; None when not recorded (a file written before it was: s37 tester G3)."""
    import json

    from hpcds1mpi.launch.program_folder import SWEPT_IN

    try:
        launch = json.loads(attrs.get("launch") or "{}")
    except (TypeError, ValueError):
        return None
    folder = launch.get(SWEPT_IN) if isinstance(launch, dict) else None
    return json.dumps(folder) if isinstance(folder, str) and os.path.isabs(folder) else None


def input_stamps(attrs: dict) -> str | None:
    """The stamps of the inputs a telemetry file's program sweep read (its
    :data:`~hpcds1mpi.records.input_stamp_attr.INPUTS` attribute), each path made absolute by the
    folder it ran in (:func:`swept_in`), as JSON for its external runs' ``input_stamps``; None
    where it records none (a file from before the stamps: s48 tester O4)."""
    import json

    from hpcds1mpi.records.input_stamp_attr import INPUTS

    try:
        stamps = json.loads(attrs.get(INPUTS) or "{}")
        folder = json.loads(swept_in(attrs) or "null")
    except (TypeError, ValueError):
        return None
    found = {os.path.normpath(os.path.join(folder or "", path)): stamp
             for path, stamp in (stamps.items() if isinstance(stamps, dict) else ())
             if isinstance(path, str) and (folder or os.path.isabs(path))
             and isinstance(stamp, list) and len(stamp) == 3}
    return json.dumps(found, sort_keys=True) if found else None


def telemetry_rows(path) -> pd.DataFrame:
    """The runs table of telemetry file ``path``; its external runs (``kind`` external) carry
    ``runtime_source`` (:func:`runtime_source`): the file attribute is not on the rows, and
    the model trains on whichever runtime the sweep measured, so the bundle must say which.
    Kernel runs and files without external runs get no such column. Every row carries its
    machine's ``cpu_model`` and ``cpu_signature`` (the machines table's, keyed by
    ``machine_id``; None where it records none)."""
    from hpcds1mpi.records.telemetry import RUN_COLUMNS, load, normalise

    store = load(path)  # once: the rows and the attributes
    names = [n for n, _ in RUN_COLUMNS]
    rows = [normalise(r, RUN_COLUMNS) for r in store.runs.values()]
    if not rows:
        from hpcds1mpi.records.telemetry import read_runs

        return read_runs(path)  # the typed empty table
    frame = pd.DataFrame(rows, columns=names)
    frame.attrs["mpi_libraries"] = {str(k): str(m.get("mpi_library") or "")
                                    for k, m in store.machines.items()}
    # the machine's CPU on each run (s31 tester Q4: a bundle that does not record it answered
    # `auto` on another CPU); None where the machines table does not name one
    for column in ("cpu_model", "cpu_signature"):  # the signature tells generations apart
        cpus = {str(k): str(m.get(column) or "").strip() or None
                for k, m in store.machines.items()}
        frame[column] = [cpus.get(m) for m in frame["machine_id"].astype(str)]
    external = frame["kind"].astype(str) == "external"
    if external.any():
        from hpcds1mpi.records.run_sources import plan_commands

        # how the runs were read and the command as swept ({size} where it stood), for the
        # bundle: a calibration sweep measures alike, a script runs it at another size. A
        # merged file's row carries its own sweep's (s30 tester O2), any other the file's.
        own = store.attrs.get("launch") or ""
        launches = [(text or own) if e else None
                    for text, e in zip(frame["sweep_launch"].astype(str), external)]
        for column, read in (("runtime_source", runtime_source),
                             ("measure_options", measure_options),
                             ("launched_with", launched_with),
                             ("swept_in", swept_in)):  # where it ran (s37 tester G3)
            values = {text: read({"launch": text}) for text in set(launches) - {None}}
            frame[column] = [None if text is None else values[text] for text in launches]
        # the file's own sweep's inputs: a row merged from another file read that one's
        stamps = input_stamps(store.attrs)
        frame["input_stamps"] = [stamps if e and text in ("", own) else None for text, e
                                 in zip(frame["sweep_launch"].fillna("").astype(str), external)]
        templates = plan_commands(store.attrs)
        frame["command_template"] = [(text or templates.get(w)) if e else None for w, text, e
                                     in zip(frame["workload"].astype(str),
                                            frame["command_template"].astype(str), external)]
    from hpcds1mpi.records.kernel_options import labelled

    return without_fake_gpu_runs(labelled(frame), path)  # one workload per deck (s40 B13)
