"""What of a campaign was edited since ``campaign emit``: its parts' plans, which its jobs
sweep, and the plan it was emitted from.

``campaign.json`` holds the SHA-256 of each part's plan as emitted (``sha256`` per part) and of
the source plan (``plan_sha256``). A part plan that no longer matches would sweep other
configurations or settings than the campaign records: ``resubmit`` (and ``submit.sh``) refuse
to submit such a part and ``status`` says so (s39 tester H1: a shard plan given another
``min_time`` and one more size was run without a word; status said 20/20 while the merged file
held 21 runs of mixed settings). A source plan edited since is only said: the campaign runs its
own copy, and the user may have moved on to the next campaign.
"""

from __future__ import annotations

from pathlib import Path

from hpcds1mpi.errors import ConfigError


def plan_digest(text: str) -> str:
    """The SHA-256 of a part plan's text as emit writes it (UTF-8)."""
    from hpcds1mpi.digests import sha256

    return sha256(text.encode()).hexdigest()


def edited_plans(folder: str | Path, manifest: dict, names: set[str] | None = None) -> list[str]:
    """The plans (``plans/n1-0.toml``) of parts ``names`` (all: None) whose file no longer
    has the SHA-256 campaign.json records, or is gone; a part of a campaign emitted before the
    digests were recorded is not checked."""
    from hpcds1mpi.digests import sha256_file

    edited = []
    for part in manifest["parts"]:
        digest = part.get("sha256")
        if not isinstance(digest, str) or (names is not None and part["name"] not in names):
            continue
        try:
            same = sha256_file(Path(folder) / part["plan"]) == digest
        except OSError:
            same = False
        if not same:
            edited.append(part["plan"])
    return edited


def edited_line(folder: str | Path, manifest: dict, names: set[str] | None = None) -> str:
    """One line naming the part plans of ``names`` edited since emit and what to do; ""
    where none is."""
    from hpcds1mpi.runtime.message_paths import shell_word

    edited = edited_plans(folder, manifest, names)
    if not edited:
        return ""
    shown = ", ".join(edited[:3]) + (f" and {len(edited) - 3} more" if len(edited) > 3 else "")
    source = shell_word(manifest.get("plan") or "PLAN")
    return (f"{shown} changed since `campaign emit` (campaign.json records each part's "
            f"configurations and settings by its plan's SHA-256): its job would sweep something "
            f"other than the campaign and mix it into {manifest['merged']}; undo the edit, or "
            f"make the change in the plan and emit it as a new campaign (hpcds1mpi campaign "
            f"{source} --emit {manifest['scheduler']} --out NEW ...)")


def check_unedited(folder: str | Path, manifest: dict, names: set[str]) -> None:
    """Refuse to submit parts ``names`` where one's plan changed since emit.

    Raises:
        ConfigError: one line (:func:`edited_line`).
    """
    line = edited_line(folder, manifest, names)
    if line:
        raise ConfigError(f"{line}; nothing was submitted")


def source_plan_line(folder: str | Path, manifest: dict) -> str:
    """One line where the plan the campaign was emitted from has changed since (a note: the
    campaign goes on with its own copy); "" where it has not, or is gone."""
    from hpcds1mpi.digests import sha256_file
    from hpcds1mpi.runtime.message_paths import shell_word

    plan = manifest.get("plan")
    if not isinstance(plan, str) or not isinstance(manifest.get("plan_sha256"), str):
        return ""
    try:
        if sha256_file(plan) == manifest["plan_sha256"]:
            return ""
    except OSError:
        return ""
    own = shell_word(str(Path(folder) / "plan.toml"))
    return (f"{shell_word(plan)} changed since this campaign was emitted from it; the campaign "
            f"runs its own copy ({own}) and its parts' plans: to run the new plan, emit it "
            f"into another --out (hpcds1mpi campaign {shell_word(plan)} --emit "
            f"{manifest['scheduler']} --out NEW ...)")
