"""The precision and the device a job script's launched program asks for (``--precision X``,
``--device X``, the word where its measured command has ``{device}``, or
``HPCDS1MPI_PRECISION`` / ``HPCDS1MPI_DEVICE``), read over the launch line
:mod:`~hpcds1mpi.launch.script_request` resolves."""

from __future__ import annotations

from typing import TYPE_CHECKING

# The precisions a launched program may ask for are those hpcds1mpi sweeps (``run
# --precision``): one home, not a copy in script_request (s31 review M3).
from hpcds1mpi.config import PRECISIONS
from hpcds1mpi.launch.script_placeholders import launch_words, own_command_at, placeholder_words

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch


def precision_of(script: "JobScript", launch: "Launch | None") -> tuple[str, bool]:
    """(precision, whether the script says it): ``--precision X`` or HPCDS1MPI_PRECISION."""
    if launch is not None:
        for k, word in enumerate(launch.args[:-1]):
            if word == "--precision" and launch.args[k + 1] in PRECISIONS:
                return launch.args[k + 1], True
        env = launch.env.get("HPCDS1MPI_PRECISION")
        if env and env[0] in PRECISIONS:
            return env[0], True
    for s in script.settings:
        if s.name == "HPCDS1MPI_PRECISION" and s.resolved in PRECISIONS:
            return s.resolved, True
    return "fp64", False


DEVICES = ("cpu", "gpu")


def device_of(script: "JobScript", launch: "Launch | None") -> tuple[str | None, str]:
    """(device, where the script says it) for the launched program: its ``--device X`` /
    ``--device=X``, the word where its measured command (``script.command``) has
    ``{device}``, or HPCDS1MPI_DEVICE set on the launch line or before it; ``hpcds1mpi run``
    without ``--device`` runs on the CPU, its default. (None, "") when the script does not
    say: the GPUs it asks for then tell (:attr:`JobScript.device`)."""
    if launch is None:
        return None, ""
    args = launch.args
    for k, word in enumerate(args):
        given = args[k + 1] if word == "--device" and k + 1 < len(args) else \
            word[9:] if word.startswith("--device=") else None
        if given in DEVICES:
            return given, f"line {launch.line}: --device {given}"
    if script.command and "{device}" in script.command:
        hits = placeholder_words(launch, script.command, "device", "|".join(DEVICES))
        if len({m.group(1) for _, m in hits}) == 1:
            return hits[0][1].group(1), f"line {launch.line}: {launch_words(launch)[hits[0][0]]}"
    env = launch.env.get("HPCDS1MPI_DEVICE")
    if env and env[0] in DEVICES:
        return env[0], f"line {env[1].line}: HPCDS1MPI_DEVICE={env[0]}"
    for s in reversed(script.settings_before(launch)):
        if s.name == "HPCDS1MPI_DEVICE" and s.resolved in DEVICES:
            return s.resolved, f"line {s.line}: HPCDS1MPI_DEVICE={s.resolved}"
    at = own_command_at(launch)  # past a container or profiler too (s42 tester F8)
    if at is not None and launch_words(launch)[at + 1:at + 2] == ["run"]:
        return "cpu", f"line {launch.line}: hpcds1mpi run without --device (its default cpu)"
    return None, ""
