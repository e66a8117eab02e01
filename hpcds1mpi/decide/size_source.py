"""Which line of a user's script ``advise`` read a program's size from.

Mostly the launch line (``srun ./app 96 40`` for ``./app {size} 40``). A program swept as
``env NAME={size} ./app`` may instead get its size from a variable the script sets before the
launch (``export NAME=96``, read by :func:`~hpcds1mpi.launch.script_placeholders.size_values`);
advise then named the launch line, where the size is not (s30 tester N8), so a user looking for
it, or changing it, was sent to the wrong line. A program swept with ``--workdir 'c{size}'``
has it in the folder the script ``cd``s into (:mod:`~hpcds1mpi.decide.folder_size`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch


def script_size(script: "JobScript", launch: "Launch", command: str | None, workdir: str
                ) -> tuple[int | None, str]:
    """(the size a script's ``launch`` runs its program at, where it was read): from the
    launched command (:func:`~hpcds1mpi.launch.script_placeholders.size_from`,
    :func:`size_source`), else from the folder the script ``cd``s into by ``workdir``, its
    sweep's ``--workdir`` (:func:`~hpcds1mpi.decide.folder_size.folder_size`, s44 tester M4:
    ``cd c20`` for ``--workdir 'c{size}'``); (None, the launch line) where neither gives one."""
    from hpcds1mpi.decide.folder_size import folder_size
    from hpcds1mpi.launch.script_placeholders import size_from

    size = size_from(launch, command)
    if size is None and (found := folder_size(script, launch, workdir)) is not None:
        return found
    return size, size_source(launch, command)


def size_source(launch: "Launch", command: str | None) -> str:
    """Where the size :func:`~hpcds1mpi.launch.script_placeholders.size_from` read from
    ``launch`` (the program's measured command line ``command``) is written, for advise's
    "size N (from ...)": "the command on line L", or "NAME set on line L" where the launch's
    own words give none and the measured command's exec-wrapper prefix takes it from the
    variable ``NAME`` that line sets."""
    on_launch = f"the command on line {launch.line}"
    setting = _size_setting(launch, command)
    if setting is None or _words_give_size(launch, command):
        return on_launch
    return f"{setting.name} set on line {setting.line}"


def _words_give_size(launch: "Launch", command: str | None) -> bool:
    """Whether the launch line's own words give a size (``--size N``, or where the measured
    command has ``{size}``): the size is read there first."""
    from hpcds1mpi.launch.script_options import SIZE_DIGITS
    from hpcds1mpi.launch.script_placeholders import placeholder_words

    if any(w == "--size" or w.startswith("--size=") for w in launch.args):
        return True
    return bool(placeholder_words(launch, command, "size", SIZE_DIGITS))


def _size_setting(launch: "Launch", command: str | None):
    """The script's last assignment before ``launch`` (:class:`~hpcds1mpi.launch.job_script.
    Setting`) of a variable the measured command's ``env NAME={size}`` prefix reads, where the
    launch line neither sets it itself nor clears it (``env -i``, ``env -u NAME``); None."""
    from hpcds1mpi.launch.exec_wrappers import is_wrapper, read_wrappers
    from hpcds1mpi.launch.script_placeholders import split_command

    tokens = split_command(command or "")
    if not tokens or not is_wrapper(tokens[0]) or launch.wrapper_cleared:
        return None
    _, settings, count = launch.origin
    wrappers = read_wrappers(tokens)
    for name, recorded, _ in wrappers.assigned if wrappers else ():
        if "{size}" not in recorded or name in launch.env or name in launch.wrapper_unset:
            continue
        found = next((s for s in reversed(settings[:count])
                      if s.name == name and s.reaches(launch.span[0])), None)
        if found is not None and found.resolved is not None:
            return found
    return None
