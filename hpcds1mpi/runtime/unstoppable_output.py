"""Standard output and error that cannot stop a command part-way.

A command prints between its writes (quickstart's progress, campaign's summary before it
submits, a note before an output is written). Had one of those prints met a reader that went
away (``| head -1``) or a full disk (``> /dev/full``, ``2> /dev/full``), the command stopped
there with part of its work done. Here a write that fails so is remembered and every later
write to that stream is dropped, so the command finishes its work; :mod:`hpcds1mpi.cli` then
reports a failed stdout as it always did (141 for a departed reader, one line for a full
disk). A failed stderr is not reported: there is nowhere left to say it.
"""

from __future__ import annotations

import errno
import io
import os
import sys

__all__ = ["LOST_STREAM_ERRORS", "DroppingWriter", "keep_going", "raise_if_lost",
           "restore"]

#: What a write raises when the stream is gone or full, not when the command is wrong.
LOST_STREAM_ERRORS = (errno.EPIPE, errno.ENOSPC, errno.EDQUOT)


class DroppingWriter(io.RawIOBase):
    """Descriptor ``fd`` written directly; after the first write that fails with one of
    :data:`LOST_STREAM_ERRORS` (kept in :attr:`error`) every write is dropped as if done."""

    def __init__(self, fd: int):
        super().__init__()
        self.fd = fd
        self.error: OSError | None = None

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        return os.isatty(self.fd)

    def write(self, data) -> int:
        size = len(memoryview(data))
        if self.error is not None:
            return size
        try:
            return os.write(self.fd, data)
        except OSError as exc:
            if exc.errno not in LOST_STREAM_ERRORS:
                raise
            self.error = exc
            return size

    def close(self) -> None:  # the descriptor is the process's, never ours to close
        super().close()


def keep_going(name: str) -> tuple[DroppingWriter, object] | None:
    """Replace ``sys.<name>`` ("stdout" or "stderr") by the same text stream over a
    :class:`DroppingWriter` of its descriptor; return the writer and the stream it replaced,
    or None where the stream is not the process's own descriptor 1 or 2 (a test's capture, an
    embedding program's stream: left as they are)."""
    stream = getattr(sys, name)
    try:
        fd = stream.fileno()
        stream.flush()
    except (AttributeError, OSError, ValueError):
        return None
    if fd not in (1, 2):
        return None
    writer = DroppingWriter(fd)
    setattr(sys, name, io.TextIOWrapper(
        io.BufferedWriter(writer), encoding=stream.encoding, errors=stream.errors,
        line_buffering=stream.line_buffering, write_through=getattr(stream, "write_through",
                                                                    False)))
    return writer, stream


def restore(name: str, kept: tuple[DroppingWriter, object] | None) -> None:
    """Flush ``sys.<name>`` and put back the stream :func:`keep_going` replaced."""
    if kept is None:
        return
    try:
        getattr(sys, name).flush()
    except (OSError, ValueError):
        pass
    setattr(sys, name, kept[1])


def raise_if_lost(name: str = "stdout") -> None:
    """Flush ``sys.<name>`` and raise the error its writer dropped, if any (marked
    ``on_stdout`` for stdout): for a command that must not go on without its stream, as a
    server whose address and token nobody would read (``serve > /dev/full``, s32 review)."""
    stream = getattr(sys, name)
    try:
        stream.flush()
    except (OSError, ValueError):
        pass
    raw = getattr(getattr(stream, "buffer", None), "raw", None)
    error = raw.error if isinstance(raw, DroppingWriter) else None
    if error is not None:
        error.on_stdout = name == "stdout"
        raise error
