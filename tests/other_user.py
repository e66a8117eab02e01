"""A test's step run as another user (uid and gid 65534) in a forked child: what only a second
user of a group-shared folder sees (s34 tester U). The child is forked, not started: the
project's Python is not runnable by that user."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

#: The other user: nobody.
OTHER = 65534


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder everyone may write, outside pytest's private (0700) temporary folder."""
    folder = Path(tempfile.mkdtemp(prefix="hpcds1mpi-shared-"))
    os.chmod(folder, 0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def as_other_user(step: Callable, *args) -> tuple[str, object]:
    """``step(*args)`` run as user 65534: ``("ok", its value)``, else ``(the exception's class
    name, its message)``. Root only (a test that needs it skips elsewhere)."""
    if os.geteuid() != 0:
        pytest.skip("becoming another user needs root")
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)

    def child() -> None:
        try:
            os.setgroups([])
            os.setgid(OTHER)
            os.setuid(OTHER)
            send.send(("ok", step(*args)))
        except BaseException as exc:  # noqa: BLE001 - what the step raised is the answer
            send.send((type(exc).__name__, str(exc)))

    proc = ctx.Process(target=child)
    proc.start()
    try:
        assert receive.poll(120), "the other user's step did not answer"
        return receive.recv()
    finally:
        proc.join(30)
