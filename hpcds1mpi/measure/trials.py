"""System 2's runners: measure one configuration for real and return its runs-table row.

The search (:func:`hpcds1mpi.decide.system2.tune`) calls ``evaluate(config)``; the runners here
make that run, each through the one "sweep one configuration" description
(:class:`~hpcds1mpi.launch.sweep_step.SweepStep`, of which :class:`RunSettings` is System 2's
defaults):

* :class:`InProcessRunner` — one-configuration sweeps on sub-communicators of the launched
  world (``mpiexec -n P hpcds1mpi tune ...``);
* :class:`LaunchRunner` — each configuration launched with srun / mpiexec (a kernel as a
  one-configuration ``hpcds1mpi sweep`` under the launcher, a user's program through the
  external-program mode).

Both write every run to the telemetry file and read the row back from it; a run the file held
before (the sweep resumes: it does not run it again) comes back marked ``stored``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import LaunchError
from hpcds1mpi.launch.sweep_step import SweepStep

#: Launch environment variables that say this process is one rank of an MPI launch.
LAUNCHED_VARS = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_FD")


def launched_under_mpi(env: dict | None = None) -> bool:
    """True when this process is one rank of an mpiexec / srun --mpi launch."""
    env = os.environ if env is None else env
    return any(v in env for v in LAUNCHED_VARS)


def stored_runs(out: str) -> dict:
    """(machine id, run id) -> ``started_at`` of every run ``out`` holds (empty when none):
    what was there before a trial, so that :func:`row_of` tells a run it made from one the
    sweep's resume left alone."""
    from hpcds1mpi.errors import TelemetryError
    from hpcds1mpi.records import telemetry

    if not os.path.exists(out):
        return {}
    try:
        return {key: row.get("started_at") for key, row in telemetry.load(out).runs.items()}
    except TelemetryError:
        return {}


def row_of(out: str, run_id: str, before: dict | None = None) -> dict:
    """The last telemetry row of ``run_id`` in ``out``, or a ``crashed`` row saying why none.

    With ``before`` (:func:`stored_runs` taken before the trial): a row the trial did not
    write (the file already held that run, which the sweep does not run again) gets
    ``stored``, a line saying so; ``before`` is updated with the rows read.
    """
    from hpcds1mpi.errors import TelemetryError
    from hpcds1mpi.records import telemetry
    from hpcds1mpi.runtime.zoned_times import utc_text

    try:
        store = telemetry.load(out)
    except TelemetryError as exc:
        return {"status": "crashed", "error": f"no telemetry record ({exc})", "run_id": run_id}
    rows = [(key, row) for key, row in store.runs.items() if key[1] == run_id]
    if not rows:
        return {"status": "crashed", "error": "the run left no record in the telemetry file",
                "run_id": run_id}
    if before is None:
        return dict(rows[-1][1])
    fresh = [row for key, row in rows if key not in before
             or before[key] != row.get("started_at")]
    for key, row in rows:
        before[key] = row.get("started_at")
    if fresh:
        return dict(fresh[-1])
    row = dict(rows[-1][1])
    try:  # in UTC, named, as the journal's notes say theirs (s35 tester T7)
        measured = f"measured {utc_text(float(row.get('started_at')), with_seconds=False)}"
    except (TypeError, ValueError, OverflowError, OSError):
        measured = "measured earlier"
    row["stored"] = (f"already in {out} ({measured}), not run again (another --out "
                     "measures it anew)")
    return row


def run_notes(said: list[str], run: str) -> list[str]:
    """The sweep's notes of ``said`` on its run ``run`` (workload, size, configuration): that
    it exited 0 but said it did not converge, or left options unused
    (:func:`~hpcds1mpi.measure.convergence.convergence_note`). A trial's sweep says them as
    every sweep does, once per configuration, and tune passes them on: its "best" had been an
    Elk run that said it did not reach self-consistency, with no word of it (s30 tester N3).
    The sweep's other lines (its pre-flight) tune has said once already, before the trials."""
    return [line for line in said if line.startswith(f"note: {run}: ")]


@dataclass
class RunSettings(SweepStep):
    """How System 2 measures each configuration: a :class:`SweepStep` with System 2's
    defaults (at least 0.2 s, up to 5 repeats, one warm-up, 600 s timeout, no snapshots)."""

    min_time: float | None = 0.2
    max_repeats: int | None = 5
    warmup: int | None = 1
    timeout: float | None = 600.0
    program: str | Sequence[str] | None = None
    snapshot_every: float | None = 0


def _exe() -> str:
    exe = Path(sys.executable).parent / "hpcds1mpi"
    return str(exe) if exe.exists() else "hpcds1mpi"


class InProcessRunner:
    """Runs one-configuration sweeps on the launched world (collective; see :meth:`serve`).

    Rank 0 calls :meth:`__call__` (from :func:`~hpcds1mpi.decide.system2.tune`); every other
    rank calls :meth:`serve`, which mirrors each run until rank 0 calls :meth:`close`.
    """

    def __init__(self, settings: RunSettings, out: str, partition, world):
        self.settings = settings
        self.out = out
        self.partition = partition
        self.world = world
        self.before = stored_runs(out)

    def _plan(self, config: Configuration):
        from hpcds1mpi.measure.plan import build_plan

        return build_plan(self.settings.plan_doc(config), self.partition)

    def _run(self, config: Configuration) -> None:
        from hpcds1mpi.measure import driver

        driver.run_inprocess(self.world, self._plan(config), self.out, self.partition,
                             resume=True, progress=False)

    def __call__(self, config: Configuration) -> dict:
        self.world.bcast(config.as_dict(), root=0)
        self._run(config)
        return row_of(self.out, self._plan(config).runs[0].run_id, self.before)

    def serve(self) -> None:
        while True:
            item = self.world.bcast(None, root=0)
            if item is None:
                return
            self._run(Configuration(**item))

    def close(self) -> None:
        self.world.bcast(None, root=0)


class LaunchRunner:
    """Launches each configuration with srun / mpiexec and reads its row from telemetry.

    A kernel runs as ``<launcher> hpcds1mpi sweep --kernel K ... --resume`` (one configuration,
    in-process under that launch); a user's program through the sweep's external-program mode.
    """

    def __init__(self, settings: RunSettings, out: str, partition, launcher: str,
                 cluster_file: str | None = None, partition_name: str | None = None,
                 relaunches: int = 1, choice=None, readings=None, workdir: str | None = None,
                 setup: str | None = None, mpi: str | None = None,
                 accept_edited_inputs: bool = False):
        #: tune's --accept-edited-inputs: its trials add to an --out whose inputs were edited
        self.accept_edited_inputs = accept_edited_inputs
        #: srun's ``--mpi`` given on the command line (None: the cluster file's, else pmi2)
        self.mpi = mpi
        #: a user's program: how it is launched (a :class:`~hpcds1mpi.launch.preflight.
        #: LaunchChoice`: --mpiexec, --launcher-args), read (--time-regex, ...), where, and
        #: what prepares its folder first (--setup)
        self.choice, self.readings, self.workdir = choice, readings, workdir
        self.setup = setup
        self.relaunches = relaunches
        #: (configuration, exit code, last stderr line) of every launch made again
        self.relaunched: list[tuple[str, int, str]] = []
        self.settings = settings
        self.out = out
        self.partition = partition
        self.launcher = launcher
        self.cluster_file = cluster_file
        self.partition_name = partition_name
        self.before = stored_runs(out)

    def _srun_mpi(self) -> str:
        """``--mpi``, else the cluster file's srun plugin: tune measures as the site's
        scripts launch."""
        from hpcds1mpi.cluster import srun_mpi

        return self.mpi or srun_mpi(self.cluster_file)

    def program_plan(self, config: Configuration):
        """The sweep's plan of the program's one run at ``config``."""
        from hpcds1mpi.measure.external_plan import build_external_plan

        options = self.settings.options(config)
        return build_external_plan(
            options.pop("command"), options.pop("label"), sizes=options["sizes"],
            nodes=options["nodes"], ranks_per_node=options["ranks_per_node"],
            threads=options["threads"], devices=options["devices"],
            precisions=options["precisions"], timeout=options.get("timeout"),
            min_time=options.get("min_time"), min_repeats=options.get("min_repeats"),
            max_repeats=options.get("max_repeats"),
            warmup=options.get("warmup"))

    def edited_inputs(self, configs) -> str:
        """Before any trial: refuse, as the sweep's ``--resume`` does, an ``--out`` whose
        program input (a file an argument names, at any of ``configs``) was edited after its
        runs; with :attr:`accept_edited_inputs` the note that says so; "" where none was
        (:func:`~hpcds1mpi.measure.input_stamps.check_inputs`). The trials check it too, but
        a trial's refusal comes after the pre-flight launch, and its note is not said."""
        from types import SimpleNamespace

        from hpcds1mpi.measure.input_stamps import check_inputs, input_stamps

        runs = [spec for config in configs for spec in self.program_plan(config).runs]
        return check_inputs(self.out, input_stamps(SimpleNamespace(runs=runs), self.workdir),
                            self.accept_edited_inputs, by="tune")

    def _program(self, config: Configuration) -> dict:
        from hpcds1mpi.measure import external

        plan = self.program_plan(config)
        heard: list[str] = []
        external.run_external(plan, self.out, self.partition, resume=True,
                              launcher=self.launcher, progress=False, mpi=self._srun_mpi(),
                              choice=self.choice, readings=self.readings, workdir=self.workdir,
                              setup=self.setup, say=heard.append,
                              accept_edited_inputs=self.accept_edited_inputs)
        spec = plan.runs[0]
        row = row_of(self.out, spec.run_id, self.before)
        notes = run_notes(heard, f"{spec.workload} size {spec.size} {spec.config.label()}")
        return {**row, "notes": notes} if notes else row

    def __call__(self, config: Configuration) -> dict:
        import subprocess

        from hpcds1mpi.launch import launchers
        from hpcds1mpi.measure.plan import RunSpec
        from hpcds1mpi.runtime.processes import run_child

        s = self.settings
        if s.program is not None:
            return self._program(config)
        launcher = launchers.local(self.launcher, mpi=self._srun_mpi())
        tokens = s.command(config, launcher, self.out, exe=_exe(), progress=False,
                           cluster_file=self.cluster_file, partition=self.partition_name)
        env = dict(os.environ)
        env.update(launcher.environment(config))
        run_id = RunSpec(s.workload, s.size, config).run_id
        for attempt in range(1 + self.relaunches):
            try:
                # Its own group, dying with tune even at kill -9 (s33 tester C5: a killed
                # tune had left its trial's mpiexec and ranks writing --out).
                proc = run_child(tokens, timeout=s.timeout + 60, env=env)
            except FileNotFoundError:
                raise LaunchError(f"{tokens[0]} not found; run tune inside an allocation with "
                                  "srun on PATH, or pass --launcher mpiexec") from None
            except subprocess.TimeoutExpired:
                return {"status": "timeout",
                        "error": f"launch did not end within {s.timeout + 60:g} s"}
            row = row_of(self.out, run_id, self.before)
            # A launch that failed before the sweep recorded anything never ran the kernel
            # (e.g. Slurm's pmi2 plugin rejecting a wire-up message, seen on the two-node test
            # Slurm): launch it again rather than exclude a configuration never measured.
            never_ran = row.get("status") == "crashed" and str(row.get("error", "")).startswith(
                ("the run left no record", "no telemetry record"))
            if proc.returncode == 0 or not never_ran or attempt == self.relaunches:
                break
            self.relaunched.append((config.label(), proc.returncode,
                                    (proc.stderr.strip().splitlines() or [""])[-1][:200]))
        if row.get("status") == "crashed" and proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            row["error"] = f"launch exited {proc.returncode}: {last[:200]}"
        return row
