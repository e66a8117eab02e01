"""The knob levels each workload of a bundle was measured at (what may be offered for it:
:mod:`.measured_offer`).

A registered kernel declares what it can run (``kernels.support``): the model may be asked
about any of it. A user's program (an external workload, swept with ``sweep --command``; the
telemetry's ``kind`` column says ``external``) or a job-log label declares nothing, so the only
honest offer is what was measured: the precisions, devices and thread counts it ran with, and
ranks per node up to the largest measured. Anything else is left out, and said so
("bf16: never measured for this program").

Each program's levels also keep its command line as its rows ran it, the launcher left out and
``{size}`` put back where the size was (``./app {size} 40``): ``advise`` matches a user's
script to the program by it and reads the size from the script's own launch line (read from the
rows by :mod:`.program_command`: the sweep's own ``--command`` where the rows carry it, as
``command_template``; else from how the lines differ, ``s{size}.nw`` too). Rows of one label
that ran several command lines keep each (the one most rows ran is ``command``), and ``learn``
says so (:func:`mixed_commands`): their rows are fitted as one program.

Each program's levels also say which runtime its rows measured (``runtime``: the telemetry's
``launch`` attribute, put on the rows as ``runtime_source`` by
:mod:`hpcds1mpi.records.training`): the program's own reported time (``--time-regex``) or the
launch's wall time, so what the model predicts is said (:func:`runtime_line`), and a calibration sweep measures it
the same way (:func:`recorded_measurement`: the time regex, and the sweep's other reading
options where the rows carry them, ``measure_options``).

The levels are computed once at training time from the training rows and stored beside the
bundle (``measured_levels.json``, :data:`LEVELS_FILE`); a bundle written before that file
existed gets them from its training rows when a non-kernel workload is asked about (kernels,
the common case, never pay for reading the rows).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from hpcds1mpi.config import OK
from hpcds1mpi.errors import ModelError
from hpcds1mpi.launch.sweep_step import ABSENT_IS_NONE, READING_KEYS
from hpcds1mpi.measure.thread_use import idle_threads_evidence

from .program_command import RUN_KEYS, command_runs
from .program_launcher import launch_dict, launch_of, one_recorded
from .level_values import (stored_configs, stored_folder, stored_idle_threads,
                           stored_measure_options, stored_seconds, stored_time)
from .setup_times import setup_seconds
# The words for a runtime source, kept under the names this module has always exported.
from .runtime_words import OWN_TIME as _OWN_TIME
from .runtime_words import UNKNOWN, runtime_line
from .runtime_words import runtime_words as _runtime_words

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

LEVELS_FILE = "measured_levels.json"
#: Statuses that say nothing about a level (it was never really run there).
_NOT_RUN = ("unsupported", "cancelled", "interrupted")
_FIX = "the bundle is damaged: retrain it with `hpcds1mpi train`"
#: The sweep options (the telemetry ``launch`` attribute's keys) that change what a program's
#: runs measure; ``--time-regex`` is also kept in ``runtime``. The one list of them
#: (``launch.sweep_step.READING_KEYS``), under the name this module has always exported.
MEASURE_KEYS = READING_KEYS


@dataclass(frozen=True)
class MeasuredLevels:
    """The levels one workload ran at in the training data.

    Attributes:
        workload: the workload label.
        external: True when its rows came from a user's program (``kind`` external) or it is
            no registered kernel (a job-log label): only these levels may be offered.
        precisions, devices, threads, ranks_per_node, nodes: sorted distinct levels of the
            rows that ran ok (of those that ran — not unsupported / cancelled / interrupted —
            where none did): a level only failed runs reached is not measured (s45 tester B4).
        runtime: what its ``runtime_s`` is, from its rows' ``runtime_source`` (the sources
            joined by ``; `` when its telemetry files differ); :data:`UNKNOWN` for a program
            whose rows do not say; "" for kernel runs and job-log rows (not a program sweep).
        wall_per_runtime: for a program whose ``runtime_s`` is its own reported time, the
            largest measured ratio of its launch's wall time (``elapsed_s``) to that time:
            what a job's time limit must allow for per predicted second (HPCC: 7.1 s of
            launch for 0.31 s of ``HPL_time``); 1 otherwise.
        command: a program's command line as its rows ran it, without the launcher, with
            ``{size}`` (and any other placeholder whose value varied) put back
            (:func:`.program_command.commands_of`); the one most rows ran when they ran
            several; "" when there is none (a kernel, a job-log label) or its lines cannot be
            read; None when the bundle predates the record (:func:`program_commands` then
            reads the rows).
        other_commands: the program's other command lines, when its rows ran several (a
            sweep with another option, merged by ``learn``), most rows first; () otherwise.
        measured_with: a program's reading options as its rows recorded them (a
            ``measure_options`` column: JSON of :data:`MEASURE_KEYS`, "" for one not used);
            None when the rows do not say, or disagree.
        launched_with: how a program's rows were launched (the telemetry's ``launch``:
            launcher, command, args, mpi; :mod:`.program_launcher`), which a job script
            repeats where no cluster file names a launcher; None when not recorded or mixed.
        command_configs: per command line (``command``, then ``other_commands``), the
            configurations its rows ran (:data:`~.program_command.RUN_KEYS` tuples), so that a
            script runs the line its pick ran (s30 tester O3); () in a bundle older than it.
        setup_s: a program's longest ``--setup`` seconds per configuration label, and of all
            under "" (:func:`~.setup_times.setup_seconds`), which a script's time limit adds
            (s30 tester O1); None without a setup, or in a bundle older than it.
        swept_in: the absolute folder a program's sweep ran in (its rows' ``swept_in``): a
            script runs a program swept without ``--workdir`` there (s37 tester G3); None when
            not recorded (a bundle or telemetry older than it) or its rows ran in several.
        swept_from: when a program's first launch started (its rows' earliest ``started_at``,
            epoch seconds): a file of its command older than that was its input, one newer its
            sweep wrote (s38 tester A1); None when not recorded (a bundle older than it).
        idle_threads: where a program's runs of 2+ threads kept about one core busy per rank
            (:func:`~hpcds1mpi.measure.thread_use.idle_threads_evidence`: it ignores
            OMP_NUM_THREADS, s41 tester A3), what they measured; None otherwise or older.
    """

    workload: str
    external: bool
    precisions: tuple = ()
    devices: tuple = ()
    threads: tuple = ()
    ranks_per_node: tuple = ()
    nodes: tuple = ()
    runtime: str = ""
    wall_per_runtime: float = 1.0
    command: str | None = ""
    measured_with: dict | None = None
    other_commands: tuple = ()
    launched_with: dict | None = None
    command_configs: tuple = ()
    setup_s: dict | None = None
    swept_in: str | None = None
    swept_from: float | None = None
    idle_threads: dict | None = None

    @property
    def max_ranks_per_node(self) -> int:
        return max(self.ranks_per_node) if self.ranks_per_node else 0

    def as_dict(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict) -> "MeasuredLevels":
        external = bool(data["external"])
        # A file written before ``runtime`` existed: a program's source is unknown.
        runtime = data.get("runtime", UNKNOWN if external else "")
        scale = data.get("wall_per_runtime", 1.0)  # older files: none known
        scale = float(scale) if isinstance(scale, (int, float)) and 1 <= scale < 1e9 else 1.0
        command = data.get("command", None if external else "")  # older files: not kept
        others = data.get("other_commands") or ()  # older files: one command or none
        if _numbered_alike([command, *others]):  # s2.nw, s4.nw: read again from the rows
            command, others = None, ()
        return cls(str(data["workload"]), external,
                   *(tuple(data.get(k) or ()) for k in
                     ("precisions", "devices", "threads", "ranks_per_node", "nodes")),
                   runtime=str(runtime or ""), wall_per_runtime=scale,
                   command=command if isinstance(command, str) or command is None else "",
                   measured_with=stored_measure_options(data.get("measured_with")),
                   other_commands=tuple(c for c in others if isinstance(c, str) and c)
                   if isinstance(others, (list, tuple)) else (),
                   launched_with=launch_dict(data.get("launched_with")),
                   command_configs=stored_configs(data.get("command_configs"),
                                            1 + len(others or ()) if command else 0),
                   setup_s=stored_seconds(data.get("setup_s")),
                   swept_in=stored_folder(data.get("swept_in")),
                   swept_from=stored_time(data.get("swept_from")),
                   idle_threads=stored_idle_threads(data.get("idle_threads")))


def _numbered_alike(lines: list) -> bool:
    """Whether several command lines differ only in numbers (``nwchem s2.nw``, ``nwchem
    s4.nw``): one line split by a bundle older than sizes read inside a word."""
    shapes = {re.sub(r"\d+", "#", line) for line in lines if isinstance(line, str)}
    return len(lines) > 1 and len(shapes) == 1


def _is_kernel(workload: str) -> bool:  # a registered kernel or its option deck (s41 D5)
    from hpcds1mpi.kernels import declaring

    try:
        return declaring(workload) is not None
    except Exception:  # noqa: BLE001 - a broken plugin makes nothing a kernel
        return False


def levels_from_frame(frame: "pd.DataFrame") -> dict[str, MeasuredLevels]:
    """Per workload, the levels its rows ran at (training rows or a runs table)."""
    import pandas as pd

    if len(frame) == 0 or "workload" not in frame.columns:
        return {}
    ran = frame
    if "status" in frame.columns:
        ran = frame[~frame["status"].astype(str).isin(_NOT_RUN)]
    out = {}
    for workload, rows in ran.groupby(ran["workload"].astype(str), sort=True):
        kinds = set(rows["kind"].dropna().astype(str)) if "kind" in rows.columns else set()
        external = "external" in kinds or not _is_kernel(workload)
        lines = command_runs(rows) if "external" in kinds else ()
        commands = tuple(line for line, _ in lines)

        # a runtime is learned from ok runs only: a 2-node crash made 2 nodes "measured"
        measured = rows[rows["status"].astype(str) == OK] if "status" in rows else rows

        def levels(col: str, number: bool = False) -> tuple:
            if col not in rows.columns:
                return ()
            values = (measured if len(measured) else rows)[col].dropna()
            if number:
                values = pd.to_numeric(values, errors="coerce").dropna().astype(int)
                return tuple(sorted({int(v) for v in values if v > 0}))
            return tuple(sorted({str(v) for v in values.astype(str) if v}))

        out[workload] = MeasuredLevels(workload, external, levels("precision"),
                                       levels("device"), levels("threads", True),
                                       levels("ranks_per_node", True), levels("nodes", True),
                                       runtime=_runtime_of(rows, "external" in kinds),
                                       wall_per_runtime=_wall_per_runtime(rows),
                                       command=commands[0] if commands else "",
                                       measured_with=one_recorded(
                                           rows, "measure_options", stored_measure_options)
                                       if "external" in kinds else None,
                                       other_commands=commands[1:],
                                       launched_with=launch_of(rows)
                                       if "external" in kinds else None,
                                       command_configs=tuple(runs for _, runs in lines),
                                       setup_s=(setup_seconds(rows) or None)
                                       if "external" in kinds else None,
                                       swept_in=one_recorded(rows, "swept_in", stored_folder)
                                       if "external" in kinds else None,
                                       swept_from=stored_time(pd.to_numeric(
                                           rows["started_at"], errors="coerce").min())
                                       if "external" in kinds and "started_at" in rows
                                       else None, idle_threads=idle_threads_evidence(rows)
                                       if "external" in kinds else None)
    return out


def recorded_measurement(levels: MeasuredLevels | None) -> tuple[dict, list[str]]:
    """How a program's runs were measured, as far as ``levels`` records it: (the reading
    options known, ``{key: value}`` of :data:`MEASURE_KEYS` with "" for one not used; the keys
    it cannot tell). The time regex comes from ``runtime`` (one source only); the others from
    ``measured_with``. Nothing is known of a workload the bundle never measured (None)."""
    from hpcds1mpi.measure.readings import WALL

    known = dict(levels.measured_with or {}) if levels is not None else {}
    if known:  # a record from before a later key (--setup) existed: its sweep used none
        known = {**{k: "" for k in ABSENT_IS_NONE}, **known}
    if levels is not None and "; " not in levels.runtime:
        if levels.runtime == WALL:
            known["time_regex"] = ""
        elif levels.runtime.startswith(_OWN_TIME):
            known["time_regex"] = levels.runtime[len(_OWN_TIME):].removesuffix(")")
    return known, [k for k in MEASURE_KEYS if k not in known]


def runtime_conflicts(levels: dict[str, MeasuredLevels]) -> list[str]:
    """One line per program whose rows measured different runtimes (the launch's wall time and
    the program's own time, or two time regexes): a model of both predicts neither. Rows that
    do not say (:data:`UNKNOWN`) conflict with nothing."""
    lines = []
    for name, lv in sorted(levels.items()):
        sources = [s for s in lv.runtime.split("; ") if s and s != UNKNOWN]
        if len(sources) > 1:
            lines.append(f"the runs of {name} measured different runtimes ("
                         f"{' vs '.join(_runtime_words(s) for s in sources)}); measure the new "
                         "runs as the earlier ones were (the same --time-regex), or keep them "
                         "in a separate model")
    return lines


def mixed_commands(levels: dict[str, MeasuredLevels]) -> list[str]:
    """One line per program whose rows ran several command lines (``learn`` on a sweep with an
    option added or changed): its rows are fitted as one program, ``advise`` knows it by any of
    them, and a script ``recommend`` writes runs the one its picked configuration ran
    (:func:`~.program_command.command_for`)."""
    lines = []
    for name, lv in sorted(levels.items()):
        if lv.external and lv.command and lv.other_commands:
            others = "; ".join(repr(c) for c in lv.other_commands)
            lines.append(f"note: the runs of {name} ran {1 + len(lv.other_commands)} command "
                         f"lines, fitted as one program: {lv.command!r} (most runs) and "
                         f"{others}; a script from recommend runs the one its pick ran; if "
                         "they compute different things, sweep them under separate --label "
                         "names")
    return lines


def refuse_mixed_runtimes(frame: "pd.DataFrame") -> None:
    """Refuse training rows in which one program measured different runtimes (a calibration
    sweep without the earlier sweep's ``--time-regex``, say): ``train`` and ``learn`` call it
    before they learn anything.

    Raises:
        DataError: the first program's :func:`runtime_conflicts` line, or a label whose lines
            run two programs (:func:`.label_programs.two_programs`, s41 tester A1; or one line
            swept from two folders reading other files: :func:`.label_programs.two_folders`)
            (exit 2).
    """
    from hpcds1mpi.errors import DataError
    from hpcds1mpi.surrogates.label_programs import two_folders, two_programs

    levels = levels_from_frame(frame)
    if two := two_programs(levels) or two_folders(frame):  # one label, two programs
        raise DataError(two)
    conflicts = runtime_conflicts(levels)
    if conflicts:
        raise DataError(conflicts[0])


def _wall_per_runtime(rows: "pd.DataFrame") -> float:
    """The largest launch wall / runtime of a program's successful rows whose runtime is its
    own reported time (see :attr:`MeasuredLevels.wall_per_runtime`); 1 for any other rows."""
    import numpy as np
    import pandas as pd

    from hpcds1mpi.measure.readings import WALL

    need = {"kind", "runtime_source", "elapsed_s", "runtime_s", "status"}
    if not need <= set(rows.columns):
        return 1.0
    own = rows[(rows["kind"].astype(str) == "external") & (rows["status"].astype(str) == "ok")
               & (rows["runtime_source"].astype(str) != WALL)]
    wall = pd.to_numeric(own["elapsed_s"], errors="coerce").to_numpy(float)
    run = pd.to_numeric(own["runtime_s"], errors="coerce").to_numpy(float)
    good = np.isfinite(wall) & np.isfinite(run) & (run > 0) & (wall > 0)
    return float(min(max(1.0, np.max(wall[good] / run[good])), 1e8)) if good.any() else 1.0


def _runtime_of(rows: "pd.DataFrame", program: bool) -> str:
    """The runtime source of one workload's rows (see :attr:`MeasuredLevels.runtime`)."""
    if not program:
        return ""
    if "kind" in rows.columns:
        rows = rows[rows["kind"].astype(str) == "external"]
    if "runtime_source" not in rows.columns:
        return UNKNOWN
    sources = sorted({str(v) if isinstance(v, str) and v else UNKNOWN
                      for v in rows["runtime_source"]})
    return "; ".join(sources) or UNKNOWN


def write_levels(path: Path, levels: dict[str, MeasuredLevels]) -> None:
    """Write ``measured_levels.json`` into the bundle folder ``path`` (being filled)."""
    doc = {w: lv.as_dict() for w, lv in sorted(levels.items())}
    (Path(path) / LEVELS_FILE).write_text(json.dumps(doc, indent=1))


def read_levels(path: Path) -> dict[str, MeasuredLevels] | None:
    """The stored levels of bundle folder ``path``; None when the bundle predates the file.

    Raises:
        ModelError: the file is there but damaged (one line).
    """
    file = Path(path) / LEVELS_FILE
    if not file.is_file():
        return None
    try:
        doc = json.loads(file.read_text())
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        found = {str(w): MeasuredLevels.from_dict(v) for w, v in doc.items()}
        # a kernel's option deck (no command, no program time) stored before s41 D5 as a program
        return {w: replace(lv, external=False) if lv.external and "+" in w and not lv.command
                and not lv.runtime and _is_kernel(w) else lv for w, lv in found.items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ModelError(f"{file}: unreadable ({exc}); {_FIX}") from None


def bundle_levels(bundle, workload: str, decks: bool = False) -> MeasuredLevels | None:
    """The measured levels of ``workload`` in ``bundle`` when only those may be offered.

    None for a registered kernel measured as a kernel (it keeps its declared knobs; ``decks``:
    a kernel's levels too, for an option deck's offer: ``decide/offer.py``, s47 N2) and for a
    workload the bundle never saw (the guard escalates it; there is nothing to restrict to)."""
    cache = getattr(bundle, "_measured_levels", None)
    if cache is None:
        path = getattr(bundle, "_path", None)
        cache = read_levels(path) if path is not None else None
        if cache is None and _is_kernel(workload) and "kind" not in _frame_columns(bundle):
            return None  # an older bundle, a kernel: its rows are kernel runs, declared knobs
        cache = _keep(bundle, cache)
    levels = cache.get(workload)
    return levels if levels is not None and (levels.external or decks) else None


def _keep(bundle, levels: dict[str, MeasuredLevels] | None) -> dict[str, MeasuredLevels]:
    """``levels`` (None: computed from the training rows), kept on the bundle object."""
    if levels is None:
        levels = levels_from_frame(_rows(bundle))
    try:
        bundle._measured_levels = levels
    except AttributeError:  # pragma: no cover - a frozen stand-in bundle
        pass
    return levels


def _rows(bundle) -> "pd.DataFrame":
    return bundle.training_data() if hasattr(bundle, "training_data") else \
        bundle.training_frame()


def program_commands(bundle) -> dict[str, str]:
    """Workload -> its program's command line as measured (``./app {size} 40``: see
    :attr:`MeasuredLevels.command`), for every program of ``bundle`` whose lines were read.

    A bundle whose ``measured_levels.json`` predates the record gets them from its training
    rows (their ``command`` column), read only when it has a program.
    """
    return {w: lines[0] for w, lines in program_command_lines(bundle).items()}


def program_command_lines(bundle) -> dict[str, tuple[str, ...]]:
    """Workload -> every command line its program's rows ran, :attr:`MeasuredLevels.command`
    first, then :attr:`MeasuredLevels.other_commands` (see :func:`program_commands`)."""
    levels = getattr(bundle, "_measured_levels", None)
    if levels is None:
        path = getattr(bundle, "_path", None)
        levels = _keep(bundle, read_levels(path) if path is not None else None)
    if any(lv.external and lv.command is None for lv in levels.values()):
        try:
            rows = _rows(bundle)
        except Exception:  # noqa: BLE001 - rows unreadable: no command is known
            rows = None
        if rows is not None and "command" in rows.columns:
            levels = levels_from_frame(rows)
    return {w: (lv.command, *lv.other_commands) for w, lv in levels.items()
            if lv.external and lv.command}


def _frame_columns(bundle) -> set:
    """Column names of the stored training rows without reading them (parquet schema)."""
    path = getattr(bundle, "_path", None)
    if path is None:
        return set()
    try:
        import pyarrow.parquet as pq

        with open(Path(path) / "training_data.parquet", "rb") as fh:  # no "~" expansion
            return set(pq.read_schema(fh).names)
    except Exception:  # noqa: BLE001 - unreadable: the bundle load reports it elsewhere
        return set()


__all__ = ["LEVELS_FILE", "MEASURE_KEYS", "MeasuredLevels", "UNKNOWN", "bundle_levels",
           "levels_from_frame", "mixed_commands", "program_command_lines", "program_commands",
           "read_levels", "recorded_measurement", "runtime_conflicts",
           "runtime_line", "write_levels"]
