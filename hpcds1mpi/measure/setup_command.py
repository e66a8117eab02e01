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
``setup failed (exit N): <its last output line>``, and the program is not launched.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from dataclasses import dataclass

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.program import no_control, placeholder_values
from hpcds1mpi.measure.printable import printable
from hpcds1mpi.runtime.processes import die_with_parent, end_group

#: Bytes of the setup's output kept for its last line.
TAIL = 16 * 2**10
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
    """``setup`` with the placeholders of ``config`` at ``size`` filled (other braces stay)."""
    for key, value in placeholder_values(config, size).items():
        setup = setup.replace("{" + key + "}", str(value))
    return setup


@dataclass(frozen=True)
class SetupResult:
    """What one run of the setup did: its exit code (None: timed out), wall seconds, and
    the reason the configuration failed ("" when it did not)."""

    exit_code: int | None
    wall_s: float
    reason: str = ""


def run_setup(setup: str, env: dict, cwd: str | None, timeout: float) -> SetupResult:
    """Run the filled ``setup`` once through ``/bin/sh -c`` in ``cwd`` with ``env``, in a
    session of its own, killed (its whole group) after ``timeout`` seconds.

    Raises:
        BaseException: whatever interrupts the wait (Ctrl-C, the sweep's SIGTERM handler)
            passes on after the setup's process group is killed.
    """
    with tempfile.TemporaryFile() as out_fh:
        start = time.perf_counter()
        proc = subprocess.Popen(["/bin/sh", "-c", setup], stdin=subprocess.DEVNULL,
                                stdout=out_fh, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                start_new_session=True, preexec_fn=die_with_parent())
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            end_group(proc)
            code = None
        except BaseException:
            end_group(proc)  # no orphan of the user's setup
            raise
        wall = time.perf_counter() - start
        last = _last_line(out_fh)
    if code == 0:
        return SetupResult(0, wall)
    how = f"timed out after {timeout:g} s" if code is None else f"exit {code}"
    return SetupResult(code, wall, f"{FAILED} ({how}): {printable(last) or 'it printed nothing'}")


def _last_line(fh) -> str:
    """The last non-empty line of the binary file ``fh`` (its last :data:`TAIL` bytes)."""
    size = fh.seek(0, 2)
    fh.seek(max(0, size - TAIL))
    lines = [line.strip() for line in fh.read().decode("utf-8", "replace").splitlines()]
    return next((line for line in reversed(lines) if line), "")
