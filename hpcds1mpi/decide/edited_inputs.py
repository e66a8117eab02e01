"""A job whose input file was edited after its program's runs measured it.

A bundle's predictions for a program are of the inputs its runs read. After BAGEL's
``h16.json`` was edited (another basis set), ``recommend`` and ``advise`` still answered
"predicted runtime 4.81 s ... measured (1 run at this size)", and the script they wrote ran the
edited input, which took 1.37 s: another computation, nothing said (s48 tester O4). The bundle
now keeps the stamps of the files its runs read (:mod:`~hpcds1mpi.surrogates.measured_inputs`);
a file the job's command names (in the folder it runs in) that the runs stamped, and that now
has another content and was modified after the last of them, is an edited input. As for a job
of another command (:mod:`.unmeasured_command`), its verdict is then at most ``confirm``, with
one line saying so (and that the prediction is of the earlier input); ``recommend`` no longer
calls the layouts' values "measured" at this size (their runs are of the earlier input), and
``advise`` keeps the script's own time limit. A bundle trained before the stamps, a file never
stamped, one that is gone, or one the same as measured (``touch``, a copy back) says nothing.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace


def edited_files(bundle, workload: str, args: list[str], folder: str | None
                 ) -> list[tuple[str, list, list]]:
    """(the argument, a stamp measured, its stamp now) of each file argument of ``args`` (a
    command's words past its program) in ``folder`` that ``workload``'s runs in ``bundle``
    stamped, whose content now is none they measured and that was modified after their last
    run; [] where none is (or the bundle keeps no stamps, or ``folder`` is not known)."""
    from hpcds1mpi.measure.argument_files import file_arguments
    # the sweep's own stamp and comparison: one rule for a resume and for a question
    from hpcds1mpi.measure.input_stamps import file_stamp_now, stamp_edited
    from hpcds1mpi.surrogates.measured_inputs import recorded_inputs

    recorded = recorded_inputs(bundle, workload) if folder else None
    if recorded is None:
        return []
    files, until = recorded
    found, seen = [], set()
    for arg in file_arguments(args):
        path = os.path.normpath(os.path.join(folder, arg))
        before = files.get(path)
        if not before or path in seen:
            continue
        seen.add(path)
        now = file_stamp_now(path)  # None: gone, which the job's own input check says
        if now is not None and now[1] > until and all(stamp_edited(b, now) for b in before):
            found.append((arg, before[-1], now))
    return found


def edited_reason(workload: str, edited: list[tuple[str, list, list]]) -> str:
    """The verdict's one line for the :func:`edited_files` ``edited`` of a ``workload`` job."""
    arg, before, now = edited[0]
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(now[1]))
    what = (f"{now[0]} bytes, measured {before[0]}" if now[0] != before[0] else
            "the same size, another content")
    more = f" ({len(edited) - 1} more input too)" if len(edited) > 1 else ""
    return (f"{arg} was edited at {when}, after {workload}'s runs read it ({what}){more}: "
            "those runs measured the earlier input, so the prediction is of that input, not "
            "this job's; keep your own time limit, or restore the input, or measure the "
            "edited one (sweep --command with its own --label)")


def judge_edited_inputs(rec, bundle, program=None) -> str:
    """For ``recommend``'s ``rec`` with a pick: the reason (or "") where the command its job
    runs (``program``, else the measured one) names an edited input (:func:`edited_files`),
    read in the folder its sweep ran the pick's layout in; then ``rec``'s verdict is at most
    ``confirm`` and no layout is called measured at this size (:func:`_unmeasured`)."""
    from hpcds1mpi.decide.unmeasured_command import confirm_unmeasured, given_words
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.program import placeholder_values, program_tokens
    from hpcds1mpi.measure.workdirs import folder_of

    levels = rec.program_levels
    command = rec.program_command if program is None else program
    if rec.picked is None or not command or levels is None or not levels.external:
        return ""
    config = rec.picked.choice.config()
    try:  # split as a shell does (``> out`` is a word), as the command check splits it
        tokens = program_tokens(given_words(command), placeholder_values(config, rec.size))
    except ConfigError:
        return ""  # the script's own checks refuse it in one line
    workdir = str((levels.measured_with or {}).get("workdir") or "")
    folder = os.path.join(levels.swept_in or "", folder_of(workdir, config, rec.size) or "")
    edited = edited_files(bundle, rec.workload, tokens[1:], folder)
    if not edited:
        return ""
    reason = edited_reason(rec.workload, edited)
    confirm_unmeasured(rec.verdict, reason)
    for place in {id(pl): pl for pl in (*rec.places, rec.picked)}.values():
        if place.choice is not None:
            place.choice = replace(place.choice, scores=_unmeasured(place.choice.scores))
    return reason


def _unmeasured(scores):
    """``scores`` with no candidate's values called runs at this size (``measured_runs`` 0):
    their runs read the earlier input. A copy: a scored grid may be shared by answers."""
    cols = scores.cols
    if "measured_runs" not in cols:
        return scores
    import numpy as np

    return replace(scores, cols={**cols, "measured_runs": np.zeros_like(cols["measured_runs"])})


def judge_launch_inputs(bundle, workload: str, script, launch, job_folder: str | None) -> str:
    """``advise``'s reason (or "") where a script's ``launch`` line names an edited input
    (:func:`edited_files`), read in the folder the line runs in (its ``cd`` lines from the
    submit folder ``job_folder``; None, a web request's text: no file is read)."""
    from hpcds1mpi.decide.unmeasured_command import as_run, program_in
    from hpcds1mpi.launch.script_folder import launch_folder
    from hpcds1mpi.launch.script_placeholders import launch_words

    if launch is None or job_folder is None:
        return ""
    words = as_run(launch_words(launch))  # no output redirection: ``> h16.out`` is none
    words = words[program_in(words):] if words else []
    edited = edited_files(bundle, workload, words[1:],
                          launch_folder(script, launch, job_folder))
    return edited_reason(workload, edited) if edited else ""


__all__ = ["edited_files", "edited_reason", "judge_edited_inputs", "judge_launch_inputs"]
