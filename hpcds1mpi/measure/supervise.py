"""The supervisor: relaunch an in-process sweep until its plan is done (``sweep --launch N``).

It runs outside mpiexec/srun. A launch that dies (the watchdog's timeout abort, a rank that
failed alone, a crash, a kill) has by then recorded the run it was on as ``timeout``,
``crashed`` or (from a fault note) ``failed``, so ``--resume`` skips it and goes on.
"""

from __future__ import annotations

import sys

from hpcds1mpi.errors import LaunchError, TelemetryError


def supervise(ranks: int, argv: list[str], out: str, *, max_launches: int = 1000,
              launcher: str | None = None) -> int:
    """Launch ``hpcds1mpi sweep ARGV`` on ``ranks`` ranks until it finishes.

    After a launch dies it relaunches with ``--resume``; the configuration that was running is
    by then recorded as ``timeout`` or ``crashed`` and skipped.

    Args:
        ranks: ranks per launch.
        argv: the sweep's own arguments (without ``--launch``).
        out: the telemetry file the sweep writes (read to see progress).
        max_launches: give up after this many launches.
        launcher: ``srun`` or ``mpiexec``; None detects it.

    Returns:
        0 when the plan is done; 2 when the first launch reports a user error (already
        printed by the sweep).

    Raises:
        LaunchError: a launch recorded nothing new (no progress), or ``max_launches`` ran out.
    """
    import subprocess
    from pathlib import Path

    from hpcds1mpi.launch import launchers
    from hpcds1mpi.records import telemetry

    exe = str(Path(sys.executable).parent / "hpcds1mpi")
    if not Path(exe).exists():
        exe = "hpcds1mpi"
    tokens = launchers.total_tokens(ranks, launcher=launcher)
    args = list(argv)
    previous = -1
    for launch in range(max_launches):
        rc = subprocess.run(tokens + [exe, "sweep", *args]).returncode
        if rc == 0:
            return 0
        if rc == 2 and launch == 0:
            return rc  # a user error, already printed by the sweep
        try:
            rows = len(telemetry.load(out).runs)
        except TelemetryError:
            rows = -1
        if rows <= previous:
            raise LaunchError(f"sweep launch {launch + 1} exited {rc} without recording a run; "
                              "stopping (see the messages above)")
        previous = rows
        if "--resume" not in args:
            args.append("--resume")
        sys.stderr.write(f"hpcds1mpi: launch {launch + 1} exited {rc}; {rows} runs recorded, "
                         "resuming\n")
    raise LaunchError(f"sweep not finished after {max_launches} launches")
