"""What proves that a sweep's several ranks are one job, for a program whose MPI is not read.

The launch probe shows only that the launcher starts one job of ``sh``. Where the program's MPI
is read the launcher check decides; otherwise :func:`unproven_ranks` says so in a note, and the
way out is ``--ranks-regex`` (the rank count each launch prints). A dynamic binary whose every
library ``ldd`` resolves and none is MPI (an OpenMP-only program) is refused at more than one
rank instead: its ranks are independent copies, recorded ok, and recommend then listed the
2-rank layout as measured (s33 tester D2). A job script that launches more than one rank of
such a binary gets the same finding as advise's warning (:func:`script_copies`, read from the
program's files, nothing run): Debian's ``mb-mpi`` links no MPI, advise predicted its
unmeasured 2 ranks faster and the job failed, two copies writing the same files (s35 tester
A2); so does a binary linking an MPI library it never starts, as the sweep reads it
(:mod:`~hpcds1mpi.launch.mpi_init_calls`: Debian's ``apbs``, s43 tester I1). A sweep of such
a program at any rank count records why its ranks cannot be one job
(:data:`ONE_RANK_ONLY` in its ``launch`` attribute, :func:`one_rank_only`), so that recommend
never offers it a rank count it did not measure (s39 tester A2: RAxML's 2 ranks offered alone on
the front from its 1-rank thread sweep).
"""

from __future__ import annotations

import os

from typing import TYPE_CHECKING

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI, ProgramMPI

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch


def copies(name: str, ranks: int) -> str:
    """What becomes of ``ranks`` ranks of the program ``name`` that links no MPI library: the
    one phrase of the sweep's refusal and advise's warning."""
    return (f"{ranks} ranks of {name} would run as independent copies, each doing the whole "
            "job (and writing the same files)")


#: The key of a sweep's ``launch`` record (and of its runs' ``launched_with``) saying why the
#: program's ranks cannot be one job (:func:`one_rank_only`); absent where they can.
ONE_RANK_ONLY = "one_rank_only"


def one_rank_only(program: ProgramMPI, ranks_regex: bool) -> str:
    """Why ``program``'s ranks cannot be one job, as its sweep records it (:data:`ONE_RANK_ONLY`):
    it is known to link no MPI library and no ``--ranks-regex`` proves that it loads one at run
    time, the case in which the sweep refuses more than one rank (:func:`unproven_ranks`);
    "" otherwise."""
    from hpcds1mpi.launch.mpi_family import NO_MPI, known_without_mpi

    if ranks_regex or not known_without_mpi(program):
        return ""
    return (f"the program {os.path.basename(program.path)} {_without_mpi(program)}, so its "
            "ranks would run as independent copies, each doing the whole job")


def _without_mpi(program: ProgramMPI) -> str:
    """How ``program`` (:func:`~hpcds1mpi.launch.mpi_family.known_without_mpi`) is known to
    use no MPI: it links none, or it links one it never starts (s43 tester I1)."""
    from hpcds1mpi.launch.mpi_family import NO_MPI
    from hpcds1mpi.launch.mpi_init_calls import NO_MPI_CALLS

    if program.evidence.endswith(NO_MPI_CALLS):
        return (program.evidence.split(" ", 1)[1].replace(": " + NO_MPI_CALLS, "")
                + ", a build without MPI")
    how = "" if program.evidence == NO_MPI else f"; {program.evidence}"
    return f"links no MPI library (ldd resolves every library it needs{how})"


def swept_program(tokens: list[str], env: dict, launch, ranks: tuple | None,
                  cwd: str | None) -> ProgramMPI:
    """The MPI of the program a sweep's command ``tokens`` runs under ``launch`` (``ranks``: the
    program its ranks run, :func:`~hpcds1mpi.launch.rank_program.rank_program`'s reading, None:
    read here), started in ``cwd``: read once per sweep (``ldd``, or its interpreter asked about
    mpi4py, up to a minute) for both :func:`unproven_ranks` and :func:`one_rank_only`."""
    from hpcds1mpi.launch.mpi_family import program_mpi
    from hpcds1mpi.launch.rank_program import rank_program

    # the program its ranks run, on their PATH, past `env X=1` (as the pre-flight reads it)
    ranks = ranks or rank_program(tokens, env, getattr(launch, "command", ""),
                                  getattr(launch, "args", ()))
    return program_mpi(*ranks, cwd) if ranks else program_mpi(tokens, env, cwd)


def unproven_ranks(program: ProgramMPI, max_ranks: int, ranks_regex: bool) -> str:
    """The note for ``program``'s launches at up to ``max_ranks`` ranks, "" where none is due
    (one rank, ``--ranks-regex`` given, its MPI read).

    Raises:
        ConfigError: more than one rank of a program known to link no MPI library
            (:func:`~hpcds1mpi.launch.mpi_family.known_without_mpi`), without
            ``--ranks-regex``: one line with both ways out.
    """
    from hpcds1mpi.launch.mpi_family import known_without_mpi

    if max_ranks <= 1 or ranks_regex or program.family in (OPENMPI, MPICH):
        return ""
    if known_without_mpi(program):
        raise ConfigError(
            f"the program {os.path.basename(program.path)} {_without_mpi(program)}, so its "
            f"{copies(os.path.basename(program.path), max_ranks)}, and each be recorded as "
            "the job; the program was not run: for a "
            "threads-only program sweep --ranks-per-node 1 (and --threads); if it loads MPI at "
            "run time, give --ranks-regex with the rank count it prints (e.g. --ranks-regex "
            "'ranks: (\\d+)'), which then proves each launch")
    return (f"note: the launch is unverified: the program's MPI is unknown "
            f"({program.evidence}) and the probe shows only that the launcher starts one job "
            "of sh; were it another MPI's program, its ranks would run as independent 1-rank "
            "copies and still be recorded ok: give --ranks-regex with the rank count the "
            "program prints (e.g. --ranks-regex 'ranks: (\\d+)') to check every launch")


def script_copies(script: "JobScript", launch: "Launch | None", cwd: str,
                  env: dict | None = None) -> str | None:
    """advise's warning where ``launch`` starts more than one rank (the job's tasks, as the
    launch line and directives ask) of a program file that links no MPI library, every library
    it needs found (:attr:`~hpcds1mpi.launch.program_file_mpi.FileMPI.without_mpi`; never an
    interpreter's, whose binding loads MPI at run time), or an ELF that links one it never
    starts (:func:`~hpcds1mpi.launch.mpi_init_calls.calls_mpi_init` False, the sweep's reading:
    s43 tester I1, Debian's ``apbs``), naming it and both ways out; None otherwise. The
    program is found as the launcher's ranks find it
    (:func:`~hpcds1mpi.launch.script_mpi_check.ranks_program`), relative to ``cwd``."""
    from hpcds1mpi.launch.program_file_mpi import file_mpi
    from hpcds1mpi.launch.script_mpi_check import ranks_program

    ranks = _tasks(script)
    if launch is None or ranks <= 1:
        return None
    _, program = ranks_program(script, launch, cwd, env)
    if program is None:
        return None
    read = file_mpi(program, env)
    if read.without_mpi:
        why, way = ("links no MPI library (every library it needs is found, none is MPI)",
                    "links MPI")
    elif not (why := _never_started(program, read)):
        return None
    else:
        way = "starts MPI"
    program, name = os.path.normpath(program), os.path.basename(program)
    ask = " (#SBATCH --ntasks=1; its threads for speed)" if script.scheduler == "slurm" else \
        " (its threads for speed)"
    return (f"line {launch.line}: {name} ({program}) {why}, so the job's {copies(name, ranks)}, "
            f"and no prediction for more than 1 rank holds; ask for 1 task{ask}, "
            f"or install a build of it that {way}")


def _never_started(program: str, read) -> str:
    """How the ELF ``program``, read as linking an MPI library (``read``, its
    :class:`~hpcds1mpi.launch.program_file_mpi.FileMPI`), is known never to start it: "" where
    it does or that cannot be told. Only the program's own file is asked (an interpreter's
    answer is its binding's, which starts MPI for any script)."""
    from hpcds1mpi.launch.elf_libraries import elf_needed
    from hpcds1mpi.launch.mpi_init_calls import calls_mpi_init

    if not read.family or not read.elf or os.path.realpath(read.elf) != os.path.realpath(
            program):
        return ""
    try:
        if not elf_needed(program):  # a static binary: no dynamic symbols to read
            return ""
    except OSError:
        return ""
    if calls_mpi_init(program) is not False:
        return ""
    library = read.evidence.removeprefix("links ")
    return (f"links {library} but neither it nor a library it loads imports MPI_Init or a kin "
            "(nm -D): a build that never starts MPI")


def _tasks(script: "JobScript") -> int:
    """The job's tasks as its directives and launch line ask (read after
    :func:`~hpcds1mpi.launch.script_request.resolve_launch`); 1 where they cannot be told."""
    try:
        nodes, per_node, _ = script.layout()
    except ConfigError:
        return int(script.ntasks or 1)
    return int(nodes) * int(per_node)
