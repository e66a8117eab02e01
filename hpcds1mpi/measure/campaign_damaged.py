"""A campaign part whose shard file cannot be read (empty, cut, not HDF5: a full disk, a quota,
a job killed while it created the file): ``campaign status`` marks that part ``damaged`` and
goes on with the others, and ``resubmit`` refuses, naming the part, its file and the way out.

Its own sweep ``--resume`` fails on the file the same way, so resubmitting the part as it is
would fail again; moved aside, the part starts again (s45 tester C8: one empty shard stopped
status and resubmit for the whole campaign with "not an HDF5 file", naming neither). That
sweep, the part's job or one typed by hand, refuses with resubmit's line
(:func:`check_resumable`), not the HDF5 library's: a cut shard had said only "unable to
synchronously open file (truncated file ...)", naming no part nor the move (s46).
"""

from __future__ import annotations

from pathlib import Path

from hpcds1mpi.errors import TelemetryError


def damage(path: Path, exc: TelemetryError) -> str:
    """Why the shard at ``path`` cannot be read, from the reader's error, without its path
    and its advice (which is for a file the user gave)."""
    why = str(exc).removeprefix(f"{path}: ").split(";")[0].strip()
    # "the telemetry file is damaged or cut short (...)": said after the file's name
    return why.removeprefix("the telemetry file is ").strip() or "unreadable"


def _moves(folder: Path, parts) -> list[tuple[str, str, str]]:
    """(part, shard relative to the campaign, the shell command moving it aside)."""
    from hpcds1mpi.runtime.message_paths import shell_word

    out = []
    for part in parts:
        if part.damaged:
            shard = str(Path(folder) / part.shard)
            out.append((part.name, part.shard,
                        f"mv {shell_word(shard)} {shell_word(shard + '.damaged')}"))
    return out


def damaged_line(folder: str | Path, parts) -> str:
    """What to do about the damaged parts, for ``campaign status`` ("" where none is)."""
    moves = _moves(Path(folder), parts)
    if not moves:
        return ""
    from hpcds1mpi.runtime.message_paths import shell_word

    names = ", ".join(name for name, _, _ in moves)
    return (f"{len(moves)} part(s) with a damaged shard file ({names}): move each aside "
            f"({'; '.join(m for _, _, m in moves)}), then hpcds1mpi campaign resubmit "
            f"{shell_word(str(folder))} starts them again")


def check_undamaged(folder: str | Path, parts) -> None:
    """Refuse to resubmit while a part's shard is damaged: its sweep would fail on it again.

    Raises:
        TelemetryError: one line naming each such part, its file and the move that mends it.
    """
    moves = _moves(Path(folder), parts)
    if not moves:
        return
    what = "; ".join(f"part {name}: {shard} is {why}" for (name, shard, _), why in
                     zip(moves, [p.damaged for p in parts if p.damaged]))
    raise TelemetryError(f"{folder}: {what}; a sweep cannot resume such a file: move it aside "
                         f"({'; '.join(m for _, _, m in moves)}) and resubmit, so the part "
                         "starts again")


def check_resumable(out: str | Path) -> None:
    """Refuse ``sweep --resume`` of ``out`` where it is a campaign part's shard that cannot be
    read (the reader's rule of ``campaign status``), with :func:`check_undamaged`'s line: the
    part, its file and the move that mends it; the file is left as it is. Any other ``out``
    (no file yet, no campaign around it, a campaign not readable) is the sweep's own to read.

    Raises:
        TelemetryError: that line.
    """
    from types import SimpleNamespace

    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.measure.campaign import MANIFEST, read_manifest
    from hpcds1mpi.records import telemetry

    path = Path(out)
    folder = path.absolute().parent.parent  # <campaign>/telemetry/<part>.h5
    if not path.is_file() or not (folder / MANIFEST).is_file():
        return
    try:
        parts = read_manifest(folder)["parts"]
    except ConfigError:
        return
    for part in parts:
        if (folder / part["telemetry"]).resolve() != path.resolve():
            continue
        try:
            telemetry.load(path)
        except TelemetryError as exc:
            check_undamaged(folder, [SimpleNamespace(name=part["name"], shard=part["telemetry"],
                                                     damaged=damage(path, exc))])
        return
