"""The precision and the device a job script's launched program asks for (``--precision X``
or ``--precision=X``, ``--device X`` or ``--device=X``, the word where its measured command
has ``{device}``, or ``HPCDS1MPI_PRECISION`` / ``HPCDS1MPI_DEVICE`` set for it), read over the
launch line :mod:`~hpcds1mpi.launch.script_request` resolves: both by one rule."""

from __future__ import annotations

from typing import TYPE_CHECKING

# The precisions a launched program may ask for are those hpcds1mpi sweeps (``run
# --precision``): one home, not a copy in script_request (s31 review M3).
from hpcds1mpi.config import PRECISIONS
from hpcds1mpi.launch.script_placeholders import launch_words, own_command_at, placeholder_words

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch


def _given(args: list[str], option: str) -> str | None:
    """The value of ``option X`` or ``option=X`` among a launched program's ``args`` (click
    takes both), the last one given, as click and argparse take a repeated option (s45
    tester F10: the first was read); None where it is not given."""
    given = None
    for k, word in enumerate(args):
        if word == option and k + 1 < len(args):
            given = args[k + 1]
        elif word.startswith(option + "="):
            given = word[len(option) + 1:]
    return given


def _option(args: list[str], option: str, allowed) -> str | None:
    """:func:`_given`'s value where it is one of ``allowed``, else None."""
    given = _given(args, option)
    return given if given in allowed else None


def _variable(script: "JobScript", launch: "Launch | None", name: str,
              allowed) -> tuple[str, int] | None:
    """(value, line) of the variable ``name`` the launched program sees: set on its launch
    line, else the script's last setting at or before that line (one after it never reaches
    the program: s45 tester C2); every setting counts where there is no launch line."""
    if launch is not None:
        env = launch.env.get(name)
        if env and env[0] in allowed:
            return env[0], env[1].line
    settings = script.settings if launch is None else script.settings_before(launch)
    for s in reversed(settings):  # a subshell's closed before the launch left out (s45 S1)
        if s.name == name and s.resolved in allowed:
            return s.resolved, s.line
    return None


def precision_of(script: "JobScript", launch: "Launch | None") -> tuple[str, bool]:
    """(precision, whether the script says it): ``--precision X`` / ``--precision=X``, or
    HPCDS1MPI_PRECISION set on the launch line or before it (:func:`_variable`). A value
    ``run --precision`` would refuse (``single``, ``FP32``) is said, with fp64 read, in a note
    naming it: the script does say a precision, one not read (s45 tester F10)."""
    given = _given(launch.args, "--precision") if launch is not None else None
    if given in PRECISIONS:
        return given, True
    if given is not None:
        script.note(f"line {launch.line}: --precision {given} is not a precision hpcds1mpi "
                    f"knows ({', '.join(PRECISIONS)}, the spellings `hpcds1mpi run --precision` "
                    "takes); fp64 assumed")
        return "fp64", True
    env = _variable(script, launch, "HPCDS1MPI_PRECISION", PRECISIONS)
    return (env[0], True) if env else ("fp64", False)


DEVICES = ("cpu", "gpu")


def device_of(script: "JobScript", launch: "Launch | None") -> tuple[str | None, str]:
    """(device, where the script says it) for the launched program: its ``--device X`` /
    ``--device=X``, the word where its measured command (``script.command``) has
    ``{device}``, or HPCDS1MPI_DEVICE set on the launch line or before it; ``hpcds1mpi run``
    without ``--device`` runs on the CPU, its default. (None, "") when the script does not
    say: the GPUs it asks for then tell (:attr:`JobScript.device`)."""
    if launch is None:
        return None, ""
    given = _option(launch.args, "--device", DEVICES)
    if given is not None:
        return given, f"line {launch.line}: --device {given}"
    if script.command and "{device}" in script.command:
        hits = placeholder_words(launch, script.command, "device", "|".join(DEVICES))
        if len({m.group(1) for _, m in hits}) == 1:
            return hits[0][1].group(1), f"line {launch.line}: {launch_words(launch)[hits[0][0]]}"
    env = _variable(script, launch, "HPCDS1MPI_DEVICE", DEVICES)
    if env:
        return env[0], f"line {env[1]}: HPCDS1MPI_DEVICE={env[0]}"
    at = own_command_at(launch)  # past a container or profiler too (s42 tester F8)
    if at is not None and launch_words(launch)[at + 1:at + 2] == ["run"]:
        return "cpu", f"line {launch.line}: hpcds1mpi run without --device (its default cpu)"
    return None, ""
