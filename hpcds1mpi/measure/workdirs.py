"""Where each configuration of a program sweep runs: ``--workdir`` with its placeholders filled
(:func:`workdir_of`), and a note when several configurations would run in one folder
(:func:`shared_folder_note`).

Folders are never created here: a folder the sweep made would be empty, so a program that
reads its input from its folder (``pw.x -i si-{size}.in``, HPCC's ``hpccinf.txt``) would fail
in every configuration; a missing one is refused before anything launches (``create it (with
the program's input) first``), which also catches a misspelt ``--workdir``.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from hpcds1mpi.launch.program import placeholder_values
from hpcds1mpi.measure.plan import RunSpec


def workdir_of(workdir: str | None, spec: RunSpec) -> str | None:
    """The folder a configuration runs in (``--workdir`` with placeholders filled)."""
    if not workdir:
        return None
    path = workdir
    for key, value in placeholder_values(spec.config, spec.size).items():
        path = path.replace("{" + key + "}", str(value))
    return path


def shared_folder_note(workdir: str | None, runs: Iterable[RunSpec]) -> str:
    """A note when two or more of ``runs`` run in the same folder ("" when none do).

    Files a program writes into its folder (Quantum ESPRESSO's ``outdir`` / ``prefix`` scratch
    and the ``CRASH`` file it deletes when it starts, restart files, checkpoints) are then
    shared: one configuration may read, overwrite or delete another's, silently.
    """
    folders = Counter(workdir_of(workdir, spec) for spec in runs)
    if not folders:
        return ""
    folder, count = folders.most_common(1)[0]
    if count < 2:
        return ""
    where = f"--workdir {folder!r}" if folder else "the current folder"
    if len(folders) == 1:
        shared = f"all {count} configurations run in one folder ({where})"
    else:
        sharing = sum(n for n in folders.values() if n > 1)
        shared = (f"{sharing} of the {sum(folders.values())} configurations share a folder "
                  f"with another ({where} holds {count})")
    return (f"note: {shared}, so files the program writes there (scratch, restart or CRASH "
            "files) are shared and one configuration may read, overwrite or delete another's; "
            "to keep them apart give --workdir with placeholders, e.g. --workdir "
            "'runs/{size}-{ranks}', each folder created first with the program's input")
