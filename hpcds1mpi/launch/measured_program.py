"""Whether a job script's ranks run the program file its workload was measured with.

A sweep records its command with the program as it found it (``/usr/bin/python3 sim.py
{size} 20``). A script that names the program by a bare word runs whatever the ranks find on
their PATH: a venv's ``python3`` first on it is another interpreter, with its own modules and
its own mpi4py, though both resolve to one ``python3.11`` file (s32 tester U2: the job failed
with ``ModuleNotFoundError: meep``, and advise only named another launcher, which failed the
same way). The ranks' program is found as the MPI check finds it
(:func:`~hpcds1mpi.launch.script_mpi_check.ranks_program`: Open MPI's ``--prefix`` rule).
"""

from __future__ import annotations

import os
import shlex
from typing import TYPE_CHECKING

from hpcds1mpi.launch.program_file_mpi import program_word
from hpcds1mpi.launch.shebang import PYTHON_NAME

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch


def _python_home(path: str) -> str:
    """The environment a Python interpreter file runs in: its venv (the folder holding
    ``pyvenv.cfg`` beside or above its ``bin``), else the file it resolves to."""
    folder = os.path.dirname(os.path.abspath(path))
    for home in (folder, os.path.dirname(folder)):
        if os.path.isfile(os.path.join(home, "pyvenv.cfg")):
            return home
    return os.path.realpath(path)


def same_program(measured: str, ran: str) -> bool:
    """Whether the files ``measured`` and ``ran`` run one program: one file, and for a
    Python interpreter one environment (a venv's ``python3`` links the system's file)."""
    if PYTHON_NAME.match(os.path.basename(measured)) or \
            PYTHON_NAME.match(os.path.basename(ran)):
        return _python_home(measured) == _python_home(ran)
    return os.path.realpath(measured) == os.path.realpath(ran)


class MeasuredCommand(str):
    """A program's measured command line (``python3 laplace.py {size}``) that also knows the
    file its sweep's ranks ran for its program word (:attr:`program_file`; None: not known),
    which the line itself does not say where it names the program by a bare word."""

    program_file: str | None = None
    #: how its sweep launched it (the bundle's ``launched_with``; None: not one launcher
    #: recorded), whose MPI advise takes where the program's file does not tell
    #: (:mod:`~hpcds1mpi.launch.recorded_mpi`)
    launched_with: dict | None = None


def measured_command(command: str, launch: dict | None) -> MeasuredCommand:
    """``command`` with :attr:`~MeasuredCommand.program_file` read by :func:`measured_file`."""
    out = MeasuredCommand(command)
    out.program_file = measured_file(command, launch)
    out.launched_with = launch if isinstance(launch, dict) else None
    return out


def measured_file(command: str | None, launch: dict | None) -> str | None:
    """The file the ranks of a sweep launched as ``launch`` (a recorded ``launched_with``)
    ran for ``command``'s program word: the word itself when absolute; for a bare word, the
    one in the prefix's ``bin`` of an Open MPI ``mpirun`` written by its path, which its ranks
    find first (s33 tester B2: ``python3`` swept under ``/usr/bin/mpirun.openmpi`` was
    ``/usr/bin/python3``); None where the line does not tell (another launcher: the sweep's
    PATH is not recorded)."""
    from hpcds1mpi.launch.rank_program import prefix_bin_first

    try:
        tokens = shlex.split(command or "")
    except ValueError:
        return None
    word = program_word(tokens) if tokens else ""
    if os.path.isabs(word):
        return word if os.path.isfile(word) else None
    if not word or "/" in word or not isinstance(launch, dict) or \
            launch.get("launcher") == "srun":
        return None
    first = prefix_bin_first(launch.get("command") or "", launch.get("args") or ())
    found = os.path.join(first, word) if first else ""
    return found if found and os.path.isfile(found) and os.access(found, os.X_OK) else None


def other_program(script: "JobScript", launch: "Launch | None", command: str | None,
                  cwd: str, env: dict | None = None) -> str | None:
    """One warning line where ``launch``'s ranks run another file than the program (or
    interpreter) of its measured ``command``, named by its absolute path there; None where
    they agree, or either is not known (a measured command that names its program by a bare
    word or a relative path says nothing of which file ran)."""
    from hpcds1mpi.launch.script_mpi_check import ranks_program

    try:
        tokens = shlex.split(command or "")
    except ValueError:
        return None
    if launch is None or not tokens:
        return None
    measured = program_word(tokens)
    if not os.path.isabs(measured):  # a bare word: the file its sweep's ranks ran (s33 B2)
        measured = getattr(command, "program_file", None) or measured
    if not os.path.isabs(measured) or not os.path.isfile(measured):
        return wrapped_other(script, launch, command, cwd, env)
    word, ran = ranks_program(script, launch, cwd, env)
    if not word or ran is None:
        return None
    python = PYTHON_NAME.match(os.path.basename(measured))
    if os.path.basename(word) != os.path.basename(measured) and not (
            python and PYTHON_NAME.match(os.path.basename(word))):
        return None  # another word: another program, matched by its name elsewhere
    if same_program(measured, ran):
        return None
    found = f"{word} as {ran}" if word != ran else ran
    what = "interpreter (its own modules and mpi4py)" if python else "program file"
    return (f"line {launch.line}: the ranks of {launch.launcher} run {found}, but the workload "
            f"was measured with {measured} ({str(command)!r}): another {what}, so the predictions "
            f"are not for it and the job may fail; write {measured} on line {launch.line}")


def wrapped_other(script: "JobScript", launch: "Launch", command: str, cwd: str,
                  env: dict | None = None) -> str | None:
    """:func:`other_program`'s warning for a measured wrapper (``./run.sh {size}``) whose
    program it names by a bare word (``exec python3 ...``): that word as the job's ranks find
    it against the file the sweep's ranks ran (:func:`measured_file`); None where they agree
    or either is not known. s47 tester K6: the job's bare ``mpirun.openmpi`` left the venv's
    python3 first, and advise named MPICH's mpiexec, which ran that wrong interpreter too."""
    from hpcds1mpi.launch.script_mpi_check import named_file, ranks_path, ranks_program
    from hpcds1mpi.launch.wrapper_program import wrapped_program

    measured_word = program_word(shlex.split(command))
    word, wrapper = ranks_program(script, launch, cwd, env)
    if wrapper is None or os.path.basename(word) != os.path.basename(measured_word):
        return None
    name = (wrapped_program(wrapper) or [""])[0]
    launched = getattr(command, "launched_with", None)
    measured = measured_file(shlex.quote(name), launched) if name and "/" not in name else None
    ran = named_file(name, None, ranks_path(script, launch, cwd, env)) if measured else None
    if ran is None or same_program(measured, ran):
        return None
    what = "interpreter (its own modules and mpi4py)" if PYTHON_NAME.match(name) else "program"
    own = os.path.basename(wrapper)
    return (f"line {launch.line}: {own} runs {name}, which the ranks of {launch.launcher} find "
            f"as {ran}, but the workload was measured with {measured} ({str(command)!r}, "
            f"swept under {launched['command']}, which puts {os.path.dirname(measured)} first "
            f"on its ranks' PATH): another {what}, so the predictions are not for it and the "
            f"job may fail; launch it with {launched['command']} by that path as the sweep "
            f"did, or make {own} exec {measured}")
