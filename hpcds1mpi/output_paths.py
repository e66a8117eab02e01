"""Where an output named on the command line is written, and whether it is one of the
command's own inputs.

An output given as a symbolic link is written at the link's target, the link kept, as cp,
rsync and editors do (:func:`written_path`): every writer that replaces a file by rename
(``atomic.atomic_path``, the telemetry snapshot) renames onto the target in the target's
folder. A rename onto the link itself had replaced the link with a plain file and left the
target without the new runs (s33 tester C3).

An output that is an input (the same file by inode, through links and hard links) or lies
inside an input folder (a bundle) is refused before anything is read, ``--force`` or not
(:func:`refuse_inputs`): ``telemetry export e.h5 --out x.csv`` with ``x.csv -> e.h5`` had
replaced the telemetry with its CSV, ``recommend -o MODEL/members.pkl`` broken the bundle
(s33 tester C1, C2). An output inside the ``--model`` bundle of the command that writes it
is refused the same way (:func:`refuse_inside_model`), and so is an output of a command
without ``--model`` that lies inside any bundle folder (:func:`refuse_inside_bundle`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def written_path(path: str | os.PathLike, what: str = "output") -> Path:
    """Where a file written at ``path`` lands: a symlink's final target (a chain followed,
    a dangling link's missing target too, as ``open`` would create it), else ``path``.

    Raises:
        OutputError: (exit 2) the chain of links is a loop.
    """
    path = Path(path)
    if not path.is_symlink():
        return path
    try:
        return path.resolve()
    except (RuntimeError, OSError):  # a loop further along a chain of links
        from hpcds1mpi.errors import OutputError

        raise OutputError(f"{path} leads into a loop of symbolic links; choose another "
                          f"path for the {what}") from None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them is missing: no existing file can be destroyed
        return False


def _inside(path: Path, folder: Path) -> bool:
    try:
        return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder))
    except (OSError, ValueError):
        return False


def refuse_inputs(out: str | os.PathLike, *, files: Iterable = (), folders: Iterable = (),
                  option: str = "--out", what: str = "output") -> None:
    """Refuse output ``out`` when it is one of the input ``files`` or inside one of the input
    ``folders`` (each a ``(label, path)`` pair, a path None where not given).

    Raises:
        OutputError: (exit 2) in one line naming the input and what to do.
    """
    from hpcds1mpi.errors import OutputError

    shown = Path(out)
    target = written_path(shown, what)
    via = f" (a link to {target})" if target != shown else ""
    for label, given in files:
        if given is not None and _same_file(target, Path(given)):
            raise OutputError(f"{option} {shown}{via} is the {label} {given}: writing the "
                              f"{what} there would destroy it; choose another {option}")
    for label, given in folders:
        if given is not None and Path(given).is_dir() and _inside(target, Path(given)):
            raise OutputError(f"{option} {shown}{via} is inside the {label} {given}: writing "
                              f"the {what} there would change it; choose a path outside it")


def refuse_inside_model(out: str | os.PathLike | None, model_dir: str | os.PathLike | None,
                        option: str = "--out", what: str = "output",
                        label: str = "--model bundle") -> None:
    """Refuse output ``out`` inside the ``--model`` bundle folder ``model_dir``, before anything
    runs: a bundle holds only its own files, and one holding another (``tune --out MODEL/t.h5``)
    was then refused by learn and train as "not a hpcds1mpi bundle" (s47 tester M11). The
    folder itself is left to the command (learn retrains it in place).

    Raises:
        OutputError: (exit 2) in one line naming the bundle and what to do.
    """
    if out is None or model_dir is None:
        return
    if os.path.realpath(written_path(out, what)) == os.path.realpath(model_dir):
        return
    refuse_inputs(out, folders=[(label, model_dir)], option=option, what=what)


#: The keys every bundle's ``manifest.json`` holds, whatever its format version (those
#: ``surrogates.bundle_files.is_bundle`` asks for): another tool's manifest.json is no bundle.
BUNDLE_KEYS = frozenset({"format_version", "targets", "feature_spec"})


def has_bundle_manifest(folder: str | os.PathLike) -> bool:
    """Whether ``folder``'s ``manifest.json`` is a bundle's (:data:`BUNDLE_KEYS`): the one
    test of ``bundle_around`` and mobo's own ``--out`` check."""
    import json

    manifest = Path(folder) / "manifest.json"
    if not manifest.is_file():  # a FIFO of that name would make the read wait
        return False
    try:
        keys = json.loads(manifest.read_bytes())
    except (OSError, ValueError, RecursionError):  # unreadable, or no JSON: no bundle of ours
        return False
    return isinstance(keys, dict) and BUNDLE_KEYS <= keys.keys()


def bundle_around(path: str | os.PathLike, what: str = "output") -> Path | None:
    """The model bundle folder (one whose ``manifest.json`` is a bundle's) that output ``path``
    would be written inside, its links followed; None where there is none."""
    try:
        written = Path(os.path.realpath(written_path(path, what)))
    except OSError:  # a name too long: the command's own check says so, once under MPI (s48)
        return None
    return next((folder for folder in written.parents if has_bundle_manifest(folder)), None)


def refuse_inside_bundle(out: str | os.PathLike | None, option: str = "--out",
                         what: str = "output") -> None:
    """Refuse output ``out`` inside any model bundle folder, before anything is written: a
    command that takes no ``--model`` (``ingest``, ``telemetry export`` / ``merge``, ``sweep``)
    had written into one, which learn and train then refused as "not a hpcds1mpi bundle" (s47
    left, as M11; merge s48), as had ``tune`` and ``mobo`` into another bundle than their
    ``--model`` (s48 review RX2).

    Raises:
        OutputError: (exit 2) in one line naming the bundle and what to do.
    """
    if out is not None and (bundle := bundle_around(out, what)) is not None:
        refuse_inside_model(out, bundle, option, what, label="model bundle")


def refuse_unswappable(path: str | os.PathLike, what: str = "bundle",
                       option: str = "--out") -> None:
    """Refuse an output folder that a new folder cannot be renamed onto, before any work: the
    current folder named ``.`` (or ``..``) and a mount point, where the rename fails "Device or
    resource busy" (``train --out .`` failed so after its whole fit, s47 tester M7).

    Raises:
        OutputError: (exit 2) in one line, with the name to give instead.
    """
    from hpcds1mpi.errors import OutputError

    given = Path(path)
    if str(given) == "." or given.name == "..":  # Path drops a "/." but keeps "." alone
        here = os.path.normpath(os.path.join(given, "..", Path(os.path.abspath(given)).name))
        raise OutputError(f"{option} {path} names the folder by {given.name or '.'!r}, which "
                          f"the {what} (written beside it, then renamed onto it) cannot "
                          f"replace; give the folder's own name ({here}) or another folder")
    if os.path.ismount(given):
        raise OutputError(f"{option} {path} is a mount point, which the {what} (written beside "
                          f"it, then renamed onto it) cannot replace; give a folder inside it "
                          f"({given / what})")


__all__ = ["bundle_around", "has_bundle_manifest", "refuse_inputs", "refuse_inside_bundle",
           "refuse_inside_model", "refuse_unswappable", "written_path"]
