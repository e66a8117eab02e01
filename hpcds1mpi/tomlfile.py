"""Reading a TOML file a user names (cluster files, sweep plans), with one-line errors."""

from __future__ import annotations

from pathlib import Path

from hpcds1mpi.errors import HpcdsError


def read_toml(path: str | Path, what: str, error: type[HpcdsError]) -> dict:
    """The document in ``path``, or ``error`` with a message that names the file and the fix.

    Args:
        path: the file.
        what: what the file is, for the message (``"cluster file"``, ``"plan file"``).
        error: the :class:`~hpcds1mpi.errors.HpcdsError` subclass to raise.

    Raises:
        error: the file is missing, a directory, unreadable, not UTF-8 text or not TOML.
    """
    import tomllib

    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise error(f"{path}: {what} not found") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory; give the {what} itself") from None
    except PermissionError:
        raise error(f"{path}: {what} is not readable (permission denied)") from None
    except UnicodeDecodeError:
        raise error(f"{path}: {what} is not text (not UTF-8); give a TOML file") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML ({exc})") from None
