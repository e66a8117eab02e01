"""A program that exited 0 after saying a file of its own command line was missing, or was
already there where it would write.

Ray, given a missing ``-s reads_7777.fasta``, prints "Ray: cannot access 'reads_7777.fasta': No
such file or directory", then "Assembler panic" and memory lines, and exits 0; given an ``-o``
folder that exists, "Error, rayout_5000/ already exists, change the -o parameter to another
value.", then more lines, and exits 0 (s38 tester A7, A2). Their last line is no error, so the
ending-error rule (:mod:`.ending_error`) keeps them ``ok``, and a sweep recorded the error's
0.9 s as the runtime.

:func:`argument_problem` makes such a launch ``failed`` where the folder confirms what the
program said, for any program: a line the program wrote that names an argument of its command
line (a token, or the value of ``key=value`` / ``--opt=value``) and

* says that file is missing or cannot be opened (:func:`~.error_cause.names_cause`: not a
  warning, not "using defaults") while no such file is in the launch's folder, or
* says it already exists with an error word (:data:`EXISTING`) while it was there before the
  launch started (a program refusing to overwrite its output).

and only where the program also signalled an error (:data:`ALARM`: "error", "panic", "fatal",
"abort", "exception", "failed", on a line that is no warning): a program that says it cannot
open an optional restart file and starts from scratch, or that ``mkdir`` found a folder the
user made, and goes on, is not failed (s38 review 2a, 2c). A line that merely mentions a file,
a missing file that is not on the command line (an optional tuning file), or a file the program
created itself never counts.
"""

from __future__ import annotations

import os
import re

#: Words saying a thing the program would write is already there: "already exists", "exists
#: already", EEXIST's "File exists", "will not overwrite", "refusing to overwrite".
EXISTING = re.compile(r"\balready exists?\b|\bexists? already\b|\bFile exists\b|"
                      r"\b(will|would) not overwrite\b|\brefus\w* to overwrite\b", re.IGNORECASE)
#: Words by which a program signals an error, not a condition it goes on from.
ALARM = re.compile(r"\berror\b|\w+Error\b|\bfatal\b|\bpanic\b|\babort|\bexception\b|"
                   r"\bfailed\b|\bfailure\b", re.IGNORECASE)


def alarmed(lines: list[str]) -> bool:
    """Whether one of ``lines`` signals an error (:data:`ALARM`) and is no warning nor a line
    that says the program went on (``error_cause.WENT_ON``)."""
    from hpcds1mpi.measure.error_cause import WARNING, WENT_ON

    return any(ALARM.search(ln) and not WARNING.search(ln) and not WENT_ON.search(ln)
               for ln in lines)


def file_arguments(args: list[str]) -> list[str]:
    """The tokens of ``args`` (a command line without its program) that may name a file: not
    an option, with a letter; the value of ``key=value`` / ``--opt=value``; a folder's
    trailing "/" dropped."""
    found = []
    for arg in args:
        value = arg.split("=", 1)[1] if "=" in arg else arg
        value = value.rstrip("/") or value
        if value and not value.startswith("-") and re.search(r"[A-Za-z]", value):
            found.append(value)
    return found


def _names(line: str, arg: str) -> bool:
    """Whether ``line`` names ``arg`` whole (not as part of a longer name)."""
    return bool(re.search(r"(?<![\w.-])" + re.escape(arg) + r"/?(?![\w-]|\.\w)", line))


def existing_arguments(args: list[str], folder: str | None) -> set[str]:
    """The file arguments of ``args`` there are in ``folder`` (None: the current one) now:
    taken before a launch, for :func:`argument_problem`."""
    return {a for a in file_arguments(args) if os.path.lexists(os.path.join(folder or ".", a))}


def argument_problem(stdout: str, stderr: str, args: list[str], folder: str | None,
                     existed: set[str]) -> str:
    """The failure reason of a launch that exited 0 (see the module), "" when none: ``args``
    its command line without the program, ``folder`` where it ran (None: here), ``existed``
    the file arguments there before it started (:func:`existing_arguments`)."""
    from hpcds1mpi.measure.error_cause import WENT_ON, names_cause
    from hpcds1mpi.measure.printable import clipped, printable
    from hpcds1mpi.measure.program_launch import ERROR_WORDS
    from hpcds1mpi.measure.program_lines import kept_lines

    where = f"in {folder}" if folder else "in the folder it ran in"
    files = file_arguments(args)
    texts = [kept_lines(stdout), kept_lines(stderr)]
    if not files or not alarmed([ln for lines in texts for ln in lines]):
        return ""
    for lines in texts:
        for line in lines:
            for arg in (a for a in files if line and _names(line, a)):
                said = clipped(printable(line, keep="\t"), 240)
                if names_cause(line) and not os.path.lexists(os.path.join(folder or ".", arg)):
                    return (f"exit 0, but the program said: {said} ({arg}, of its command line, "
                            f"is not {where}: create it, or fix --command or --setup)")
                if arg in existed and EXISTING.search(line) and ERROR_WORDS.search(line) \
                        and not WENT_ON.search(line):
                    return (f"exit 0, but the program said: {said} ({arg}, of its command line, "
                            f"was {where} before it started: it refuses an existing output; "
                            "remove it, or name the output per run with placeholders)")
    return ""
