"""Job logs read compressed: a file's compression (from its first bytes, not its name), a text
handle on it, and the one-line error when its stream is cut short or corrupt.

SWF logs come gzip-compressed from the Parallel Workloads Archive and are often recompressed
with bzip2 or xz; the standard library reads all three. zstd and zip are named, so that such a
file is refused with what to do instead of "not a job log".
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import zlib
from pathlib import Path

from hpcds1mpi.errors import IngestError

#: Compression -> (how its files start, how to open one as text, the command that tests a copy).
READ = {"gzip": (b"\x1f\x8b", gzip.open, "gzip -t"),
        "bzip2": (b"BZh", bz2.open, "bzip2 -t"),
        "xz": (b"\xfd7zXZ\x00", lzma.open, "xz -t")}
#: Compressions recognised but not read -> how their files start.
NOT_READ = {"zstd": b"\x28\xb5\x2f\xfd", "zip": b"PK\x03\x04"}

#: What reading a cut or corrupt stream raises (lzma's error is not an OSError).
STREAM_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError)

#: A bzip2 stream: "BZh", the block size (1-9), then a block's or the end's magic number.
_BZIP2_NEXT = (b"\x31\x41\x59\x26\x53\x59", b"\x17\x72\x45\x38\x50\x90")


def compression(path: str | Path) -> str | None:
    """The compression of a file (a key of :data:`READ` or :data:`NOT_READ`), None: plain or
    unreadable (its reader says so)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(10)
    except OSError:
        return None
    for name, (magic, _, _) in READ.items():
        if head.startswith(magic) and (name != "bzip2" or (
                head[3:4].isdigit() and head[3:4] != b"0" and head[4:10] in _BZIP2_NEXT)):
            return name
    for name, magic in NOT_READ.items():
        if head.startswith(magic):
            return name
    return None


def refuse_not_read(path: str | Path, packed: str | None) -> None:
    """Refuse a file compressed in a way that is not read (zstd, zip), saying what to do.

    Raises:
        IngestError: ``packed`` is one of :data:`NOT_READ`.
    """
    if packed == "zip":  # a spreadsheet (.xlsx, .ods) is a zip file too
        raise IngestError(f"{path}: a zip file (an archive, or a spreadsheet), which is not "
                          "read; unzip it, or save the sheet as CSV")
    if packed in NOT_READ:
        raise IngestError(f"{path}: a {packed}-compressed file, which is not read (SWF logs "
                          "are read plain, gzip, bzip2 or xz-compressed; other logs plain); "
                          "decompress it first")


def open_text(path: str | Path):
    """A text handle on a plain, gzip, bzip2 or xz-compressed file."""
    # utf-8-sig: a byte-order mark (an editor's) is not part of the first line.
    packed = compression(path)
    refuse_not_read(path, packed)
    opener = open if packed is None else READ[packed][1]
    return opener(path, "rt", encoding="utf-8-sig", errors="replace")


def head_text(path: str | Path, size: int = 65536) -> str:
    """The first ``size`` characters of a plain or compressed file: as many as could be read
    before a stream ends early or has a corrupt byte (reading the whole file then says why it
    cannot be read)."""
    parts, n = [], 0
    try:
        with open_text(path) as fh:
            while n < size:
                chunk = fh.read(min(4096, size - n))
                if not chunk:
                    break
                parts.append(chunk)
                n += len(chunk)
    except STREAM_ERRORS:
        pass
    return "".join(parts)


def unreadable(path: str | Path, exc: Exception, what: str = "SWF file") -> IngestError:
    """The one-line error of a file whose stream cannot be read to its end."""
    cause = (str(exc).splitlines() or [type(exc).__name__])[0][:100]
    packed = compression(path)
    if packed not in READ:
        return IngestError(f"{path}: unreadable {what} ({cause})")
    return IngestError(f"{path}: unreadable {what}: the {packed} file is corrupt or truncated "
                       f"({cause}); download the log again (`{READ[packed][2]}` tests a copy)")


def read_text(path: str | Path, what: str = "SWF file") -> str:
    """A whole plain or compressed file as text (read before parsing, so that a corrupt or cut
    stream is told apart from a bad line).

    Raises:
        IngestError: the stream cannot be read to its end.
    """
    try:
        with open_text(path) as fh:
            return fh.read()
    except STREAM_ERRORS as exc:  # cut short; a corrupt byte or CRC
        raise unreadable(path, exc, what) from None
