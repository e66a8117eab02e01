"""Reading a TOML file a user names (cluster files, sweep plans), with one-line errors."""

from __future__ import annotations

from pathlib import Path

from hpcds1mpi.errors import HpcdsError

#: Largest TOML file read: cluster files and plans are a few KB; /dev/zero is endless.
MAX_BYTES = 16 << 20


def read_toml(path: str | Path, what: str, error: type[HpcdsError]) -> dict:
    """The document in ``path``, or ``error`` with a message that names the file and the fix.

    Args:
        path: the file.
        what: what the file is, for the message (``"cluster file"``, ``"plan file"``).
        error: the :class:`~hpcds1mpi.errors.HpcdsError` subclass to raise.

    Raises:
        error: the file is missing, a directory, not a regular file, unreadable, over
            :data:`MAX_BYTES`, not UTF-8 text, not TOML or nested too deep to read.
    """
    import tomllib

    if Path(path).exists() and not Path(path).is_dir() and not Path(path).is_file():
        # a FIFO would block, /dev/zero fill the memory
        raise error(f"{path}: {what} is not a regular file; give a TOML file")
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise error(f"{path}: {what} is over {MAX_BYTES >> 20} MiB; give a TOML file")
        # utf-8-sig: a byte-order mark (what Windows editors put first) is dropped, not read
        # as a stray character ("Invalid statement (at line 1, column 1)").
        return tomllib.loads(data.decode("utf-8-sig"))
    except FileNotFoundError:
        raise error(f"{path}: {what} not found; check the path (a relative one is read from "
                    f"{Path.cwd()})") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory; give the {what} itself") from None
    except PermissionError:
        raise error(f"{path}: {what} is not readable (permission denied)") from None
    except UnicodeDecodeError:
        if _utf16(data):
            raise error(f"{path}: {what} is UTF-16 text (it starts with a UTF-16 byte-order "
                        "mark); save it as UTF-8") from None
        raise error(f"{path}: {what} is not text (not UTF-8); give a TOML file") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:
        raise error(f"{path}: {what} is nested too deep to read; give a plain TOML file") \
            from None


def _utf16(data: bytes) -> bool:
    """Whether ``data`` is UTF-16 text with its byte-order mark (PowerShell's ``Out-File`` and
    Notepad's "Unicode" write it), so the refusal can say how to save it."""
    if not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False
    try:
        data.decode("utf-16")
    except UnicodeDecodeError:
        return False
    return True
