"""The supervisor: relaunch an in-process sweep until its plan is done (``sweep --launch N``).

It runs outside mpiexec/srun and starts each launch in a session (process group) of its own.
A launch that dies by itself (a segfault, a rank that failed alone, an abort) leaves its run
unfinished or noted: before relaunching with ``--resume`` the supervisor leaves a crash note
(:func:`hpcds1mpi.records.telemetry.journal.write_crash_note`) with the exit code it saw, so
the run is recorded ``crashed`` with that evidence (``failed`` when a rank left a fault note;
the watchdog's timeout abort, exit 124, has recorded ``timeout`` itself) and skipped.

What is not a crash of the run: SIGINT / SIGTERM of the supervisor (Ctrl-C, the walltime) are
forwarded to the launch's process group (then SIGKILL after a grace period), the run stays
``interrupted`` and the supervisor ends with :class:`~hpcds1mpi.errors.SweepInterrupted`
(exit 1). A launch that exits 0 before its plan is done (a rank's ``os._exit(0)``) is an error
(exit 1), never success; its unfinished run stays ``interrupted`` (``--resume`` runs it again).
So is a launch that ended on an error of the sweep itself (exit :data:`SWEEP_ERROR_EXIT`: a
full disk, a bug), which is not relaunched. A launch that failed as the Slurm allocation seen
running at the start ended (its time limit passed: srun refuses the relaunch, "Job/step already
completing or completed"; :class:`~hpcds1mpi.measure.allocation_state.Allocation`) is neither a
crash nor a launch without progress: the run stays ``interrupted`` and the supervisor stops
with one line (exit 1) saying to resume in a new allocation (s33 tester A8).
"""

from __future__ import annotations

import os
import signal
import sys

from hpcds1mpi.errors import LaunchError, SweepInterrupted, TelemetryError
from hpcds1mpi.runtime.processes import die_with_parent, end_group

#: Telemetry attribute the in-process driver sets to 1 when a launch has run its whole plan.
COMPLETE_ATTR = "sweep_complete"
#: Exit code of a launch the watchdog aborted (its run is recorded ``timeout``).
TIMEOUT_EXIT_CODE = 124
#: Set to "1" in every launch's environment (its ranks leave the interrupt message to us).
SUPERVISED_ENV = "HPCDS1MPI_SUPERVISED"
#: Exit code of a supervised launch that ended on an error of the sweep itself (a full disk, an
#: interrupt, a bug: said in one line by the launch), not of the run: no crash note, no relaunch.
SWEEP_ERROR_EXIT = 3
#: Exit codes of a supervised launch whose rank was sent SIGINT / SIGTERM by someone other than
#: the supervisor (its ranks leave the line to us; a rank killed alone, s33 tester C8).
RANK_INTERRUPTED_EXIT = {signal.SIGINT: 4, signal.SIGTERM: 5}
#: Seconds a forwarded SIGINT/SIGTERM has before the launch's group is killed.
GRACE_S = 5.0


class _Stop(BaseException):
    """The supervisor received SIGINT / SIGTERM (raised by its handler)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _raise_stop(signum, frame):
    raise _Stop(signum)


def run_launch(argv: list[str]) -> int:
    """Run one launch in its own session; forward SIGINT/SIGTERM to its group.

    Returns:
        The launch's exit code (negative: the signal that ended it).

    Raises:
        _Stop: the supervisor was signalled; the launch's group is ended by then.
        LaunchError: the launcher could not start.
    """
    import subprocess

    try:
        proc = subprocess.Popen(argv, start_new_session=True, preexec_fn=die_with_parent(),
                                stdin=subprocess.DEVNULL,  # mpiexec would read the terminal
                                env={**os.environ, SUPERVISED_ENV: "1"})
    except OSError as exc:
        raise LaunchError(f"cannot start {argv[0]}: {exc.strerror}") from None
    try:
        return proc.wait()
    except _Stop as stop:
        end_group(proc, stop.signum, GRACE_S)
        raise



def _describe(rc: int) -> str:
    if rc < 0:
        try:
            return f"was killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"was killed by signal {-rc}"
    return f"exited {rc}"


def supervise(ranks: int, argv: list[str], out: str, *, max_launches: int = 1000,
              launcher: str | None = None, mpi: str = "pmi2", mpiexec: str | None = None,
              args: tuple[str, ...] = ()) -> int:
    """Launch ``hpcds1mpi sweep ARGV`` on ``ranks`` ranks until it finishes.

    After a launch dies by itself it leaves a crash note and relaunches with ``--resume``; the
    configuration that was running is by then recorded as ``timeout``, ``failed`` or (from the
    note) ``crashed`` and skipped.

    Args:
        ranks: ranks per launch.
        argv: the sweep's own arguments (without ``--launch``).
        out: the telemetry file the sweep writes (read to see progress).
        max_launches: give up after this many launches.
        launcher: ``srun`` or ``mpiexec``; None detects it.
        mpiexec: the mpiexec/mpirun that starts it (None: the one beside this Python, else
            PATH's); srun's ``--mpi`` plugin is ``mpi``.
        args: the user's launcher options (``--launcher-args``, the cluster file's
            ``launcher_args``), after the launcher's own (s42: they were read, never used).

    Returns:
        0 when the plan is done; 2 when the first launch reports a user error, 1 when a launch
        ended on an error of the sweep itself (both already printed by the sweep).

    Raises:
        LaunchError: a launch recorded nothing new (no progress), exited 0 before its plan was
            done, or ``max_launches`` ran out.
        SweepInterrupted: the supervisor was sent SIGINT / SIGTERM.
    """
    from pathlib import Path

    from hpcds1mpi.launch import launchers

    exe = str(Path(sys.executable).parent / "hpcds1mpi")
    if not Path(exe).exists():
        exe = "hpcds1mpi"
    from hpcds1mpi.measure.allocation_state import Allocation

    tokens = launchers.local(launcher, mpi=mpi, mpiexec=mpiexec, args=args).total_tokens(ranks)
    allocation = Allocation.at_start()  # silent: the sweep it launches says its own notes
    args = list(argv)
    previous, previous_rows = -1, None
    handlers = {}
    if _in_main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            handlers[sig] = signal.signal(sig, _raise_stop)
    try:
        for launch in range(max_launches):
            try:
                rc = run_launch(tokens + [exe, "sweep", *args])
            except _Stop as stop:
                kept = _finished_runs(out)  # not the run the signal cut short
                raise SweepInterrupted(
                    f"sweep stopped by {signal.Signals(stop.signum).name} during launch "
                    f"{launch + 1}; the launch was ended, {kept} finished run(s) are kept "
                    f"in {out} and the unfinished one is re-run by --resume") from None
            rows, complete, in_flight, recorded = _progress(out)
            if rc == 0:
                if complete:
                    return 0
                raise LaunchError(
                    f"sweep launch {launch + 1} exited 0 before its plan was done (a rank left "
                    f"the job early, e.g. os._exit in a kernel); {max(rows, 0)} runs recorded "
                    f"are kept in {out}, the unfinished one is re-run by --resume")
            if rc == 2 and launch == 0:
                return rc  # a user error, already printed by the sweep
            if rc == SWEEP_ERROR_EXIT:
                return 1  # the sweep's own error (a full disk...), already said in one line
            if allocation is not None and (ended := allocation.end()):  # no crash, no error
                raise SweepInterrupted(
                    f"{ended}: sweep launch {launch + 1} {_describe(rc)}; "
                    f"{_finished_runs(out)} finished run(s) are kept in {out}; sweep again "
                    "with --resume inside a new allocation")
            if rc in RANK_INTERRUPTED_EXIT.values():  # nobody said it: the ranks leave it to us
                name = next(s.name for s, code in RANK_INTERRUPTED_EXIT.items() if code == rc)
                raise SweepInterrupted(
                    f"a rank of sweep launch {launch + 1} ended (signal {name}); the launch "
                    f"was ended, {_finished_runs(out)} finished run(s) are kept in {out}; "
                    "--resume continues")
            # A run measured again replaces its row (a timeout under a raised --timeout, s49
            # review F1): progress is a row that changed, not only one more row.
            if rows <= previous and recorded == previous_rows:
                raise LaunchError(f"sweep launch {launch + 1} {_describe(rc)} without recording "
                                  "a run; stopping (see the messages above)")
            previous, previous_rows = rows, recorded
            if rc != TIMEOUT_EXIT_CODE and in_flight:  # evidence for the run it was on
                _note_crash(out, f"launch {launch + 1} {_describe(rc)} while it ran")
            if "--resume" not in args:
                args.append("--resume")
            sys.stderr.write(f"hpcds1mpi: launch {launch + 1} exited {rc}; {rows} runs "
                             "recorded, resuming\n")
        raise LaunchError(f"sweep not finished after {max_launches} launches")
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def _in_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _progress(out: str) -> tuple[int, bool, bool, frozenset | None]:
    """(runs recorded in ``out``, whether the last launch ran its whole plan, whether a run was
    left unfinished, each recorded run's key with its status and error: a row replaced reads
    apart); (-1, False, False, None) when ``out`` cannot be read."""
    from hpcds1mpi.records import telemetry

    try:
        store = telemetry.load(out, crashed=False)
    except TelemetryError:
        return -1, False, False, None
    recorded = set(store.runs) | set(store.started)  # an unfinished run is settled on resume
    in_flight = any(store.runs.get(k, {}).get("status") in (None, "crashed", "interrupted")
                    for k in store.started)
    # measured rows only: a run the crash note marks crashed (or one interrupted) is none
    rows = frozenset((key, str(row.get("status")), str(row.get("error")))
                     for key, row in store.runs.items()
                     if row.get("status") not in (None, "crashed", "interrupted"))
    return len(recorded), str(store.attrs.get(COMPLETE_ATTR, "0")) == "1", in_flight, rows


def _finished_runs(out: str) -> int:
    """Runs of ``out`` with a result (not ``interrupted``, not in flight); 0 if unreadable."""
    from hpcds1mpi.records import telemetry

    try:
        store = telemetry.load(out, crashed=False)
    except TelemetryError:
        return 0
    return sum(1 for key, row in store.runs.items()
               if row.get("status") not in (None, "interrupted") and key not in store.started)


def _note_crash(out: str, evidence: str) -> None:
    from hpcds1mpi.records.telemetry.journal import write_crash_note

    try:
        write_crash_note(out, evidence)
    except OSError as exc:  # the run then reads interrupted: re-run, never a false crash
        sys.stderr.write(f"hpcds1mpi: could not leave the crash note beside {out}: "
                         f"{exc.strerror}\n")
