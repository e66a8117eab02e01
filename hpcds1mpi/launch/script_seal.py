"""The checksum line of every script hpcds1mpi renders (:func:`seal`), and whether a file is one
of ours nobody has changed since (:func:`script_state`): a rerun of ``recommend -o`` or ``tune
--submit`` replaces a script of ours only while it is unchanged, never one edited since. Moved
out of :mod:`hpcds1mpi.launch.scripts` (its size limit), which re-exports it.
"""

from __future__ import annotations


#: The line every script we render carries near its top (the templates' header comment).
MARK = "# Written by hpcds1mpi"
#: The line :func:`seal` adds after it: a checksum of every other line of the script.
SEAL = "# hpcds1mpi checksum sha256:"
#: The largest file :func:`script_state` reads (a script of ours is a few KB).
_MAX_SCRIPT_BYTES = 16 << 20


def _digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def seal(script: str) -> str:
    """``script`` with a checksum line of all its other lines after its :data:`MARK` line: a
    later ``recommend -o`` (or ``tune --submit``) replaces the file only while it is exactly
    what was written, never one the user has edited since."""
    lines = script.splitlines(keepends=True)
    at = next((i for i, line in enumerate(lines) if line.startswith(MARK)), None)
    if at is None:  # every template has the mark; without it there is nothing to seal
        return script
    line = (f"{SEAL}{_digest(script.encode('utf-8'))} (of every other line: hpcds1mpi "
            "replaces this file only while it is unchanged)\n")
    return "".join(lines[:at + 1] + [line] + lines[at + 1:])


def script_state(path) -> str:
    """Whether the file at ``path`` is a script hpcds1mpi wrote: ``"unchanged"`` (its checksum
    line matches every other line), ``"edited"`` (our header line in its first 4 KB and a
    checksum that no longer matches), ``"unsealed"`` (our header line but no checksum line:
    written before scripts carried one, or edited; it cannot be told unchanged), or
    ``"foreign"``."""
    with open(path, "rb") as fh:
        data = fh.read(_MAX_SCRIPT_BYTES + 1)
    head = data[:4096].decode("utf-8", "replace")
    if not any(line.startswith(MARK) for line in head.splitlines()):
        return "foreign"
    if len(data) > _MAX_SCRIPT_BYTES:
        return "edited"
    lines = data.splitlines(keepends=True)
    seals = [i for i, line in enumerate(lines) if line.startswith(SEAL.encode())]
    if not seals:
        return "unsealed"
    if len(seals) > 1:
        return "edited"
    written = lines[seals[0]][len(SEAL):len(SEAL) + 64].decode("ascii", "replace")
    rest = b"".join(lines[:seals[0]] + lines[seals[0] + 1:])
    return "unchanged" if written == _digest(rest) else "edited"


def written_by_us(path) -> bool:
    """Whether the file at ``path`` is a script hpcds1mpi rendered and nobody changed since
    (:func:`script_state`): a rerun of ``recommend -o`` may replace it, another file is kept."""
    return script_state(path) == "unchanged"


def check_replace_script(path, *, force: bool, option: str = "-o",
                         what: str = "batch script") -> None:
    """Refuse, in one line, to replace an existing file that is not a script hpcds1mpi wrote
    and nobody edited since, unless ``force`` (:func:`hpcds1mpi.atomic.check_replace`, with
    an edited script of ours said as such).

    Raises:
        OutputError: (exit 2) the file is foreign or edited, without ``force``.
    """
    from pathlib import Path

    from hpcds1mpi.atomic import check_replace
    from hpcds1mpi.errors import OutputError

    if not force and Path(path).is_file():
        try:
            state = script_state(path)
        except OSError:
            state = "foreign"  # check_replace says it in its words
        why = {"edited": "it has been changed since (it no longer matches the checksum "
                         "written with it)",
               "unsealed": "it has no checksum line to show it unchanged since (written by "
                           "an older hpcds1mpi, or edited)"}.get(state)
        if why:
            raise OutputError(f"{path} has the header of a {what} hpcds1mpi wrote, but {why}; "
                              f"pass --force to replace it, or choose another {option}")
    check_replace(path, ours=written_by_us, force=force, what=what, option=option)
