"""A program sweep's per-configuration pre-step: ``--setup CMD``.

Some programs need their folder prepared for each configuration before they can start: an
OpenFOAM case decomposed for its rank count (``decomposePar``), an input file written from the
size (Elk's ``elk.in``). A wrapper launched by mpirun would run such a step once per rank, all
at once; ``--setup`` runs it once per configuration, before its first launch (warm-ups
included, never per repeat), on the node running the sweep, not under the launcher
(ReFrame's ``prerun_cmds``).

It runs through ``/bin/sh -c`` (so ``&&``, ``|`` and redirections work), its placeholders
``{size} {nodes} {ranks} ...`` filled as ``--command``'s are, in the configuration's folder
(``--workdir``'s, else the sweep's), with the environment the launch gets, bounded by the
configuration's ``--timeout``. Its time is not the program's: it is no part of ``runtime_s``.
One that exits non-zero or times out makes the configuration ``failed`` with the reason
``setup failed (exit N): <why>`` (read as a failed launch's reason) or ``setup failed (timed
out after T s): <its last line>``, and the program is not launched; ``--resume`` runs it again
(the program never ran there). Its whole process group dies with the sweep, even a SIGKILLed
one (:mod:`~hpcds1mpi.runtime.group_guard`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.program import no_control, placeholder_values
from hpcds1mpi.measure.printable import printable
from hpcds1mpi.runtime.processes import die_with_parent, end_group

#: Bytes of the setup's output kept for its last line.
TAIL = 64 * 2**10
#: How the reason starts: what ``telemetry show`` and a user grep for.
FAILED = "setup failed"


def check_setup(setup: str | None) -> str | None:
    """``setup`` checked (None: no setup).

    Raises:
        ConfigError: empty, or a newline or control character in it.
    """
    if setup is None:
        return None
    no_control(setup, "--setup")
    if not setup.strip():
        raise ConfigError("--setup is empty: give the command that prepares each "
                          "configuration's folder (e.g. --setup 'decomposePar -force'), or "
                          "drop it")
    return setup


def filled_setup(setup: str, config, size: int) -> str:
    """``setup`` with the placeholders of ``config`` at ``size`` filled, ``{{size}}`` written
    ``{size}`` (other braces stay: :mod:`~hpcds1mpi.launch.placeholder_fill`)."""
    from hpcds1mpi.launch.placeholder_fill import fill

    return fill(setup, placeholder_values(config, size))


def set_up(setup: str | None, spec, env: dict, cwd: str | None,
           timeout: float) -> tuple[dict | None, float]:
    """Run ``setup`` for the run ``spec`` (:func:`run_setup`): (None when there is none or it
    succeeded, else the configuration's failed measurement in ``external._measure``'s shape,
    nothing launched; the setup's wall seconds, NaN without one: the ``setup_s`` column, which
    a job script's time limit adds, s30 tester O1). Its time is no launch's: not in
    ``runtime_s`` or ``elapsed_s``."""
    if not setup:
        return None, float("nan")
    done = run_setup(filled_setup(setup, spec.config, spec.size), env, cwd, timeout)
    reason, code = done.reason, done.exit_code if done.exit_code is not None else -9
    if not reason and cwd and not os.path.isdir(cwd):  # the program could not start there
        reason, code = (f"{FAILED} (exit 0): it left no folder {cwd!r} for the program (it "  # R5
                        "removed or moved it?)"), 0
    if not reason:
        return None, done.wall_s
    return {"status": "failed", "error": reason, "exit_code": code, "walls": [], "times": [],
            "foms": [], "cpu_s": float("nan"), "rss_mb": float("nan"), "rss_source": "",
            "warning": ("", "")}, done.wall_s


def failed_in_setup(row: dict) -> bool:
    """Whether a recorded run failed in its setup: the program never ran there, so
    ``--resume`` runs it again, as an interrupted one (s30 tester O6)."""
    return row.get("status") == "failed" and str(row.get("error", "")).startswith(FAILED)


def setup_failed_words(summary: dict) -> str:
    """What a sweep's summary line adds for its configurations that failed in their setup
    (``summary["setup_failed"]``): "" for none."""
    n = summary.get("setup_failed", 0)
    return (f"; {n} of them failed in their --setup (the program never ran there: --resume "
            "runs them again)") if n else ""


@dataclass(frozen=True)
class SetupResult:
    """What one run of the setup did: its exit code (None: timed out), wall seconds, and
    the reason the configuration failed ("" when it did not)."""

    exit_code: int | None
    wall_s: float
    reason: str = ""


def run_setup(setup: str, env: dict, cwd: str | None, timeout: float) -> SetupResult:
    """Run the filled ``setup`` once through ``/bin/sh -c`` in ``cwd`` with ``env``, in a
    session of its own under a guard (:mod:`~hpcds1mpi.runtime.group_guard`) that ends the
    whole group when the sweep dies, even by SIGKILL (s30 tester O4: ``sleep 301`` had outlived
    a ``kill -9`` of the sweep); the group is killed after ``timeout`` seconds.

    The reason of a failure is read as a failed launch's (:func:`~hpcds1mpi.measure.
    program_launch.reason_line`: OpenFOAM's "FOAM FATAL ERROR" with its message, not its last
    line "FOAM exiting": s30 tester O5); of a timeout, its last line (where it hung).

    Raises:
        BaseException: whatever interrupts the wait (Ctrl-C, the sweep's SIGTERM handler)
            passes on after the setup's process group is killed.
    """
    import sys

    from hpcds1mpi.runtime import group_guard

    guard = [sys.executable, "-I", "-S", group_guard.__file__, "/bin/sh", "-c", setup]
    with tempfile.TemporaryFile() as out_fh, tempfile.TemporaryFile() as err_fh:
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(guard, stdin=subprocess.DEVNULL, stdout=out_fh,
                                    stderr=err_fh, env=env, cwd=cwd, start_new_session=True,
                                    preexec_fn=die_with_parent())
        except OSError as exc:  # its folder gone (another setup removed it): this one fails
            return SetupResult(127, 0.0, f"{FAILED}: cannot start in {cwd!r}: {exc.strerror}")
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            end_group(proc)
            code = None
        except BaseException:
            end_group(proc)  # no orphan of the user's setup
            raise
        wall = time.perf_counter() - start
        try:  # what ignored the guard's SIGTERM when the setup returned (s30 review 1)
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if code == 0:
            return SetupResult(0, wall)
        from hpcds1mpi.measure.program_launch import stream_tail

        stdout, stderr = stream_tail(out_fh, TAIL), stream_tail(err_fh, TAIL)
    if code is None:
        last = _last_line(stdout) or _last_line(stderr)
        return SetupResult(None, wall, f"{FAILED} (timed out after {timeout:g} s): "
                                       f"{printable(last) or 'it printed nothing'}")
    from hpcds1mpi.measure.program_launch import reason_line

    why = reason_line(stdout, stderr)[:300]  # escaped there; one line
    return SetupResult(code, wall, f"{FAILED} (exit {code}): {why or 'it printed nothing'}")


def _last_line(text: str) -> str:
    """The last non-empty line of ``text``."""
    lines = [line.strip() for line in text.splitlines()]
    return next((line for line in reversed(lines) if line), "")
