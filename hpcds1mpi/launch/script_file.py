"""Reading a job script a user names (``advise``, the Python API), with one-line errors."""

from __future__ import annotations

import os
import re

from hpcds1mpi.errors import ConfigError

#: Most characters read: a batch script is a few KB; more is refused by the reader.
MAX_CHARS = 2_000_001


def script_text(path: str | os.PathLike) -> str:
    """The text of the job script at ``path``, or a one-line :class:`ConfigError`."""
    if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
        # a FIFO would block the read, a device never end
        raise ConfigError(f"{path}: not a regular file; give the job script itself")
    try:
        with open(path, encoding="utf-8", newline="") as fh:  # CRLF kept: sbatch refuses it
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


#: A Slurm heterogeneous job: components separated by ``#SBATCH hetjob`` (``packjob`` before
#: Slurm 20.02), or launched with ``srun --het-group``.
_HETEROGENEOUS = re.compile(r"^#SBATCH[ \t]+(hetjob|packjob)[ \t]*(#.*)?$|--het-group\b|"
                            r"--pack-group\b", re.MULTILINE)


def check_script_text(text: str) -> None:
    """Refuse, in one line, a script whose request cannot be read as one job's: one that
    ``sbatch`` would refuse for a byte-order mark or DOS line breaks, or a heterogeneous job (several
    components, each its own nodes and tasks: read as one, their options mixed)."""
    if text.startswith("\ufeff"):  # its first line no longer starts with #!: sbatch refuses
        raise ConfigError("the script starts with a byte-order mark (U+FEFF), so its first "
                          "line is not #! (sbatch refuses it); save it as UTF-8 without BOM")
    if "#SBATCH" in text and "\r\n" in text:
        raise ConfigError("the script has DOS line breaks (CRLF), which sbatch refuses "
                          "(\"Batch script contains DOS line breaks\"); convert it with dos2unix")
    if _HETEROGENEOUS.search(text):
        raise ConfigError("this is a heterogeneous job (#SBATCH hetjob / srun --het-group): "
                          "its components ask for different nodes and tasks; advise each "
                          "component as a script of its own")
