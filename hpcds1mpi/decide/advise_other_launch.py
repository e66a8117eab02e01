"""The verdict of a script whose other launch line advise cannot vouch for.

advise predicts and judges the one launch line it reads (``script.launch``). Another launch
line that stops the job (Open MPI's mpirun starting more ranks than the job has tasks:
:func:`~hpcds1mpi.launch.mpirun_slots.other_launch_slots`) is warned about, but the guard's
``auto`` spoke of the line read only, so a job that fails at its second line was told "verdict
auto" and "already asks the recommended layout" (s49 fixer brief, after s48 tester O8). Such a
script's verdict is at most ``confirm``, that warning its reason. So is one with a line,
the one read too, whose hydra ``mpiexec`` (MPICH, Intel MPI) starts more ranks than the job
has tasks and CPUs (:func:`~hpcds1mpi.launch.mpirun_slots.shared_cpus`): it runs, but its
ranks share CPUs the prediction gives each its own (s49 review F6).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript

#: The verdict's check name for this one.
CHECK = "other_launches"


def other_launch_problems(script: "JobScript", job_folder: str | None = None) -> list[str]:
    """The warnings of ``script``'s launch lines other than the one advise reads that stop
    the job, and of any line, the one read too, whose hydra ranks crowd the job's CPUs (the
    prediction gives each rank its own: s49 review F6), one each (the text advise's warnings
    already hold): each line's MPI read as the warning reads it, from its launcher's file
    where the job's folder is given (a bare ``mpirun`` that is Open MPI's on PATH, s49 review
    F2)."""
    from hpcds1mpi.launch.launch_line_checks import launch_family
    from hpcds1mpi.launch.mpirun_slots import other_launch_slots, shared_cpus

    said = []
    for launch in script.launches:
        family = launch_family(script, launch, job_folder)
        stops = other_launch_slots(script, launch, family) if launch is not script.launch \
            else ""
        said += [w for w in (stops, shared_cpus(script, launch, family)) if w]
    return said


def confirm_other_launches(verdict: dict, script: "JobScript",
                           job_folder: str | None = None) -> None:
    """``verdict`` (a guard verdict's dict), changed in place: at most ``confirm`` where
    another launch line of ``script`` stops the job, or a line's hydra ranks crowd its CPUs,
    each such warning a reason; left as it is where there is none."""
    problems = other_launch_problems(script, job_folder)
    if not problems:
        return
    reasons = verdict.setdefault("reasons", [])
    reasons += [p for p in problems if p not in reasons]
    verdict.setdefault("checks", {})[CHECK] = "confirm"
    if verdict.get("verdict") == "auto":
        verdict["verdict"] = "confirm"
