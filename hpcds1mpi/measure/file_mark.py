"""The output file just before a launch, to read only what the launch wrote to it.

Split out of :mod:`~hpcds1mpi.measure.readings` (its 450-line limit); see its docstring.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from stat import S_ISREG

#: Bytes kept of the output file's start and end before a launch, to tell append from rewrite.
FINGERPRINT = 2**16


@contextmanager
def open_output(path: str):
    """``path`` open for reading as a binary file, or None where it is no regular file: a
    FIFO's ``open`` would wait for a writer forever, past the launch's timeout (s47 tester
    M2), so it is opened without waiting and closed unread.

    Raises:
        OSError: it cannot be opened (missing, no permission).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    if not S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        yield None
        return
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as fh:
        yield fh


@dataclass(frozen=True)
class FileMark:
    """The output file just before a launch: identity, size, times and its first and last
    :data:`FINGERPRINT` bytes.

    Size alone cannot tell a rewrite from an append (a rewrite may be shorter, as long or
    longer), nor times alone (their tick may be coarse: Lustre's is 1 s). So: untouched (same
    inode, size, times, head and tail) → nothing to read; shorter or as long → all of it;
    longer with the old start and end bytes still in place → appended, read from the old end;
    anything else (another file renamed over it, or a rewrite) → all of it. A rewrite whose new
    file begins with the whole old one reads as an append: the same last match unless the new
    part has none.
    """

    stat: tuple | None = None  # (dev, inode, size, mtime_ns, ctime_ns); None: no file
    head: bytes = b""
    tail: bytes = b""

    @classmethod
    def of(cls, path: str | None) -> "FileMark":
        """The mark of ``path`` now (an empty mark where there is no regular file)."""
        if not path:
            return cls()
        try:
            with open_output(path) as fh:
                if fh is None:
                    return cls()
                st = os.fstat(fh.fileno())
                head = fh.read(FINGERPRINT)
                fh.seek(max(0, st.st_size - FINGERPRINT))
                tail = fh.read(FINGERPRINT)
        except OSError:
            return cls()
        return cls((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns),
                   head, tail)

    def written_from(self, fh) -> int | None:
        """Where this launch's output starts in the open file ``fh`` (see the class); None
        when the launch did not write it."""
        st = os.fstat(fh.fileno())
        if self.stat is None:
            return 0
        dev, ino, size, mtime, ctime = self.stat
        if (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) == self.stat:
            return None if self._ends(fh, size) == (self.head, self.tail) else 0
        if (st.st_dev, st.st_ino) != (dev, ino) or st.st_size <= size:
            return 0
        return size if self._ends(fh, size) == (self.head, self.tail) else 0

    def _ends(self, fh, size: int) -> tuple[bytes, bytes]:  # where the head and tail were
        fh.seek(0)
        head = fh.read(len(self.head))
        fh.seek(size - len(self.tail))
        return head, fh.read(len(self.tail))
