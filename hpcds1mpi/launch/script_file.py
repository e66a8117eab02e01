"""Reading a job script a user names (``advise``, the Python API), with one-line errors."""

from __future__ import annotations

import os
import re

from hpcds1mpi.errors import ConfigError

#: Most characters read: Slurm's default max_script_size (4 MiB) and one; the reader refuses
#: more than 4 MiB, counted in bytes as Slurm counts them (s32 tester S5).
MAX_CHARS = 4 * 2**20 + 1


def script_text(path: str | os.PathLike) -> str:
    """The text of the job script at ``path``, or a one-line :class:`ConfigError`."""
    if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
        # a FIFO would block the read, a device never end
        raise ConfigError(f"{path}: not a regular file; give the job script itself")
    try:
        with open(path, encoding="utf-8", newline="") as fh:  # CRLF kept: sbatch refuses it
            text = fh.read(MAX_CHARS)
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
    check_first_line(text)
    return text


#: The scheduler of a script: its first directive's (as the reader takes it), column 0.
_FIRST_DIRECTIVE = re.compile(r"^#(SBATCH|SLURM|PBS)", re.MULTILINE)


def _scheduler(text: str) -> str | None:
    """``slurm``, ``pbs``, or None for a text without directives."""
    found = _FIRST_DIRECTIVE.search(text)
    return None if found is None else "pbs" if found.group(1) == "PBS" else "slurm"


def check_first_line(text: str) -> None:
    """Refuse a Slurm script whose first line is not ``#!``, in one line, as sbatch refuses it
    (s29 tester D7: it was read and rewritten). qsub takes a script without one: not refused.
    Checked on a script file, and on a script's text given to the API's and the service's
    advise; the reader itself takes fragments (tests, ``read_script("#SBATCH -N 2")``)."""
    if _scheduler(text) == "slurm" and not text.startswith(("#!", "\ufeff")):
        first = text.split("\n", 1)[0][:60]
        raise ConfigError(f"the script's first line ({first!r}) is not #! and sbatch refuses "
                          "it (\"line must start with #! followed by the path to an "
                          "interpreter\"); add #!/bin/bash as the first line")


def check_script_text(text: str) -> None:
    """Refuse, in one line, a script whose text cannot run as written: one that ``sbatch``
    refuses for a byte-order mark, or DOS line breaks (which sbatch refuses, and under PBS
    the shell reads as a ``\\r`` at the end of every command and argument). Heterogeneous jobs
    and several programs on one launch line: :mod:`hpcds1mpi.launch.script_components`."""
    if text.startswith("\ufeff"):  # its first line no longer starts with #!: sbatch refuses
        raise ConfigError("the script starts with a byte-order mark (U+FEFF), so its first "
                          "line is not #! (sbatch refuses it); save it as UTF-8 without BOM")
    if "\r\n" not in text:
        return
    if _scheduler(text) == "pbs":  # s29 tester D8: was read, and the job runs cd "dir\r"
        raise ConfigError("the script has DOS line breaks (CRLF): the shell that runs the PBS "
                          "job reads a carriage return at the end of every line (cd "
                          "$PBS_O_WORKDIR fails, arguments end in \\r); convert it with "
                          "dos2unix")
    raise ConfigError("the script has DOS line breaks (CRLF), which sbatch refuses "
                      "(\"Batch script contains DOS line breaks\"); convert it with dos2unix")
