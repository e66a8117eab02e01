"""Reading a job script a user names (``advise``, the Python API), with one-line errors."""

from __future__ import annotations

import os

from hpcds1mpi.errors import ConfigError

#: Most characters read: a batch script is a few KB; more is refused by the reader.
MAX_CHARS = 2_000_001


def script_text(path: str | os.PathLike) -> str:
    """The text of the job script at ``path``, or a one-line :class:`ConfigError`."""
    if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
        # a FIFO would block the read, a device never end
        raise ConfigError(f"{path}: not a regular file; give the job script itself")
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read(MAX_CHARS)
    except FileNotFoundError:
        raise ConfigError(f"{path}: job script not found") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory; give the job script itself") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: is not text (not UTF-8); give the sbatch / qsub script") \
            from None
    except OSError as exc:
        raise ConfigError(f"{str(path)[:200]}: cannot read the job script "
                          f"({exc.strerror or exc})") from None
