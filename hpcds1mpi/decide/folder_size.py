"""A program's problem size read from the folder a job script ``cd``s into, by its sweep's
``--workdir``.

A program swept as ``--command "molds in.in" --workdir 'c{size}'`` runs the same command at
every size: the size is the folder's name, and the script runs it after ``cd c20`` (as
``recommend --emit`` itself writes it). advise had read the command line only and said "the
size is in its input" (s44 tester M4); :func:`folder_size` reads the folder the launch runs in,
as the script's ``cd`` lines write it (:func:`~hpcds1mpi.launch.script_folder.written_folder`),
against the recorded ``--workdir``, and :func:`folder_size_why` says why it could not.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch

#: Placeholders of a ``--workdir`` that stand for a whole number (the others: a word).
_COUNTS = frozenset({"size", "ranks", "nodes", "threads", "ranks_per_node"})
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def swept_workdir(bundle, label: str | None) -> str:
    """The ``--workdir`` ``label``'s sweep ran it in (the bundle's measured levels), "" for
    none, a kernel, or a workload the bundle records no sweep of."""
    from hpcds1mpi.decide.measured_run import swept_place
    from hpcds1mpi.surrogates.levels import bundle_levels

    try:
        levels = bundle_levels(bundle, label) if label else None
    except Exception:  # noqa: BLE001 - no levels: no folder is known
        return ""
    return swept_place(levels)[0] if levels is not None else ""


def workdir_pattern(workdir: str) -> re.Pattern | None:
    """The folders ``workdir`` names, its ``{size}`` captured (a later ``{size}`` the same
    value), matched at the end of a folder path, whole components (an absolute ``workdir``:
    the whole path); None where ``workdir`` has no ``{size}``."""
    template = os.path.normpath(workdir)
    if "{size}" not in template:
        return None
    parts, seen = [], False
    for k, piece in enumerate(_PLACEHOLDER.split(template)):
        if k % 2 == 0:
            parts.append(re.escape(piece))
        elif piece == "size":
            parts.append("(?P=size)" if seen else "(?P<size>[0-9]{1,18})")
            seen = True
        else:
            parts.append("[0-9]+" if piece in _COUNTS else "[^/]+")
    start = "^" if os.path.isabs(template) else "(?:^|/)"
    return re.compile(start + "".join(parts) + "$")


def _relative_end(folder: str) -> str:
    """A relative ``folder``'s components past its leading ``..``: the end of the absolute
    folder it names from the submit folder, whatever that is."""
    parts = folder.split("/")
    while parts and parts[0] in ("..", "."):
        parts.pop(0)
    return "/".join(parts)


def _match(folder: str, workdir: str) -> tuple[re.Match, bool] | None:
    """(the match of ``folder`` by ``workdir``'s pattern, whether only its end was matched);
    None for no match. A relative ``folder`` under an absolute ``workdir`` is matched against
    the same number of the ``workdir``'s last components: the job starts in its submit
    folder, which advise cannot know (s44 tester O10: ``cd c40`` for ``--workdir
    '/abs/c{size}'`` was refused as "not of that form")."""
    pattern = workdir_pattern(workdir)
    if pattern is None:
        return None
    if not os.path.isabs(os.path.normpath(workdir)) or os.path.isabs(folder):
        found = pattern.search(folder)
        return (found, False) if found is not None else None
    end = _relative_end(folder)
    count = len(end.split("/")) if end else 0
    tail = os.path.normpath(workdir).split("/")[1:]
    if not count or count > len(tail):
        return None
    tail_pattern = workdir_pattern("/".join(tail[-count:]))
    found = tail_pattern.fullmatch(end) if tail_pattern is not None else None
    return (found, True) if found is not None else None


def folder_size(script: "JobScript", launch: "Launch", workdir: str
                ) -> tuple[int, str] | None:
    """(the size, where it was read: "the folder ... of the cd on line L") from the folder
    ``launch`` runs in, against ``workdir`` (its sweep's ``--workdir``); None where the
    ``workdir`` has no ``{size}`` or the folder is not known or not of its form."""
    from hpcds1mpi.launch.script_folder import written_folder

    pattern = workdir_pattern(workdir) if workdir else None
    written = written_folder(script, launch) if pattern is not None else None
    if written is None:
        return None
    folder, line = written
    matched = _match(folder, workdir)
    if matched is None:
        return None
    found, by_end = matched
    how = (f"by the end of its sweep's --workdir {workdir!r} (the cd is relative, and where the "
           "job is submitted is not known here: the size holds if it is submitted where the "
           "sweep ran)" if by_end else f"by its sweep's --workdir {workdir!r}")
    return int(found.group("size")), f"the folder {folder!r} of the cd on line {line}, {how}"


def folder_size_why(script: "JobScript | None", launch: "Launch", workdir: str) -> str:
    """Why no size was read from the folder where ``workdir`` (the sweep's ``--workdir``)
    has ``{size}``, as the middle of advise's line ("" where it has none): the folder the
    launch runs in, or that it is not known here."""
    from hpcds1mpi.launch.script_folder import written_folder

    if not workdir or workdir_pattern(workdir) is None:
        return ""
    said = f"its sweep ran it in --workdir {workdir!r}: the size is in the folder's name"
    written = written_folder(script, launch) if script is not None else None
    if written is None:
        return (f"{said}, and the folder that line {launch.line} runs in is not known from the "
                "script (no cd before it, or one into a folder a variable names)")
    return (f"{said}, and line {launch.line} runs in {written[0]!r} (the cd on line "
            f"{written[1]}), which is not of that form")
