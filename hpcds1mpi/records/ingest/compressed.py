"""Job logs read compressed: a file's compression (from its first bytes, not its name), a text
handle on it, and the one-line error when its stream is cut short or corrupt.

SWF logs come gzip-compressed from the Parallel Workloads Archive and are often recompressed
with bzip2 or xz; the standard library reads all three. zstd and zip are named, so that such a
file is refused with what to do instead of "not a job log".
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import math
import re
import zlib
from pathlib import Path

from hpcds1mpi.errors import IngestError

from .cut_at_end import ends_inside_line

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


def refuse_archive(path: str | Path, packed: str | None) -> None:
    """Refuse a tar archive, plain or gzip, bzip2 or xz-compressed: its member headers glued to
    the first log's lines were read as one SWF log dated 1970, the other members' lines as
    malformed (s36 tester L3).

    Raises:
        IngestError: ``ustar`` at byte 257 (POSIX and GNU tar write it in every header).
    """
    opener = open if packed is None else READ.get(packed, (None, None))[1]
    if opener is None:
        return
    try:
        with opener(path, "rb") as fh:
            head = fh.read(512)
    except STREAM_ERRORS:
        return  # a cut or corrupt stream: its reader says so
    if head[257:262] == b"ustar":
        raise IngestError(f"{path}: a tar archive, which is not read; extract it (tar xf) and "
                          "give its logs as files")


def open_text(path: str | Path):
    """A text handle on a plain, gzip, bzip2 or xz-compressed file."""
    # utf-8-sig: a byte-order mark (an editor's) is not part of the first line.
    packed = compression(path)
    refuse_not_read(path, packed)
    opener = open if packed is None else READ[packed][1]
    return opener(path, "rt", encoding="utf-8-sig", errors="replace")


#: Characters read at a time when a file is streamed line by line.
STREAM_CHUNK = 1 << 20


def text_lines(path: str | Path, longest: int, most_chars: float = math.inf):
    """The lines of a plain or compressed file, read a chunk at a time: each as ``(line,
    cut)``, without its newline and cut to its first ``longest`` characters (``cut``: it was
    longer). Memory stays within a chunk and ``longest`` whatever the file holds (a
    300 KB gzip file can hold a line of gigabytes). Reading stops after about ``most_chars``
    characters (the line then being read is not given).

    Raises:
        EOFError, OSError, zlib.error, lzma.LZMAError (:data:`STREAM_ERRORS`): the stream is
            cut short or corrupt, after the lines read before it.
    """
    with open_text(path) as fh:
        tail, tail_cut = "", False  # the line not yet ended, and whether it was cut
        read = 0
        while chunk := fh.read(STREAM_CHUNK):
            read += len(chunk)
            pieces = chunk.split("\n")  # text mode: "\r\n" and "\r" are "\n" already
            for piece in pieces[:-1]:
                line = tail + piece
                yield line[:longest], tail_cut or len(line) > longest
                tail, tail_cut = "", False
            tail += pieces[-1]
            if len(tail) > longest:
                tail, tail_cut = tail[:longest], True
            if read > most_chars:
                return
        if tail or tail_cut:
            yield tail, tail_cut


class KeptLines(io.TextIOBase):
    """A plain or compressed file as a text stream for a parser (``pandas.read_csv``), read
    as it asks, without the lines ``skip`` matches: those are never held. ``skip`` is a
    MULTILINE pattern matching runs of whole lines with their newlines (one match per run,
    so that millions of blank lines cost one regex pass, not a Python step each).

    A line longer than ``longest`` is left out too and counted in ``too_long`` (silently when
    its start is a line ``skip`` matches that is not blank: a long comment). Past
    ``most_kept`` characters kept, or ``most_skipped`` left out, the text ends and ``over``
    says which ("kept", "skipped"): a small compressed file can unpack to gigabytes of either.
    A cut or corrupt stream ends it and is kept in ``error``. The caller says each in one line.
    With ``watch`` (a MULTILINE pattern of one left-out line), the first such line that comes
    after a kept line is kept in ``watched``: (its line number, its text). ``unended``: the
    last kept line had no newline (:mod:`.cut_at_end`: the text may be cut inside it).
    """

    def __init__(self, path: str | Path, skip: re.Pattern, longest: int,
                 most_kept: float = math.inf, most_skipped: float = math.inf,
                 watch: re.Pattern | None = None):
        self._fh = open_text(path)
        self._watch, self._lines = watch, 0  # newlines before the text being read
        self.watched: tuple[int, str] | None = None
        self._skip, self._longest = skip, longest
        self._most_kept, self._most_skipped = most_kept, most_skipped
        self._tail = ""  # the line not yet ended (at most ``longest`` characters of it)
        self._tail_cut = False  # that line is longer than ``longest``: its rest is dropped
        self._held = ""  # kept text read past what the last call asked for
        self._kept = self._skipped = 0
        self._done = False
        self.too_long = 0
        self.unended = False
        self.over: str | None = None
        self.error: BaseException | None = None

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> str:
        want = math.inf if size is None or size < 0 else size
        parts, n = [self._held], len(self._held)
        while n < want and not self._done:
            try:
                chunk = self._fh.read(STREAM_CHUNK)
            except STREAM_ERRORS as exc:
                self.error, chunk = exc, ""
            kept = self._kept_of(chunk) if chunk else self._last()
            self._done = not chunk
            self._kept += len(kept)
            self._skipped += len(chunk) - len(kept)
            for over, count, most in (("kept", self._kept, self._most_kept),
                                      ("skipped", self._skipped, self._most_skipped)):
                if count > most:
                    self.over, self._done, kept = over, True, ""
            parts.append(kept)
            n += len(kept)
        text = "".join(parts)
        end = len(text) if want == math.inf else int(want)
        self._held = text[end:]
        return text[:end]

    def _kept_of(self, chunk: str) -> str:
        """The kept text of the lines ``chunk`` ends (text mode: every newline is "\\n")."""
        if self._tail_cut:  # inside a long line: drop up to its end
            end = chunk.find("\n")
            if end < 0:
                return ""
            self._end_cut_line()
            self._lines += 1
            chunk = chunk[end + 1:]
        text = self._tail + chunk
        end = text.rfind("\n") + 1
        whole, self._tail = text[:end], text[end:]
        if len(self._tail) > self._longest:
            self._tail, self._tail_cut = self._tail[:self._longest], True
        kept = self._without_long(self._skip.sub("", whole))
        if self._watch is not None and self.watched is None and ";" in whole:
            self._look(whole)
        self._lines += whole.count("\n")
        return kept

    def _look(self, whole: str) -> None:
        """Keep the first ``watch`` line of ``whole`` that follows a kept line."""
        for m in self._watch.finditer(whole):
            if self._kept or self._skip.sub("", whole[:m.start()]):
                number = self._lines + whole.count("\n", 0, m.start()) + 1
                self.watched = (number, m.group(0).strip()[:60])
                return

    def _last(self) -> str:
        """The kept text of a last line without a newline."""
        if self._tail_cut:
            self._end_cut_line()
            return ""
        line, self._tail = self._tail, ""
        kept = self._without_long(self._skip.sub("", line + "\n")) if line else ""
        self.unended = ends_inside_line(kept[:-1])
        return kept

    def _end_cut_line(self) -> None:
        start = self._tail
        if not (start.strip() and self._skip.fullmatch(start + "\n")):
            self.too_long += 1
        self._tail, self._tail_cut = "", False

    def _without_long(self, text: str) -> str:
        """``text`` without its lines over ``longest`` (counted); one in a chunk is rare."""
        lines = text.split("\n")
        if max(map(len, lines)) <= self._longest:
            return text
        short = [line for line in lines if len(line) <= self._longest]
        self.too_long += len(lines) - len(short)
        return "\n".join(short)

    def close(self) -> None:
        self._fh.close()
        super().close()


def check_stream(path: str | Path, what: str = "SWF file") -> None:
    """Read a plain or compressed file to its end, keeping nothing, to tell a cut or corrupt
    stream apart.

    Raises:
        IngestError: the stream cannot be read to its end.
    """
    try:
        with open_text(path) as fh:
            while fh.read(STREAM_CHUNK):
                pass
    except STREAM_ERRORS as exc:
        raise unreadable(path, exc, what) from None


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
    stream is told apart from a bad line). Its size is the decompressed size, unbounded: to
    parse, stream :func:`text_lines`; to only tell a cut stream, :func:`check_stream`.

    Raises:
        IngestError: the stream cannot be read to its end.
    """
    try:
        with open_text(path) as fh:
            return fh.read()
    except STREAM_ERRORS as exc:  # cut short; a corrupt byte or CRC
        raise unreadable(path, exc, what) from None
