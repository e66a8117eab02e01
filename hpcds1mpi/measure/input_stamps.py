"""The input files a program sweep's command names, stamped, so that a ``--resume`` after one
was edited is refused.

``--resume`` refused another command, ``--setup`` or readings, but not an edited input: MPB's
``tri.ctl`` went from 4 bands to 12 between two sweeps into one file, and the new size was
added to the same workload, whose curve ``train`` then fitted through two computations, nothing
said (s47 tester K7). So each file the command's arguments name (:func:`~.argument_files.
file_arguments`) that is in its run's folder before anything launches is stamped (its size,
its modification time and, up to :data:`HASHED_UP_TO` bytes, its SHA-256) in the file's
:data:`INPUTS` attribute, and a resume (:func:`check_inputs`) refuses where one differs now.

A file the program itself rewrites (an output named in its command, a restart file) changes
during the runs: only a change after the file's last recorded run is an edit. A file whose
content is the same (``touch``, a copy back) is none, where it was hashed.
"""

from __future__ import annotations

import hashlib
import json
import os
import time

from hpcds1mpi.errors import ConfigError
# the telemetry attribute holding the stamps, named in the records stage
from hpcds1mpi.records.input_stamp_attr import INPUTS

#: Files up to this size are hashed too (a touched input is no edited one); larger ones, a
#: database, are judged by size and time alone, so stamping stays cheap.
HASHED_UP_TO = 16 * 2**20
#: The ``sweep`` (and ``tune``) flag that resumes all the same, measuring the edited input into
#: the file.
ACCEPT = "--accept-edited-inputs"


def input_stamps(plan, workdir: str | None) -> dict:
    """``{path: [bytes, mtime, sha256 or ""]}`` of each file an argument of ``plan``'s runs'
    commands names in that run's folder (``workdir`` filled, else the current one), as it is
    now; ``path`` as the run's folder and argument join it."""
    from hpcds1mpi.measure.argument_files import file_arguments
    from hpcds1mpi.measure.external_plan import format_command
    from hpcds1mpi.measure.workdirs import workdir_of

    stamps = {}
    for spec in plan.runs:
        folder = workdir_of(workdir, spec) or ""
        for arg in file_arguments(format_command(dict(spec.extra)["command"], spec)[1:]):
            path = os.path.normpath(os.path.join(folder, arg))
            if path not in stamps and (stamp := file_stamp_now(path)) is not None:
                stamps[path] = stamp
    return stamps


def file_stamp_now(path: str) -> list | None:
    """``[bytes, mtime, sha256 or ""]`` of the regular file ``path``; None where it is none."""
    try:
        info = os.stat(path)
        if not os.path.isfile(path):
            return None
        digest = ""
        if info.st_size <= HASHED_UP_TO:
            with open(path, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
    except (OSError, ValueError):
        return None
    return [info.st_size, info.st_mtime, digest]


def check_inputs(out: str, stamps: dict, accept: bool | None = False, by: str = "sweep"
                 ) -> str:
    """Refuse to resume ``out`` where an input it stamped (:data:`INPUTS`) differs from its
    stamp in ``stamps`` (:func:`input_stamps`, now) and was modified after the file's last run;
    with ``accept``, the note that says so instead; None: the command has no :data:`ACCEPT`,
    so the refusal does not name it. "" where none did, or ``out`` is not there or stamped
    nothing (a file from before the stamps). ``by``: the command resuming it, whose option
    the refusal names (:data:`~hpcds1mpi.measure.external_resume.WORDS`: tune's ``--out``).

    Raises:
        ConfigError: one line naming the edited file and what to do.
    """
    from hpcds1mpi.errors import HpcdsError
    from hpcds1mpi.records import telemetry

    if not os.path.isfile(out):
        return ""
    try:
        store = telemetry.read_snapshot(out)
        before = json.loads(store.attrs.get(INPUTS) or "{}")
    except (HpcdsError, OSError, ValueError):
        return ""  # the writer says what is wrong with the file
    times = [float(t) for row in store.runs.values()
             for t in (row.get("started_at"), row.get("finished_at"))
             if isinstance(t, (int, float)) and t == t]
    if not isinstance(before, dict) or not times:
        return ""
    last = max(times)
    edited = [path for path, now in stamps.items()
              if stamp_edited(before.get(path), now) and now[1] > last]
    if not edited:
        return ""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(stamps[edited[0]][1]))
    more = f" ({len(edited) - 1} more input too)" if len(edited) > 1 else ""
    what = f"{edited[0]} was edited at {when}, after the runs in {out} read it{more}"
    if accept:
        return (f"note: {what}; its new runs measure the edited input beside the earlier "
                f"ones, as one workload ({ACCEPT})")
    flag = (f", or add {ACCEPT} where the edit does not change what is measured"
            if accept is not None else "")
    from hpcds1mpi.measure.external_resume import WORDS

    raise ConfigError(
        f"{WORDS[by][0]} {out}: {what}, so the new runs would measure another computation "
        f"under the same workload: give a new --out for the edited input (or restore it){flag}")


def stamp_edited(before, now: list) -> bool:
    """Whether the stamp ``now`` is of another content than ``before`` (as stamped; anything
    else is no stamp): another size, or hash, or where unhashed another modification time."""
    if not (isinstance(before, list) and len(before) == 3):
        return False
    if before[0] != now[0]:
        return True
    if before[2] and now[2]:
        return before[2] != now[2]
    return before[1] != now[1]
