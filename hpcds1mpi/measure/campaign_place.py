"""Where a campaign folder's scripts were written for: they ``cd`` into the folder and send the
jobs' logs there by absolute path (``#SBATCH --output``, ``#PBS -o``), which a scheduler takes
as written. A folder moved (or copied) after ``campaign emit`` still holds scripts that run in
the old place: their jobs failed at start (no log folder there), or ran in another campaign
that now stands there and wrote into it (s34 tester O2). ``status``, ``resubmit`` and
``submit.sh`` (through ``resubmit --dry-run``) say so instead.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

from hpcds1mpi.errors import ConfigError

#: A script line that names the campaign folder: ``cd DIR`` (the folder itself), or an output
#: directive naming ``DIR/logs/FILE`` (the folder two levels up).
_CD = re.compile(r"^cd\s+(.+?)\s*$", re.M)
_OUTPUT = re.compile(r"^#(?:SBATCH\s+(?:--output[= ]|-o\s*)|PBS\s+-o\s+)(\S+)\s*$", re.M)


def scripts(manifest: dict) -> list[str]:
    """The campaign's scripts that name its folder: part scripts and the merge (``submit.sh``
    runs ``resubmit`` on the folder it is in, which checks these)."""
    return [*(job["script"] for job in manifest["jobs"].values()), manifest["merge"]]


def folders_named(text: str) -> list[str]:
    """The absolute folders a script's first ``cd`` line (hpcds1mpi's, before any of the
    cluster's preamble) and its output directives name."""
    named = []
    match = _CD.search(text)
    try:
        words = shlex.split(match.group(1)) if match else []
    except ValueError:
        words = []
    if len(words) == 1:
        named.append(words[0])
    named += [str(Path(m.group(1)).parent.parent) for m in _OUTPUT.finditer(text)]
    return [path for path in named if os.path.isabs(path)]


def written_for(folder: str | Path, manifest: dict) -> str:
    """The folder campaign ``folder``'s scripts run in where that is not ``folder`` itself
    (the same folder by another path, a symbolic link, counts as ``folder``); "" where every
    script names ``folder`` or cannot be read (the scheduler then says why)."""
    for name in scripts(manifest):
        try:
            text = (Path(folder) / name).read_text()
        except (OSError, UnicodeDecodeError):
            continue
        for path in folders_named(text):
            if not _same(path, folder):
                return path
    return ""


def _same(path: str, folder: str | Path) -> bool:
    try:
        return os.path.samefile(path, folder)
    except OSError:
        return False


def moved_line(folder: str | Path, manifest: dict) -> str:
    """One line saying campaign ``folder`` is not where its scripts were written for, and
    what to do; "" when it is."""
    from hpcds1mpi.runtime.message_paths import shell_word, shown_path

    old = written_for(folder, manifest)
    if not old:
        return ""
    # the suggested commands quote their paths: "mv /x/camp B /x/campB" pasted had moved two
    # wrong things (s35 tester R4)
    fix = (f"{shown_path(old)} exists, and its jobs would run and write there, not here; "
           if os.path.lexists(old) else
           f"move it back (mv {shell_word(folder)} {shell_word(old)}) or ")
    plan = shell_word(os.path.join(os.fsdecode(folder), "plan.toml"))
    return (f"{shown_path(folder)} was moved or copied: its scripts were written for "
            f"{shown_path(old)} (they cd there and write their logs there); {fix}emit the "
            f"campaign again into a new folder (hpcds1mpi campaign {plan} --emit "
            f"{manifest['scheduler']} --out NEW ...)")


def check_in_place(folder: str | Path, manifest: dict) -> None:
    """Refuse to submit jobs of campaign ``folder`` when it is not where its scripts were
    written for (:func:`moved_line`).

    Raises:
        ConfigError: one line naming the folder the scripts were written for.
    """
    line = moved_line(folder, manifest)
    if line:
        raise ConfigError(f"{line}; nothing was submitted")
