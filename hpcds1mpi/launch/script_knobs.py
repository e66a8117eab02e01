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
    given = _given_as(args, (option,))
    return None if given is None else given[1]


def _given_as(args: list[str], options: tuple[str, ...]) -> tuple[str, str] | None:
    """(the spelling, the value) of the last of ``options`` given among ``args``, as
    :func:`_given` reads one; None where none is given."""
    given = None
    for k, word in enumerate(args):
        for option in options:
            if word == option and k + 1 < len(args):
                given = option, args[k + 1]
            elif word.startswith(option + "="):
                given = option, word[len(option) + 1:]
    return given


def _option(args: list[str], option: str, allowed) -> str | None:
    """:func:`_given`'s value where it is one of ``allowed``, else None."""
    given = _given(args, option)
    return given if given in allowed else None


def _inherits(launch: "Launch", name: str) -> bool:
    """Whether the script's own ``name`` reaches ``launch``'s program: not where an ``env
    -u NAME`` / ``env -i`` before it removes it, nor where ``srun --export=NONE`` (or
    ``NIL``) passes none but the variables it names (s45 tester F4)."""
    if launch.wrapper_cleared or name in launch.wrapper_unset:
        return False
    export = launch.options.get("export") if launch.kind == "slurm" else None
    items = (export.value or "").split(",") if export is not None else []
    return not {"NONE", "NIL"} & set(items) or name in items


def _variable(script: "JobScript", launch: "Launch | None", name: str,
              allowed) -> tuple[str, int] | None:
    """(value, line) of the variable ``name`` the launched program sees: set on its launch
    line, else the script's last setting at or before that line (one after it never reaches
    the program: s45 tester C2) that no ``unset`` after it removes and that the launch passes
    on (:func:`_inherits`, s45 tester F4); every setting counts where there is no launch
    line. An assignment without ``export`` counts, as OMP_NUM_THREADS's does: the variable
    may be in the environment sbatch passes. An ``unset`` in a subshell closed before the
    launch or in a function not called before it removes nothing; one under a condition
    leaves the setting read, said in a note (s46 review RV8)."""
    if launch is not None:
        env = launch.env.get(name)
        if env and env[0] in allowed:
            return env[0], env[1].line
        if not _inherits(launch, name):
            return None
    end = len(script.text) if launch is None else launch.span[0]
    settings = script.settings if launch is None else script.settings_before(launch)
    for s in reversed(settings):  # a subshell's closed before the launch left out (s45 S1)
        if s.name != name:
            continue
        # an unset as the settings go: not one its subshell ended (s46 review RV8)
        unsets = [u for u in script.unsets if u.name == name and u.reaches(end)
                  and s.value_span[0] < u.value_span[0] < end]
        if any(not u.conditional for u in unsets):
            return None
        if s.resolved in allowed:
            if unsets:  # may run: the setting is read, and said
                script.note(f"line {unsets[0].line}: `unset {name}` runs only under a "
                            f"condition; {name}={s.resolved} (line {s.line}) is read as "
                            "reaching the program")
            return s.resolved, s.line
    return None


def _own_run(launch: "Launch | None") -> bool:
    """Whether ``launch`` runs ``hpcds1mpi run``, which reads its device and precision from
    its options alone, never from HPCDS1MPI_DEVICE / _PRECISION (s45 tester F4)."""
    at = own_command_at(launch) if launch is not None else None
    return at is not None and launch_words(launch)[at + 1:at + 2] == ["run"]


def _unread(script: "JobScript", launch: "Launch", name: str, allowed, default: str) -> None:
    """Note a ``name`` the script sets for an ``hpcds1mpi run`` that does not read it."""
    if env := _variable(script, launch, name, allowed):
        option = name.rsplit("_", 1)[1].lower()
        script.note(f"line {env[1]}: {name}={env[0]} is not read by hpcds1mpi run (only its "
                    f"--{option}): it runs {default}; pass --{option} {env[0]} to run that")


def precision_of(script: "JobScript", launch: "Launch | None") -> tuple[str, bool]:
    """(precision, whether the script says it): ``--precision X`` / ``--precision=X``, or
    HPCDS1MPI_PRECISION set on the launch line or before it (:func:`_variable`). A value
    ``run --precision`` would refuse (``single``, ``FP32``) is said, with fp64 read, in a note
    naming it: the script does say a precision, one not read (s45 tester F10). A program of
    the user's may spell it ``-precision X`` (Go's flag package, GROMACS-style options: it was
    "not said", s46); ``hpcds1mpi run`` takes ``--precision`` alone."""
    spellings = ("--precision",) if _own_run(launch) else ("--precision", "-precision")
    spelled, given = (_given_as(launch.args, spellings) if launch is not None else None) \
        or ("", None)
    if given in PRECISIONS:
        return given, True
    if given is not None:
        script.note(f"line {launch.line}: {spelled} {given} is not a precision hpcds1mpi "
                    f"knows ({', '.join(PRECISIONS)}, the spellings `hpcds1mpi run --precision` "
                    "takes); fp64 assumed")
        return "fp64", True
    if _own_run(launch):
        _unread(script, launch, "HPCDS1MPI_PRECISION", PRECISIONS, "fp64")
        return "fp64", False
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
    if _own_run(launch):  # past a container or profiler too (s42 tester F8)
        _unread(script, launch, "HPCDS1MPI_DEVICE", DEVICES, "cpu")
        return "cpu", f"line {launch.line}: hpcds1mpi run without --device (its default cpu)"
    env = _variable(script, launch, "HPCDS1MPI_DEVICE", DEVICES)
    if env:
        return env[0], f"line {env[1]}: HPCDS1MPI_DEVICE={env[0]}"
    return None, ""
