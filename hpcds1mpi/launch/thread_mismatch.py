"""A program's own thread option against the OMP_NUM_THREADS its job script sets.

``advise`` reads a program's threads per rank from its own option where its measured command
has ``{threads}`` (``gmx_mpi mdrun -ntomp {threads}``,
:func:`~hpcds1mpi.launch.script_request.program_threads`). A script that sets
``OMP_NUM_THREADS=2`` and runs ``gmx_mpi mdrun -ntomp 1`` had only a note ("-ntomp 1 is read
as the threads per rank") beside a prediction and a "0 % shorter" verdict, though mdrun stops
at once on it: "Fatal error: Environment variable OMP_NUM_THREADS (2) and the number of
threads requested on the command line (1) have different values" (s37 tester G2). The sweep
never measured such a job: it gives every launch ``OMP_NUM_THREADS`` equal to ``{threads}``.

:func:`disagreement_warning` is the warning: the two values, what the program does with
them — mdrun (:data:`REFUSES`) stops; another program runs as its own option says, the count
the predictions read — and the fix, the two made equal. Like advise's other warnings of a job
that fails as written (a launcher of another MPI), it is said and advise exits 0.
"""

from __future__ import annotations

import re

#: Programs that stop when OMP_NUM_THREADS differs from their own thread option, with what
#: they then print: GROMACS's gmx / gmx_mpi (mdrun) and the old mdrun / mdrun_mpi binaries,
#: double-precision builds (``_d``) too.
REFUSES = {
    re.compile(r"^(gmx|mdrun)(_mpi)?(_d)?$"): (
        "GROMACS's mdrun stops at once with \"Fatal error: Environment variable "
        "OMP_NUM_THREADS ({env}) and the number of threads requested on the command line "
        "({own}) have different values\", so the job fails as written"),
}


def _refusal(program: str, env: int, own: int) -> str | None:
    from hpcds1mpi.launch.script_placeholders import stem

    name = stem(program or "")
    return next((said.format(env=env, own=own) for pattern, said in REFUSES.items()
                 if pattern.match(name)), None)


def disagreement_warning(line: int, program: str, said: str, own: int, other: str,
                         told: int) -> str:
    """The warning for a launch on ``line`` of ``program`` whose own thread option (``said``,
    ``-ntomp 1``: ``own`` threads per rank) disagrees with the ``other`` the script sets
    (``OMP_NUM_THREADS=2``: ``told``)."""
    does = _refusal(program, told, own) or (
        f"the sweep measured it only with the two equal; as written its ranks run {own} "
        f"thread{'s' if own != 1 else ''} each, as its option says, which the predictions "
        "read (a program that stops on the difference, as GROMACS's mdrun does, fails)")
    variable = other.split("=", 1)[0]
    return (f"line {line}: the program's {said} and {other} disagree: {does}; make them equal "
            f"(set {variable}={own}, or {_option_as(said, told)})")


def _option_as(said: str, told: int) -> str:
    """The fix on the program's side: its option ``said`` (``-ntomp 1``, ``--nt=1``) given
    ``told``."""
    if " " in said:
        return f"give {said.rsplit(' ', 1)[0]} {told}"
    if "=" in said:
        return f"give {said.split('=', 1)[0]}={told}"
    return f"give the program's {said} the value {told}"
