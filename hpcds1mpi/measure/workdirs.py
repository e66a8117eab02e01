"""Where each configuration of a program sweep runs: ``--workdir`` with its placeholders filled
(:func:`workdir_of`), and a note when several configurations would run in one folder
(:func:`shared_folder_note`).

Folders are not created without ``--setup``: a folder the sweep made would be empty, so a
program that reads its input from its folder (``pw.x -i si-{size}.in``, HPCC's
``hpccinf.txt``) would fail in every configuration; a missing one is refused before anything
launches (``create it (with the program's input) first``), which also catches a misspelt
``--workdir``. A sweep with ``--setup`` creates them (:func:`prepare_folders`): the setup
writes the input there (s30 tester N7a: it had been refused), and removes them again, with
the parents it made, where the sweep is refused before it records anything
(:func:`made_folders`, s35 tester A5: a refused sweep left its empty ``runs/*`` behind).
"""

from __future__ import annotations

import os
from collections import Counter
from contextlib import contextmanager
from typing import Iterable

from hpcds1mpi.config import Configuration
from hpcds1mpi.launch.program import placeholder_values
from hpcds1mpi.measure.plan import RunSpec


def workdir_of(workdir: str | None, spec: RunSpec) -> str | None:
    """The folder a configuration runs in (``--workdir`` with placeholders filled)."""
    return folder_of(workdir, spec.config, spec.size)


def folder_of(workdir: str | None, config: Configuration, size: int) -> str | None:
    """The folder ``config`` at ``size`` runs in (``--workdir`` with placeholders filled;
    None: no ``--workdir``, the current folder)."""
    if not workdir:
        return None
    from hpcds1mpi.launch.placeholder_fill import fill

    return fill(workdir, placeholder_values(config, size))


def prepare_folders(workdir: str | None, runs: Iterable[RunSpec], setup: bool,
                    made: list[str] | None = None) -> list[str]:
    """Check that every configuration of ``runs`` has its ``--workdir`` folder; with a
    ``--setup`` (``setup``), which writes the program's input there, a missing one is created.
    ``made``, where given, gets every folder created, its parents included, parents first.

    Returns:
        The folders created, in the order of ``runs``.

    Raises:
        ConfigError: a folder is missing and there is no setup, or the path is no folder.
    """
    from hpcds1mpi.errors import ConfigError

    created: list[str] = []
    for spec in runs:
        folder = workdir_of(workdir, spec)
        if folder is None or os.path.isdir(folder):
            continue
        if not setup or os.path.lexists(folder):
            raise ConfigError(f"--workdir {folder!r} (for size {spec.size} "
                              f"{spec.config.label()}) is not a folder; create it (with the "
                              "program's input) first" + ("" if setup else ", or give --setup "
                                                          "the command that writes it there"))
        missing, up = [], folder
        while up and not os.path.lexists(up):
            missing.insert(0, up)
            up = os.path.dirname(up)
        try:
            os.makedirs(folder)
        except OSError as exc:
            raise ConfigError(f"--workdir {folder!r}: cannot create it for --setup "
                              f"({exc.strerror}); create it first") from None
        created.append(folder)
        if made is not None:
            made.extend(missing)
    return created


@contextmanager
def made_folders(workdir: str | None, runs: Iterable[RunSpec], setup: bool, say=None):
    """:func:`prepare_folders` for the checks the ``with`` block makes before a sweep records
    anything: where they refuse it (any exception), the folders it made are removed again,
    those still empty (nothing the program or the user put there is ever deleted); where they
    pass, the folders made are said (``say``). Yields the folders created."""
    made: list[str] = []
    try:
        created = prepare_folders(workdir, runs, setup, made)
        yield created
    except BaseException:
        for folder in reversed(made):  # the deepest first, then the parents made
            try:
                os.rmdir(folder)
            except OSError:
                pass
        raise
    if say and created:
        say(f"created {len(created)} --workdir folder(s) for --setup to prepare: "
            f"{', '.join(created[:3])}{', ...' if len(created) > 3 else ''}")


def shared_folder_note(workdir: str | None, runs: Iterable[RunSpec]) -> str:
    """A note when two or more of ``runs`` run in the same folder ("" when none do).

    Files a program writes into its folder (Quantum ESPRESSO's ``outdir`` / ``prefix`` scratch
    and the ``CRASH`` file it deletes when it starts, restart files, checkpoints) are then
    shared: one configuration may read, overwrite or delete another's, silently. The note
    names the placeholders that would tell the sharing configurations apart
    (:func:`missing_placeholders`), added to the ``--workdir`` given.
    """
    runs = list(runs)
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
            f"to keep them apart {_apart(workdir, runs)}, each folder created first with the "
            "program's input")


def own_folders(workdir: str | None, runs: Iterable[RunSpec]) -> bool:
    """Whether ``workdir`` has placeholders giving each of ``runs`` a folder of its own."""
    runs = list(runs)
    return bool(workdir) and "{" in workdir and \
        len({workdir_of(workdir, spec) for spec in runs}) == len(runs)


#: Placeholders a folder may add, in the order a suggestion names them.
_FOLDER_KEYS = ("size", "ranks", "nodes", "ranks_per_node", "threads", "device", "precision")


def missing_placeholders(workdir: str | None, runs: Iterable[RunSpec]) -> list[str]:
    """Placeholders ``workdir`` lacks that give every configuration of ``runs`` its own
    folder, taken in :data:`_FOLDER_KEYS` order while one still tells some sharing ones apart;
    [] when none would (the same configuration twice)."""
    groups: dict = {}
    for spec in runs:
        groups.setdefault(workdir_of(workdir, spec), []).append(
            placeholder_values(spec.config, spec.size))
    shared = [values for values in groups.values() if len(values) > 1]

    def told_apart(keys: list[str]) -> int:  # how many folders these keys would make
        return sum(len({tuple(v[k] for k in keys) for v in values}) for values in shared)

    added: list[str] = []
    for key in _FOLDER_KEYS:
        # Only a key that splits a shared folder further (ranks already does ranks_per_node's).
        if "{" + key + "}" not in (workdir or "") and told_apart(added + [key]) > \
                told_apart(added):
            added.append(key)
        if told_apart(added) == sum(len(values) for values in shared):
            return added
    return []


def _apart(workdir: str | None, runs: list[RunSpec]) -> str:
    """How to give each configuration its own folder: the placeholders ``workdir`` lacks,
    added to it (the one given, never suggested again)."""
    keys = missing_placeholders(workdir, runs)
    if not keys:
        return "give --workdir placeholders that tell them apart (e.g. 'runs/{size}-{ranks}')"
    # "." or "$PWD" is the sweep's own folder: not '.-{size}' nor a sibling '/path-{size}' (s30
    # tester K5, verifier V N5); like a first --workdir: per size and layout, at least
    if not workdir or os.path.normpath(workdir) in (".", os.getcwd()):
        keys = [k for k in _FOLDER_KEYS if k in {"size", "ranks", *keys}]
        fields = "-".join("{" + key + "}" for key in keys)
        return f"give --workdir with placeholders, e.g. --workdir 'runs/{fields}'"
    fields = "-".join("{" + key + "}" for key in keys)
    joined = workdir + fields if workdir.endswith("/") else f"{workdir}-{fields}"
    return f"add {' and '.join('{' + k + '}' for k in keys)}: --workdir {joined!r}"
