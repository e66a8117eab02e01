"""What ``advise`` says about a script's launch line beyond its layout.

Its MPI: a launcher or ``srun`` plugin that cannot start the program's MPI is a warning, an
unknown plugin a note (:func:`hpcds1mpi.launch.launch_line_checks.launch_checks`; files read,
the module-system lines before the launch run where only root or the user can write their
files, a Python program's interpreter asked where its mpi4py is, nothing else run); without the job's
folder (``serve``'s text) only what the text shows: a host list of its own, one core for a
rank's threads (:func:`text_only_checks`). Its arguments: the predictions are for the
program's measured command line, so
a launch line that runs it with other arguments (``pw.x -nk 2 -i si-30.in`` against the
measured ``pw.x -i si-{size}.in``: the pool count ``-nk`` decides its multi-rank speed) gets a
note naming them (:func:`argument_note`; ``recommend --program``'s the same comparison,
:func:`hpcds1mpi.decide.given_program.program_arguments_note`). Ranks that run another file than the measured program (a
venv's ``python3`` for ``/usr/bin/python3``) are a warning, and that line's MPI goes unchecked
(:mod:`hpcds1mpi.launch.measured_program`); an ``srun`` plugin that cannot start the program
is given its fix for ``--rewrite`` (:func:`srun_rewrite_notes`). Intel MPI's ``I_MPI_PIN*``
value that gives the script's own ranks fewer cpus than their threads is a warning
(:func:`~hpcds1mpi.launch.script_intel_pinning.intel_pinning_warning`). More than one rank of a
program that links no MPI library, or links one it never starts (s43 tester I1), is a warning,
the sweep's rank proof (:func:`~hpcds1mpi.launch.rank_proof.script_copies`, s35 tester A2).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from hpcds1mpi.launch.script_placeholders import program_at, split_command, stem, word_pattern

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch

#: The most words compared (the comparison costs their product); a longer launch line gets
#: no note rather than a slow answer.
MAX_WORDS = 400
#: The most differences named in the note.
SHOWN = 4


def launch_notes(script: "JobScript", launch: "Launch | None", command: str | None,
                 job_folder: str | None) -> tuple[list[str], list[str]]:
    """(warnings, notes) on ``script``'s launch lines: their MPI where the job's folder is
    known (``job_folder``; None: no file is read, only :func:`text_only_checks`), and
    ``launch``'s arguments against its measured ``command``."""
    warnings: list[str] = []
    notes: list[str] = []
    measured = None
    if job_folder is not None:
        from hpcds1mpi.launch.measured_program import other_program
        from hpcds1mpi.launch.launch_line_checks import launch_checks

        from hpcds1mpi.launch.rank_proof import script_copies

        other = other_program(script, launch, command, job_folder)
        from hpcds1mpi.launch.recorded_mpi import recorded_mpi
        from hpcds1mpi.launch.unchecked_launch import unread_launch

        # the MPI its sweep ran it with, where its file does not tell (s42 tester E4)
        measured = None if launch is None or command is None or other else (
            launch.line, recorded_mpi(getattr(command, "launched_with", None)))
        warnings, notes = launch_checks(script, job_folder, skip=frozenset(
            [launch.line] if other else []), measured=measured)
        if measured is not None and (unread := unread_launch(script, launch, job_folder, None,
                                                              measured[1])):
            notes.append(unread)  # neither its file nor the model tells its MPI
        # the sweep's rank proof: ranks of a program without MPI (s35 tester A2, s43 I1)
        copies = None if other else script_copies(script, launch, job_folder)
        warnings = ([other] if other else []) + ([copies] if copies else []) + warnings
    else:  # s31 F4: the checks that read no file, so /v1/advise's text gets them too
        warnings = text_only_checks(script)
    from hpcds1mpi.launch.script_intel_pinning import intel_pinning_warning

    pinned = intel_pinning_warning(script, launch, job_folder)  # s35 tester I2
    warnings += [pinned] if pinned else []
    if launch is not None and launch.wrapper_cleared:  # s30 tester R6: every rank failed
        warnings.append(f"line {launch.line}: `env -i` clears the variables the launcher gives "
                        "each rank (its MPI wire-up, PMI_* / OMPI_*), so MPI_Init fails; set "
                        "what the program needs with `env NAME=VALUE` instead")
    if launch is not None and (split := _tool_value_split(launch)):
        warnings.append(f"line {launch.line}: {split}")  # s43 tester J6
    from hpcds1mpi.decide.script_functions import uncalled_launch

    if launch is not None and (uncalled := uncalled_launch(script, launch)):
        warnings.append(uncalled)  # its function never runs it (s43 tester J8)
    if job_folder is not None and launch is not None and not other:
        # (s32 review: not where the ranks run another program, whose MPI went unchecked)
        notes += srun_rewrite_notes(script, launch, job_folder, measured[1] if measured else None)
    differs = argument_note(launch, command)
    return warnings, notes + ([differs] if differs else [])


def srun_rewrite_notes(script: "JobScript", launch: "Launch", job_folder: str,
                       recorded=None) -> list[str]:
    """What ``--rewrite`` does about an ``srun`` plugin that cannot start the program
    (:func:`~hpcds1mpi.launch.script_mpi_check.srun_fix`): it gives srun the plugin that can,
    kept on ``script.srun_mpi_fix`` for the rewrite, and says so; where none is known, that
    the rewritten job will fail as this one would (s32 tester U5). ``recorded``: the MPI the
    model's sweep ran the program with (:mod:`~hpcds1mpi.launch.recorded_mpi`)."""
    from hpcds1mpi.launch.script_mpi_check import srun_fix

    found = srun_fix(script, launch, job_folder, recorded=recorded)
    if found is None:
        return []
    script.srun_mpi_fix = found[0]  # read by script_rewrite._srun_mpi
    if found[0] is None:
        return [f"--rewrite keeps line {launch.line}'s srun as written, so the rewritten job "
                "fails as this one would (see the warning); fix its launcher by hand"]
    return [f"--rewrite gives line {launch.line}'s srun --mpi={found[0]}, the plugin its "
            "program's MPI starts with (see the warning)"]


def text_only_checks(script: "JobScript") -> list[str]:
    """The launch warnings read from ``script``'s text alone, for every launch line: a host
    list of its own (:func:`~hpcds1mpi.launch.script_hosts.host_list_warning`) or spelled as
    its launcher refuses (:mod:`~hpcds1mpi.launch.host_spelling`), and a ``-bind-to core`` for
    a rank's threads
    (:func:`~hpcds1mpi.launch.script_thread_binding.one_core_warning`) and Open MPI's mpirun
    on another line than the one read starting more ranks than the job has tasks
    (:func:`~hpcds1mpi.launch.mpirun_slots.other_launch_slots`), and hydra's on any line,
    which shares the job's CPUs (:func:`~hpcds1mpi.launch.mpirun_slots.shared_cpus`), its
    MPI known from the launcher's name only."""
    from hpcds1mpi.launch.host_spelling import host_warnings
    from hpcds1mpi.launch.launch_line_checks import launch_family
    from hpcds1mpi.launch.mpirun_slots import other_launch_slots, shared_cpus
    from hpcds1mpi.launch.script_thread_binding import one_core_warning

    return [w for launch in script.launches
            for family in (launch_family(script, launch),)
            for w in (*host_warnings(script, launch, family),
                      one_core_warning(script, launch, family),
                      other_launch_slots(script, launch, family),
                      shared_cpus(script, launch, family)) if w]


def _common(ran: list[str], recorded: list[str]) -> list[tuple[int, int]]:
    """(index in ``ran``, index in ``recorded``) of the longest run of words the two share in
    order, a recorded placeholder matching any word (``si-{size}.in`` ~ ``si-30.in``)."""
    patterns = [re.compile(word_pattern(t)) for t in recorded]
    n, m = len(ran), len(recorded)
    fits = [[bool(p.fullmatch(w)) for p in patterns] for w in ran]
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            best[i][j] = best[i + 1][j + 1] + 1 if fits[i][j] else \
                max(best[i + 1][j], best[i][j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if fits[i][j] and best[i][j] == best[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _differences(ran: list[str], recorded: list[str]) -> list[str]:
    """How ``ran`` differs from ``recorded``, one phrase per stretch between shared words; a
    value that differs is shown with the option before it (``'-nd 4' where it has '-nd 1'``)."""
    out = []
    i = j = 0
    for a, b in _common(ran, recorded) + [(len(ran), len(recorded))]:
        added, missing = ran[i:a], recorded[j:b]
        if i and ran[i - 1].startswith("-") and any(
                side and not side[0].startswith("-") for side in (added, missing)):
            added, missing = [ran[i - 1], *added], [recorded[j - 1], *missing]
        shown, left = " ".join(added), " ".join(missing)
        if shown and left:
            out.append(f"{shown!r} where it has {left!r}")
        elif shown or left:
            out.append(f"adds {shown!r}" if shown else f"leaves out {left!r}")
        i, j = a + 1, b + 1
    return out


def other_arguments(words: list[str], command: str | None, stdin: str = "") -> str | None:
    """How the command ``words`` (a launched or given command line, its program among them)
    differs from the measured ``command`` (``adds 'T=20'``; ``'-nk 2' where it has ...``),
    one phrase, its options compared in any order and its positional words in theirs
    (:mod:`~hpcds1mpi.decide.argument_order`); None when they agree (placeholders take any value), or when either is
    unknown, too long, or the program is not among ``words`` (a wrapper before it is
    skipped). The one comparison of advise's note and ``recommend --program``'s (s32 tester
    U3)."""
    tokens = split_command(command or "")
    if not tokens or not words:
        return None
    at = program_at(tokens)
    starts = [k for k, w in enumerate(words) if stem(w) == stem(tokens[at])]
    if not starts or len(words) > MAX_WORDS or len(tokens) > MAX_WORDS:
        return None
    from hpcds1mpi.decide.argument_order import in_measured_order, same_words

    ran, measured = words[starts[0] + 1:], tokens[at + 1:]  # options compared order-free (G2)
    differences = _differences(in_measured_order(ran, measured) or ran, measured)
    if differences and same_words(ran, measured):  # never "leaves out X; adds X"
        differences = [f"the same arguments in another order: {' '.join(ran)!r} where it has "
                       f"{' '.join(measured)!r}"]
    if stdin:
        differences.append(f"feeds it {stdin!r}")
    if not differences:
        return None
    more = len(differences) - SHOWN
    return "; ".join(differences[:SHOWN]) + (f"; and {more} more" if more > 0 else "")


def argument_note(launch: "Launch | None", command: str | None) -> str | None:
    """The note for a launch line that runs its program with arguments (or a standard-input
    redirection) other than its measured command line's (:func:`other_arguments`): the
    predictions are for the measured one. None when they agree or cannot be compared."""
    if launch is None or not launch.program_raw:
        return None
    said = other_arguments([launch.program or launch.program_raw, *launch.args], command,
                           launch.stdin)
    if said is None:
        return None
    name = os.path.basename(split_command(command or "")[program_at(split_command(command))])
    return (f"line {launch.line}: the script runs {name} with other arguments "
            f"than its measured command {command!r} ({said}): the predictions are for the "
            "measured command, and these arguments may change the runtime (sweep the "
            "script's own command line to measure them)")


def _tool_value_split(launch: "Launch") -> str:
    """The line of :func:`~hpcds1mpi.launch.tool_wrappers.split_value` for the tool the
    launch runs its program under, past exec wrappers; "" for none."""
    from hpcds1mpi.launch.exec_wrappers import program_index
    from hpcds1mpi.launch.tool_wrappers import split_value

    words = [w for w in [launch.program_raw or launch.program, *launch.args] if w]
    return split_value(words[program_index(words):]) if words else ""
