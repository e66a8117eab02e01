"""One workload label, one program: command lines of one label that run two programs refused.

A model learns one runtime per label and configuration. Two sweeps given the same ``--label``
for two programs (Meep's ``meep res={size} wg.ctl`` and NEURON's ``nrniv ... ring.hoc``), or
for one program with two input decks (``lmp -in in.lj``, ``lmp -in in.eam``), had been fitted
as one program with only a note, and recommend answered one with the other's script (s41
tester A1). They are refused before training, in one line naming both command lines and the
fix: a ``--label`` each. One program's lines that differ in options only (``--fast``,
GROMACS's ``-ntomp {threads}``, a launcher option) stay one program, as
:func:`~.levels.mixed_commands` says.

A command line's program is its file name past an exec-wrapper prefix and an interpreter
(the label rule's :func:`~hpcds1mpi.launch.program_label.program_word`); its input files are
the arguments (or ``name=value`` / ``--opt=value`` values) written as a file name — a
``/`` in it or a name extension — with no placeholder in them (``s{size}.nw`` is one deck per
size, of one program).

Two sweeps of one command line from two folders (``python3 main.py {size}`` in ``a/`` and in
``b/``, no ``--label``: both labelled ``main.py``) ran two programs too where the line reads
files from the folder it started in: :func:`two_folders` resolves the script or ``./app`` and
the relative input files against each rows' ``swept_in`` and refuses when they differ (s41
tester D; a bare program found on PATH with absolute or no input files is one program
wherever it was swept). An input named with placeholders (``iqtree2-mpi -s aln-{size}.phy``:
one alignment per size) is filled as the sweep fills it
(:func:`~hpcds1mpi.launch.program.program_tokens`) with the placeholder values of every run of
the label, in each folder alike, and compared as a plain input; before, it was skipped, and
two folders' different alignments were trained as one workload (s42 tester E1).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .levels import MeasuredLevels

#: A word written as a file name: a ``/`` in it, or a name with an extension (``wg.ctl``,
#: ``in.lj``), not a number (``0.5``, ``1e5``) nor text with blanks.
_FILE_NAME = re.compile(r"[^\s]*/[^\s]*|[^\s/]*[^\s/.]\.[A-Za-z][A-Za-z0-9_+-]{0,9}")


def program_identity(line: str) -> tuple[str, tuple[str, ...]] | None:
    """(the program's file name, its input files, sorted) of one recorded command line
    (launcher left out, placeholders put back); None where the line does not split."""
    from hpcds1mpi.launch.program_label import program_word
    from hpcds1mpi.launch.script_placeholders import program_at, split_command

    words = split_command(line)
    if not words:
        return None
    program = program_word(words)
    inputs = set()
    for word in words[program_at(words) + 1:]:
        value = word.split("=", 1)[1] if "=" in word else word
        if (word.startswith("-") and "=" not in word) or "{" in value:
            continue
        if _FILE_NAME.fullmatch(value):
            inputs.add(os.path.normpath(value))
    return os.path.basename(program), tuple(sorted(inputs))


def other_inputs(ran: str, measured: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(the input files of command line ``ran`` that ``measured`` lacks, those of ``measured``
    that ``ran`` lacks), by :func:`program_identity` (train's rule), where both run one program
    and each has an input file the other lacks, compared by file name (a path written another
    way is one file): ``pvbatch sph.py 60`` is not ``pvbatch wav.py {size}`` (s45 tester E3);
    None otherwise: an input file added (a log) or left unread (a variable), or one that
    ``measured`` names with a placeholder (``si-{size}.in``: any value)."""
    first, second = program_identity(ran), program_identity(measured)
    if first is None or second is None or first[0] != second[0]:
        return None
    mine, theirs = ({os.path.basename(f) for f in side[1]} for side in (first, second))
    added, missing = tuple(sorted(mine - theirs)), tuple(sorted(theirs - mine))
    return (added, missing) if added and missing else None


#: What to do about a label's two programs before training (a merge says its own: ``fix``).
TRAIN_FIX = "sweep each with its own --label (--label NAME) and train on those files"


def two_programs(levels: dict[str, "MeasuredLevels"], fix: str = TRAIN_FIX) -> str | None:
    """The one-line refusal of the first program label whose command lines run two programs
    or one program with other input files, ending in ``fix``; None where every label runs
    one."""
    for name, lv in sorted(levels.items()):
        if not (lv.external and lv.command and lv.other_commands):
            continue
        first = program_identity(lv.command)
        for other in lv.other_commands:
            second = program_identity(other)
            if first is None or second is None or first == second:
                continue
            if first[0] != second[0]:
                why = f"the programs {first[0]} and {second[0]}"
            else:
                why = (f"{first[0]} with the input files {' '.join(first[1]) or 'none'} and "
                       f"{' '.join(second[1]) or 'none'}")
            return (f"the runs of workload {name!r} ran {lv.command!r} and {other!r} under one "
                    f"--label ({why}): a model would learn one runtime for two computations; "
                    f"{fix}")
    return None


def filled_line(line: str, values: dict) -> str:
    """``line`` with its placeholders filled from ``values`` as the sweep fills a run's
    command; ``line`` unchanged where the sweep would not have run it."""
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.program import program_tokens, quote_tokens

    if "{" not in line or not values:
        return line
    try:
        return quote_tokens(program_tokens(line, values))
    except ConfigError:
        return line


def run_values(rows) -> list[dict]:
    """The distinct placeholder values (``{"size": "64", "ranks": "2", ...}``) of ``rows``'
    runs, as a sweep filled them into their commands."""
    from hpcds1mpi.launch.program import PLACEHOLDERS

    keys = [key for key in PLACEHOLDERS if key in rows.columns]
    found = []
    for record in rows[keys].drop_duplicates().to_dict("records"):
        values = {key: _plain(value) for key, value in record.items()}
        found.append({key: value for key, value in values.items() if value})
    return found


def _plain(value) -> str:
    """A row's value as the sweep wrote it into a command (``64``, not ``64.0``); "" for a
    missing one."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def folder_files(line: str, folder: str, runs: list[dict] | None = None) -> tuple[str, ...]:
    """The files ``line`` reads from the folder it started in, made absolute under ``folder``
    (sorted): the program where it is a relative path or an interpreter's script, and the
    relative input files, each filled with the placeholder values of every one of ``runs``
    (:func:`run_values`) where named with placeholders; () where it reads none from there."""
    if runs and "{" in line:
        return tuple(sorted({f for values in runs
                             for f in folder_files(filled_line(line, values), folder)}))
    from hpcds1mpi.launch.exec_wrappers import program_index
    from hpcds1mpi.launch.script_placeholders import program_at, split_command

    words = split_command(line)
    identity = program_identity(line)
    if not words or identity is None:
        return ()
    at = program_at(words)
    program = words[at]
    read = list(identity[1])
    if "{" not in program and ("/" in program or at > program_index(words)):
        read.append(program)  # ./app or python3 main.py: taken from the folder it started in
    return tuple(sorted({os.path.normpath(os.path.join(folder, p)) for p in read
                         if not os.path.isabs(p)}))


def two_folders(frame, fix: str = TRAIN_FIX) -> str | None:
    """The one-line refusal of the first program label whose rows, swept from two folders
    (their ``swept_in``), read other files there (:func:`folder_files`), ending in ``fix``;
    None where none."""
    import json

    from .program_command import commands_of

    need = {"workload", "kind", "swept_in", "command"}
    if len(frame) == 0 or not need <= set(frame.columns):
        return None
    rows = frame[frame["kind"].astype(str) == "external"]
    for name, mine in rows.groupby(rows["workload"].astype(str), sort=True):
        runs = run_values(mine)  # every folder's line filled alike: a shared input folder
        #                          swept at other sizes from each is still one program
        seen: dict[tuple, tuple[str, str]] = {}  # files read -> (folder, command line)
        for text, here in mine.groupby(mine["swept_in"].astype(str), sort=True):
            try:
                folder = json.loads(text)
            except ValueError:
                continue
            if not isinstance(folder, str) or not os.path.isabs(folder):
                continue  # not recorded (an older file): nothing to tell apart
            lines = commands_of(here)
            files = tuple(sorted({f for ln in lines for f in folder_files(ln, folder, runs)}))
            if files and files not in seen:
                seen[files] = (folder, lines[0] if lines else "")
            if len(seen) > 1:
                (one, (f1, c1)), (two, (f2, c2)) = list(seen.items())[:2]
                return (f"the runs of workload {name!r} ran {c1!r} in {f1} and {c2!r} in {f2}"
                        f" under one label (two programs: {_listed(one)} and "
                        f"{_listed(two)}): a model would learn one runtime for two "
                        f"computations; {fix}")
    return None


#: The most files of one folder a refusal names (one per size where the input has {size}).
_FILES_NAMED = 3


def _listed(files: tuple[str, ...]) -> str:
    """``files`` for a one-line message, the first few only."""
    more = len(files) - _FILES_NAMED
    return " ".join(files[:_FILES_NAMED]) + (f" (and {more} more)" if more > 0 else "")


__all__ = ["filled_line", "folder_files", "other_inputs", "program_identity", "run_values",
           "two_folders", "two_programs"]
