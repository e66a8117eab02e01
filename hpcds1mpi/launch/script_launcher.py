"""The launcher a job script starts its program with, and whether that one can.

Where no cluster file names a launcher, a program's script launches it the way its sweep did
(:func:`measured_cluster`; s29 tester B4: meep swept with Open MPI's ``mpirun`` got a refusal
for ``srun --mpi=pmi2``, which its Open MPI cannot start as one job); a cluster file's
launcher always wins. :func:`check_launch` then refuses, in one line, a launcher that cannot
start the program, naming the cluster-file keys that fix it.
"""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import replace
from typing import Sequence

from hpcds1mpi.errors import ConfigError

#: srun's ``--mpi`` where the cluster names none (``launchers.for_script``).
_DEFAULT_MPI = "pmi2"
#: The key of a calibration sweep's ``measure`` options holding the launcher the program's
#: sweep used ({}: the bundle records none; absent: not a measured program), which its steps
#: launch with as a pick's script does (s29 V2-5;
#: ``decide.calibration_sweep.calibration_measurement``).
LAUNCHED_WITH = "launched_with"
#: A key of such a launch set by the caller where it is one of several pooled sweeps'
#: (``surrogates.program_launcher.SEVERAL``, chosen by ``launch_for``): the note then says
#: "one of the program's sweeps" (s31 F4: it said "the program's sweep").
POOLED = "pooled"
#: Added to a refusal of the script's launcher where the bundle records no launcher of the
#: program (s29 V1-8): a model trained again reads the one its sweep used from the telemetry.
#: A fix naming both cluster-file keys: ``mpiexec`` alone is unused where the launcher is
#: srun, Slurm's default (s36 tester M2).
_SET_MPIEXEC = 'set launcher = "mpiexec" and mpiexec = "{}" in the cluster file'
RETRAIN_HINT = ("; the model records no launcher for this program (trained before launchers "
                "were recorded): train it again from its sweep's telemetry (hpcds1mpi train "
                "--telemetry FILE ...) and the script launches the program as its sweep did")


def names_launcher(cluster) -> bool:
    """Whether ``cluster`` says how to launch: a ``launcher``, ``mpiexec`` or
    ``launcher_args`` or ``mpi`` key (``mpi = "pmi2"`` too: the default written out is the
    user's choice, s42)."""
    if cluster is None:
        return False
    return bool(cluster.launcher or cluster.mpiexec or cluster.launcher_args or cluster.mpi)


def measured_cluster(cluster, scheduler: str, launch: dict | None, program: str | None = None):
    """(``cluster`` with the launcher the program's sweep used, the one-line note saying so),
    or (``cluster``, None) where the cluster names a launcher (it wins), nothing was recorded
    (:attr:`hpcds1mpi.surrogates.levels.MeasuredLevels.launched_with`), the recorded launcher
    is not found here, or it is what the script writes anyway.

    An ``mpiexec``/``mpirun`` is written by its path (its own family's launcher: the one that
    worked), with the options the sweep gave it; an ``srun`` with the ``--mpi`` it was given,
    under Slurm only (a PBS job has no srun). A launch marked :data:`POOLED` is said as one
    of the program's sweeps'. ``program``: the command the script runs, whose MPI library the
    note on a cluster file's other launcher reads (:func:`measured_library_unlike`)."""
    if not launch:
        return cluster, None
    if names_launcher(cluster):  # it wins, but the user is told it was never measured
        return cluster, unmeasured_launcher(cluster, scheduler, launch, program)
    from hpcds1mpi.cluster import Cluster

    base = cluster if cluster is not None else Cluster(name="")
    kind, command, mpi = launch.get("launcher"), launch.get("command", ""), launch.get("mpi")
    args = shlex.join(launch.get("args") or [])
    sweep = "one of the program's sweeps" if launch.get(POOLED) else "the program's sweep"
    if kind == "srun":
        if scheduler != "slurm":  # no srun there: which mpiexec it needs (s42 tester E)
            from hpcds1mpi.launch.srun_swept import srun_swept_mpiexec

            return cluster, srun_swept_mpiexec(scheduler, mpi, program)
        if not mpi or mpi == _DEFAULT_MPI:
            return cluster, None
        return replace(base, mpi=mpi, launcher_args=args), (
            f"launches with srun --mpi={mpi}, as {sweep} ran it (no cluster file "
            "names a launcher; set launcher / mpi in a --cluster file to launch otherwise)")
    if kind not in ("mpiexec", "mpirun") or not command or shutil.which(command) is None \
            or not is_mpi_launcher(command):
        return cluster, None
    written, moved = recorded_launcher(launch)
    if moved and not written:  # s36 tester M2: no launcher of the family it ran is here
        return cluster, (f"does not launch with {moved}: no launcher of that family is found "
                         "here (set launcher = \"mpiexec\" and mpiexec = its path in a "
                         "--cluster file)")
    said = (f"launches with {written}, of the MPI family {sweep} ran it with: {moved}"
            if moved else f"launches with {command}, the {kind} {sweep} ran it with")
    return replace(base, launcher="mpiexec", mpiexec=written, launcher_args=args), (
        f"{said} (no cluster file names a launcher; set launcher / mpiexec in a --cluster "
        "file to launch otherwise)")


#: The launcher class a sweep recorded (``flavour``) -> the MPI family it was of then.
_FLAVOUR_FAMILY = {"HydraMpiexec": "mpich", "OpenMpiMpirun": "openmpi"}


def recorded_launcher(launch: dict) -> tuple[str, str]:
    """(the launcher file to write for a recorded ``mpiexec``/``mpirun`` ``launch``, "") or,
    where the recorded path now leads to a launcher of another MPI family than the sweep ran
    (a link that moved: Debian's ``update-alternatives``; s36 tester M2: a sweep through
    ``/usr/bin/mpirun`` when it was MPICH's hydra, then the fix named the same path, now Open
    MPI's), (a launcher of the family it ran — the recorded real file where the telemetry
    holds it (``resolved``), else the first found here; "" for none —, the sentence saying
    so)."""
    from hpcds1mpi.launch.mpi_family import candidates, launcher_family
    from hpcds1mpi.launch.mpi_names import LAUNCHER_NAMES

    command = launch.get("command", "")
    then = launch.get("family") or _FLAVOUR_FAMILY.get(launch.get("flavour") or "")
    found = shutil.which(command) if command else None
    now = launcher_family(found) if found else None
    if then not in LAUNCHER_NAMES or now not in LAUNCHER_NAMES or now == then:
        return command, ""
    resolved = launch.get("resolved") or ""
    written = resolved if os.path.isfile(resolved) and launcher_family(resolved) == then \
        else next(iter(candidates(then)), "")
    return written, (f"its sweep's {command} was then {LAUNCHER_NAMES[then]}, but now leads "
                     f"to {os.path.realpath(found)}, {LAUNCHER_NAMES[now]} (a link that has "
                     "moved since, as update-alternatives moves /usr/bin/mpirun)")


def unmeasured_launcher(cluster, scheduler: str, launch: dict, program: str | None = None
                        ) -> str | None:
    """The note, after "the script", where the launcher ``cluster``'s file names is not the
    one the program's sweep ran it with (``launch``): the program was never measured under
    it, and the cluster-file keys that launch it as measured. s33 tester B3: Debian's h5py,
    swept under ``mpirun.openmpi``, picks its MPI build by mpirun's ``OMPI_*`` variables and
    failed under the cluster file's srun; B2: mpirun's prefix had found ``python3`` in
    ``/usr/bin``, srun found the venv's. None where they are one launcher."""
    from hpcds1mpi.launch.rank_program import openmpi_prefix, prefix_bin_first

    kind, command, mpi = launch.get("launcher"), launch.get("command", ""), launch.get("mpi")
    name = cluster.launcher or ("srun" if scheduler == "slurm" else "mpiexec")
    given = cluster.mpiexec or name
    if kind == "srun":
        same_plugin = mpi in ("", None, cluster.mpi or _DEFAULT_MPI)  # srun's, as measured
        if scheduler != "slurm" or name == "srun" and same_plugin:
            return None
        measured = f"srun --mpi={mpi}" if mpi else "srun"
        keys = (f'mpi = "{mpi}"' if name == "srun" else
                'launcher = "srun"' + (f' and mpi = "{mpi}"' if mpi else ""))
    elif kind in ("mpiexec", "mpirun") and command:
        from hpcds1mpi.launch.mpi_installation import same_launcher

        # s36 tester M2: a recorded link that now leads to another MPI is not suggested
        written, moved = recorded_launcher(launch)
        found = shutil.which(given) if name != "srun" else None
        # s35 tester I5: Intel's bin/mpiexec and bin/mpiexec.hydra are one launcher's bytes
        if found and same_launcher(found, shutil.which(written) or written) and not moved:
            return None
        measured = f"{command} ({moved})" if moved else command
        if moved and not written:
            keys = f"launcher = \"{kind}\" and mpiexec = a launcher of that family"
        else:
            keys = f'launcher = "{kind}" and mpiexec = "{written}"'
        command = written or command
    else:
        return None
    args = launch.get("args") or []
    keys += f" and launcher_args = {shlex.join(args)!r}" if args else ""
    ours = f"srun --mpi={cluster.mpi or _DEFAULT_MPI}" if name == "srun" else given
    prefix = openmpi_prefix(command, args) if kind != "srun" else None
    # s36 tester M2: said of "./sz_mpich" too; it holds for a program named without a folder
    first = prefix_bin_first(command, args) if prefix else None
    found_in = (f"; a program named without a folder is found in {first} first by its "
                "ranks, on the job's PATH by these") if first else ""
    try:
        their_args = shlex.split(cluster.launcher_args or "")
    except ValueError:  # refused where the script's launch line is made
        their_args = []
    unlike = measured_library_unlike(program, (command if kind != "srun" else "", args),
                                     (given if name != "srun" else "", their_args), ours,
                                     getattr(cluster, "preamble", None))
    return (f"launches with the cluster file's {ours}, but the program was measured under "
            f"{measured} only, never under {ours}: it may run otherwise there (its variables "
            f"differ{found_in}){unlike}; to launch it as measured set {keys} in the cluster file")


def measured_library_unlike(program: str | None, measured: tuple[str, Sequence[str]],
                            theirs: tuple[str, Sequence[str]], ours: str, preamble=None) -> str:
    """The clause, for :func:`unmeasured_launcher`, where the ``program`` command's ranks
    load another MPI library under the cluster file's launcher (``theirs``: its path or
    name, "" for srun, and its options) than under the ``measured`` one: Open MPI's mpirun
    by its path (the Open MPI 5 wheel's too) gives its ranks its prefix's ``lib`` first on
    ``LD_LIBRARY_PATH`` (:func:`~hpcds1mpi.launch.rank_program.rank_environment`), and two
    installations share a soname (s40 tester A5: Open MPI 4.1.4 ran under the cluster's
    srun where every measured run loaded 5.0.11; s40 review G6: under another installation's
    mpirun named by path it was never said). Names both, and where the cluster's launcher
    gives the ranks no prefix of its own, the export that runs the measured one; "" where
    they load one library, either cannot be told, or the cluster file's ``preamble`` already
    puts the measured prefix's ``lib`` on ``LD_LIBRARY_PATH``."""
    from hpcds1mpi.launch.mpi_family import library_file, program_mpi
    from hpcds1mpi.launch.rank_program import openmpi_prefix, rank_environment

    prefix, their_prefix = openmpi_prefix(*measured), openmpi_prefix(*theirs)
    if prefix is None and their_prefix is None:
        return ""  # neither moves the library the program finds by itself
    try:
        tokens = shlex.split(program or "")
    except ValueError:
        return ""
    found = program_mpi(tokens) if tokens else None
    if found is None or not found.family:
        return ""
    ran, here = (library_file(found, rank_environment(*launcher, dict(os.environ)))
                 for launcher in (measured, theirs))
    if not ran or not here or os.path.realpath(ran) == os.path.realpath(here):
        return ""
    said = (f"; under {ours} it loads {here}, not {ran} that its ranks loaded (another "
            "installation of its MPI)")
    if their_prefix is not None:  # its own lib comes first whatever the job exports
        return said
    lib = os.path.join(prefix, "lib")
    if any("LD_LIBRARY_PATH" in line and lib in line for line in preamble or []):
        return ""
    return (f"{said}: to run the measured one, put export LD_LIBRARY_PATH={shlex.quote(lib)}"
            "${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} in the cluster file's preamble")


def is_mpi_launcher(command: str) -> bool:
    """Whether a recorded launcher ``command`` is named like an MPI launcher and its
    ``--version`` says so: a crafted telemetry's ``launched_with`` naming ``/usr/bin/xargs``
    with ``sh -c ...`` as its options was written into the script as "the mpiexec" (s29
    verifier V3-2). The name is checked first, so nothing else is ever run."""
    from hpcds1mpi.launch.mpi_family import launcher_family
    from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI
    from hpcds1mpi.launch.given_launcher import LAUNCHER_NAME

    path = shutil.which(command)
    return bool(path and LAUNCHER_NAME.fullmatch(os.path.basename(command))
                and launcher_family(path) in (OPENMPI, MPICH))


def retrain_hint(recorded: bool, cluster) -> str:
    """:data:`RETRAIN_HINT` for a measured program whose bundle records no launcher
    (``recorded`` False) where no cluster file names one (a launcher recorded later would
    then be used); "" otherwise."""
    return "" if recorded or names_launcher(cluster) else RETRAIN_HINT


def check_launch(program: list[str], launcher, cluster, hint: str = "",
                 scheduler: str = "slurm") -> str:
    """:func:`~hpcds1mpi.launch.script_launcher_mpi.check_script`, whose fix names
    cluster-file keys; where no file gave the cluster it says how to give one (s28 tester T: no cluster; s29
    tester C6: inside an salloc, the cluster read from Slurm); ``hint`` (:func:`retrain_hint`)
    follows such a fix. Returns a note, "" for none: a PBS job's bare ``mpiexec`` of another
    MPI on this PATH (qsub does not pass this PATH to the job, whose own may differ: s31
    review), said rather than refused as for sbatch, which passes it; a bare launcher whose
    file the cluster file's modules choose where that cannot be told here, and a cluster
    file's ``mpiexec`` that its srun leaves unused (s36 tester M1, M2). A cluster file's
    ``mpiexec`` path that is no executable file in a folder of this machine is refused, one
    whose folder is not here is said (:mod:`hpcds1mpi.launch.cluster_mpiexec`)."""
    from hpcds1mpi.launch.cluster_mpiexec import ignored_mpiexec, missing_mpiexec, \
        unfound_mpiexec, unseen_mpiexec
    from hpcds1mpi.launch.own_install import own_executable, runs_own_command

    if missing := missing_mpiexec(launcher, cluster):  # the job would exit 127 (s41 B12)
        raise ConfigError(missing)
    # A bare mpiexec is looked up on the PATH the job has: this one, after the cluster file's
    # preamble and modules as the module system here gives it (s36 tester M1); None: unknown.
    path, unknown = job_launch_path(cluster)
    if runs_own_command(program) and (own := own_executable())[1]:
        # the script puts this installation's bin first (own_install), so its hpcds1mpi (its
        # mpi4py's MPI) is what the ranks run, though this PATH may not hold it (s42: Open
        # MPI's mpirun by bare name was written for the kernels, which refuse to start so)
        program = [own[0], *program[1:]]
        path = os.pathsep.join((own[1], path)) if path is not None else None
    unchecked = unchecked_launcher(program, launcher, unknown) if path is None else ""
    ignored = (ignored_mpiexec(launcher, cluster) or unseen_mpiexec(launcher, cluster)
               or unfound_mpiexec(launcher, cluster, path))
    said = check_launch_path(program, launcher, cluster, hint, scheduler, path)
    return "; ".join(note for note in (said, unchecked, ignored) if note)


def job_launch_path(cluster) -> tuple[str | None, str]:
    """(the PATH a script's job has at its launch line, "") or (None, why it is not known):
    this process's, after the cluster file's ``preamble`` and ``modules`` where they are the
    module system's own lines (:func:`~hpcds1mpi.launch.module_path.job_path`)."""
    from hpcds1mpi.launch.module_path import job_path

    lines = [*(getattr(cluster, "preamble", None) or []),
             *(f"module load {name}" for name in getattr(cluster, "modules", None) or [])]
    return job_path(lines) if lines else (os.environ.get("PATH"), "")


def unchecked_launcher(program: list[str], launcher, unknown: str) -> str:
    """The note on a script's bare ``mpiexec``/``mpirun`` whose file the cluster file's
    preamble or modules choose where that cannot be told here (``unknown``: why), naming the
    launcher of the program's MPI to set instead (s36 tester M1: it ran an MPICH program as
    two 1-rank copies, unsaid); "" for srun or a launcher given by its path."""
    from hpcds1mpi.launch.mpi_family import candidates, library_file, program_mpi
    from hpcds1mpi.launch.mpi_names import FAMILY_NAMES

    command = getattr(launcher, "command", "")
    if getattr(launcher, "name", "") == "srun" or not command or "/" in command:
        return ""
    said = (f"the script's {command} is whichever the cluster file's preamble / modules put "
            f"first on the job's PATH, which is not checked here ({unknown})")
    found = program_mpi(program)
    if found.family not in FAMILY_NAMES:
        return f"{said}: check `which {command}` in the job"
    own = candidates(found.family, library=library_file(found))
    fix = (f'set launcher = "mpiexec" and mpiexec = "{own[0]}" in the cluster file' if own
           else f"give the path of its launcher as mpiexec in the cluster file")
    return (f"{said}; the program is linked against {FAMILY_NAMES[found.family]} "
            f"({found.evidence}): to launch it with a known launcher of that family, {fix}")


def check_launch_path(program: list[str], launcher, cluster, hint: str, scheduler: str,
                      path: str | None) -> str:
    """:func:`check_launch` with the job's PATH (``path``; None: unknown)."""
    from hpcds1mpi.launch.given_launcher import wrapped_launcher
    from hpcds1mpi.launch.script_launcher_mpi import check_script

    program = ranks_program_words(program, launcher, path)
    if none := not_launcher(program, launcher, path):  # as the sweep refuses it (s32 X2)
        if scheduler == "slurm":
            raise ConfigError(none)
        return (f"warning: {none}, unless it is this site's own mpiexec wrapper (check that it "
                "starts the program as one job)")
    refused, said = path_launcher(launcher, path)
    if refused and scheduler == "slurm":
        raise ConfigError(refused)
    said = f"warning: {refused}" if refused else said
    if scheduler != "slurm" and path is not None:
        _refuse_launch(program, launcher, cluster, hint, None)  # what holds on any PATH
        try:
            check_script(program, launcher, path, wrapped_launcher)
        except ConfigError as exc:
            return (f"warning: {exc}, if the job's PATH is this one (qsub does not pass it; "
                    "check with qsub -V or set mpiexec in the cluster file)")
        return said
    _refuse_launch(program, launcher, cluster, hint, path)
    return said


def path_launcher(launcher, path: str | None) -> tuple[str, str]:
    """(a refusal, a note) for a script's ``mpiexec`` that is a script running a launcher by
    bare name (:func:`~hpcds1mpi.launch.given_launcher.bare_launcher`; s35 tester I4: Intel
    MPI's ``bin/mpirun`` ran Debian's ``/usr/bin/mpiexec.hydra`` under ``sbatch
    --export=NONE``): refused where this PATH (``path``; None: the job changes it) finds
    another than the one beside it, else said, naming that one to set; ("", "") otherwise."""
    from hpcds1mpi.launch.given_launcher import bare_launcher, path_launcher_refusal

    command = getattr(launcher, "command", "")
    if getattr(launcher, "name", "") == "srun" or not command:
        return "", ""
    found = command if "/" in command else (shutil.which(command, path=path) if path else None)
    bare = bare_launcher(found) if found else None
    if bare is None:
        return "", ""
    fix = _SET_MPIEXEC
    if path is not None and (refused := path_launcher_refusal(
            "the script's launcher" if found == command else f"the script's {command}, here",
            found, fix, {"PATH": path})):
        return refused, ""
    if found == command:  # the script puts its folder first on PATH (scripts._own_path)
        return "", ""
    return "", (f"the script's {command} is a script that runs {bare[0]} as the job's PATH "
                f"finds it (sbatch --export=NONE or a module may give another MPI's): to "
                f"launch the one beside it whatever that PATH, "
                f"{fix.format(found)}")


def ranks_program_words(program: list[str], launcher, path: str | None) -> list[str]:
    """``program`` with its bare program word written as the file the ranks of ``launcher``
    find where Open MPI's ``mpirun`` written by its path puts its prefix's ``bin`` first on
    their PATH (s33 tester B4: ``/usr/bin/mpirun.openmpi ... python3`` runs
    ``/usr/bin/python3``, but the venv's ``python3`` first on ``path`` was refused as an MPICH
    program, with a fix that then failed); ``program`` itself otherwise."""
    from hpcds1mpi.launch.exec_wrappers import program_index
    from hpcds1mpi.launch.rank_program import rank_environment

    command = getattr(launcher, "command", "")
    at = program_index(list(program)) if program else 0
    if path is None or not command or getattr(launcher, "name", "") == "srun" \
            or at >= len(program) or "/" in program[at]:
        return program
    ranks = rank_environment(command, tuple(getattr(launcher, "args", ())), {"PATH": path})
    if ranks.get("PATH") == path:
        return program
    found = shutil.which(program[at], path=ranks.get("PATH"))
    return [*program[:at], found, *program[at + 1:]] if found else program


def not_launcher(program: list[str], launcher, path: str | None) -> str:
    """The refusal of a script's ``mpiexec``/``mpirun`` that is found here and is no MPI
    launcher: its ``--version`` names none, nor is it a script around one
    (:func:`~hpcds1mpi.launch.given_launcher.wrapped_launcher`); s32 tester X2: a cluster
    file's ``mpiexec = "/bin/echo"`` was written as the script's launcher. "" where it is
    one, or srun, or not found here (a bare name is looked up on ``path``; None: unknown)."""
    from hpcds1mpi.launch.mpi_family import launcher_family, program_mpi
    from hpcds1mpi.launch.given_launcher import refusal, wrapped_launcher

    command = getattr(launcher, "command", "")
    if getattr(launcher, "name", "") == "srun" or not command:
        return ""
    found = command if "/" in command else (shutil.which(command, path=path) if path else None)
    if not found or not os.path.isfile(found) or launcher_family(found) \
            or wrapped_launcher(found):
        return ""
    given = f"the script's {command}" + (f" (here {found})" if found != command else "")
    return refusal(given, found, _SET_MPIEXEC, program_mpi(program))


def _refuse_launch(program: list[str], launcher, cluster, hint: str, path) -> None:
    """:func:`check_launch`'s refusal, with the fix of a cluster not from a file."""
    from hpcds1mpi.launch.given_launcher import wrapped_launcher
    from hpcds1mpi.launch.script_launcher_mpi import check_script

    try:
        check_script(program, launcher, path, wrapped_launcher)
    except ConfigError as exc:
        origin = not_from_file(cluster)
        if "in the cluster file" not in str(exc) or (origin is None and not hint):
            raise
        given = "" if origin is None else (f"; no cluster file was given{origin}: write one "
                                           "with those keys under [cluster] and pass it with "
                                           "--cluster FILE")
        raise ConfigError(f"{exc}{given}{hint}") from None


def not_from_file(cluster) -> str | None:
    """Where ``cluster`` came from when no cluster file gave it (None when one did): none
    (""), this Slurm allocation (``allocated_cores_per_node``, which no cluster file sets) or
    this machine (:func:`hpcds1mpi.cluster.detect_local`'s "local" partition, no site keys)."""
    if cluster is None:
        return ""
    if any(p.allocated_cores_per_node is not None for p in cluster.partitions.values()):
        return " (the partition was read from this Slurm allocation, which says nothing of " \
               "its MPI)"
    if cluster.name == "local" and list(cluster.partitions) == ["local"] and \
            not (cluster.launcher or cluster.mpiexec or cluster.preamble or cluster.modules):
        return " (the partition is this machine, which says nothing of its MPI)"
    return None
