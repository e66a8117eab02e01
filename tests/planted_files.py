"""What another user can leave where a side file (a lock, a journal, a note) goes, in a folder a
group shares (s35 tester R1-R3): a symbolic link to the caller's private file, a FIFO, a
socket, a folder; and a bound on how long a step may take, so that a step that blocks on a
FIFO fails the test instead of hanging it."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from tests.other_user import OTHER

#: What a private file of the caller holds before a link to it is planted.
SECRET = b"-----BEGIN OPENSSH PRIVATE KEY-----\nnot a real key\n"


def private_file(path: Path) -> Path:
    """A 0600 file of the caller holding :data:`SECRET` (alice's ``id_key``)."""
    path.write_bytes(SECRET)
    os.chmod(path, 0o600)
    return path


def left_as_it_was(path: Path) -> bool:
    """Whether the file :func:`private_file` made is byte-for-byte and mode-for-mode unchanged."""
    return path.read_bytes() == SECRET and path.stat().st_mode & 0o7777 == 0o600


def plant_link(link: Path, target: Path) -> None:
    """A symbolic link at ``link`` to ``target``, owned by another user (bob's ``ln -s``)."""
    os.symlink(target, link)
    if os.geteuid() == 0:
        os.lchown(link, OTHER, OTHER)


def plant(kind: str, path: Path) -> str:
    """Leave a thing of ``kind`` (fifo, folder, socket) at ``path``; what the refusal calls it."""
    if kind == "fifo":
        os.mkfifo(path, 0o644)
        return "is a FIFO"
    if kind == "folder":
        path.mkdir()
        return "is a folder"
    sock, here = socket.socket(socket.AF_UNIX), os.getcwd()
    os.chdir(path.parent)  # a socket's name is short (108 bytes): bound by its own name
    try:
        sock.bind(path.name)
    finally:
        os.chdir(here)
        sock.close()  # the name stays
    return "is a socket"


class StillBlocked(Exception):
    """What :func:`within` raises once its time is up."""


@contextlib.contextmanager
def within(seconds: float) -> Iterator[None]:
    """Fail the block with StillBlocked once it has taken ``seconds`` (a blocked ``open``
    included: the alarm's handler raises out of it). Main thread only."""
    def too_long(*_):  # no OSError (TimeoutError is one): the code under test must not catch it
        raise StillBlocked(f"blocked for more than {seconds} s")

    old = signal.signal(signal.SIGALRM, too_long)
    start = time.monotonic()
    outer, _ = signal.setitimer(signal.ITIMER_REAL, seconds)  # pytest-timeout's, if any
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if outer:  # given back what is left of it
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - start), 0.01))
