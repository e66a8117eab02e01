"""What one launch's process tree shows of the program: its memory, and whether its ranks ran
under the launch at all.

:class:`TreeSampler` samples the launch's descendants (psutil). The memory it keeps is the
largest single process *of the program* (a process whose executable, or whose script under an
interpreter, is the program's first token; ``sh -c '...'`` is ``sh``) and of the program's own
children, never the launcher's. A process the launcher started (a child of the launch's root
or of a launcher daemon) that is neither a launcher's helper nor a remote starter is a rank,
whatever its name, and a process once the program's stays the program's across ``exec``: the
ranks of a wrapper ``run.sh`` ending in ``exec simpleFoam`` are judged by lineage, not by name
(s29 tester A3: by name only, they were missed, or seen as the 0.02 MB shell before its exec).
Inside a Slurm allocation Open MPI's ``mpirun`` starts its daemons through ``srun``, so the
ranks run under ``slurmstepd`` and the launch's tree holds only ``mpirun`` and ``srun`` (13 MB,
0.09 s of CPU, recorded as the program's before: s28 tester U).
It also notes a starter of remote processes in the tree (``srun``, ``ssh``, ``rsh``): then some
or all ranks ran outside it, and :mod:`hpcds1mpi.measure.ranks_usage` takes their numbers from
Slurm's accounting or records them unknown.
"""

from __future__ import annotations

import os
import re
import shutil
import threading

from hpcds1mpi.launch.exec_wrappers import WRAPPER_NAMES

#: Executables that start a launch's processes outside its own process tree.
REMOTE_STARTERS = frozenset({"srun", "ssh", "rsh"})
#: Programs that only start the real one (``sh -c 'exec ./app'``, ``env``, ``numactl``: the
#: exec wrappers :mod:`~hpcds1mpi.launch.exec_wrappers` reads): under such a program every
#: process of the launch but the launcher's own is the program's.
WRAPPERS = frozenset({"sh", "bash", "dash", "zsh", "ksh", *WRAPPER_NAMES})
#: The launcher's own helpers, never the program: hydra's proxy, Open MPI's and PRRTE's
#: daemons, a launcher started by a launcher.
LAUNCHER_HELPERS = frozenset({"hydra_pmi_proxy", "hydra_bstrap_proxy", "orted", "prted",
                              "prterun", "mpirun",
                              "mpiexec", "mpiexec.hydra", "orterun", "mpirun.openmpi",
                              "mpiexec.openmpi", "mpirun.mpich", "mpiexec.mpich"})
#: Of those, the launchers that start a job of their own (not a daemon of one): one started
#: by a process of the program is a rank starting a job again (:attr:`TreeSampler.rank_launcher`).
JOB_LAUNCHERS = (LAUNCHER_HELPERS - {"hydra_pmi_proxy", "hydra_bstrap_proxy", "orted", "prted"}
                 ) | {"srun"}
#: Words of a launcher that only asks it something (``mpirun --version``), starting no job.
_ASKING = frozenset({"--version", "-V", "-version", "--help", "-h", "-help", "-info", "--info"})
#: A launcher's option giving how many processes it starts: what makes its line a job's, not
#: a tool's that merely names the launcher's file (``sha256sum $MPI_BIN/mpiexec``: the review
#: of s39, a sweep stopped 2 times in 3).
_COUNTED = re.compile(r"-n|-np|--np|-c|--n|-N|--ntasks|-n\d+|-np\d+|--(np|ntasks|n)=\d+")
#: An interpreter a launcher script runs under (``bash /usr/bin/mpirun ...``).
_INTERPRETERS = re.compile(r"(ba|da|z|k)?sh|python[\d.]*|perl")
#: Sampling period (s) for the launch's first :data:`FAST_FOR_S` seconds (a short program is
#: still seen), then :data:`PERIOD_S`.
FAST_PERIOD_S, FAST_FOR_S, PERIOD_S = 0.005, 0.3, 0.05


def program_names(program: str, env: dict | None = None, cwd: str | None = None) -> set[str]:
    """The names the program ``program`` (a command's first token) runs under: its own base
    name and that of the file it resolves to (``python3`` -> ``python3.11``); empty for ""."""
    if not program:
        return set()
    names = {os.path.basename(program)}
    if "/" in program:
        found = os.path.join(cwd, program) if cwd and not os.path.isabs(program) else program
    else:
        found = shutil.which(program, path=(env or os.environ).get("PATH"))
    if found:
        names.add(os.path.basename(os.path.realpath(found)))
    return names


#: What :func:`_judge` finds a process to be; :data:`UNEXECED`: a launcher's fork before its
#: ``exec`` (for one sample only).
PROGRAM, LAUNCHER, OTHER, UNEXECED = "program", "launcher", "", "unexeced"


def _judge(proc, names: set[str]) -> tuple[str, str]:
    """(what ``proc`` runs: :data:`PROGRAM`, :data:`LAUNCHER` or :data:`OTHER`; the remote
    starter it is or ""): its executable, its argv[0], or (a script under an interpreter,
    ``bash ./run.sh``) its argv[1] is named as the program is, as a launcher or its helper
    (:data:`LAUNCHER_HELPERS`), or as a starter of remote processes (:data:`REMOTE_STARTERS`)."""
    import psutil

    try:
        exe = os.path.basename(os.path.realpath(proc.exe() or ""))
        argv = proc.cmdline()
    except psutil.Error:
        return OTHER, ""
    called = {exe, *(os.path.basename(arg) for arg in argv[:2])}
    starter = next(iter(sorted(called & REMOTE_STARTERS)), "")
    if starter:
        return OTHER, starter
    if called & LAUNCHER_HELPERS:
        return LAUNCHER, ""
    if names & WRAPPERS:  # what the wrapper runs (exec'd before it was seen) is the program
        return PROGRAM, ""
    return (PROGRAM if called & names else OTHER), ""


def _exe_name(proc) -> str:
    import psutil

    try:
        return os.path.basename(proc.exe() or "")
    except psutil.Error:
        return ""


class TreeSampler:
    """Samples a launch's process tree until :meth:`stop`.

    Attributes:
        peak_mb: the largest resident memory of one process of the program (or its children),
            MB; 0.0 while none was seen.
        program_seen: a process of the program ran under the launch.
        remote_starter: after :meth:`stop`, the name of a process of the tree that starts
            processes outside it (``srun``: under ``slurmstepd``; ``ssh``) and has no process
            of the program under it, "" when none was seen.
        rank_launcher: the command line of a job launcher (:data:`JOB_LAUNCHERS`) that a
            process of the program started (``abyss-pe``'s own ``mpirun -np 2 ABYSS-P ...``,
            s38 tester A6), "" when none was seen: under the sweep's launcher every rank
            starts that job again.
    """

    def __init__(self, pid: int, names: set[str]):
        self.pid = pid
        self.names = names
        self.peak_mb = 0.0
        self.program_seen = False
        self.remote_starter = ""
        self.rank_launcher = ""
        self._starters: dict[int, str] = {}  # pid -> the remote starter it runs
        self._local_starters: set[int] = set()
        self._kinds: dict[tuple[int, str], tuple[str, str]] = {}  # (pid, exe) -> _judge
        self._program_pids: set[int] = set()  # pids seen running the program, before any exec
        # (process, exe) seen with its own command line: exec'd, never its launcher's fork again
        self._execed: set[tuple] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        import time

        import psutil

        try:
            root = psutil.Process(self.pid)
        except psutil.Error:
            return
        start = time.monotonic()
        while not self._stop.is_set():
            try:
                procs = [root, *root.children(recursive=True)]
            except psutil.Error:
                break
            self._sample(procs)
            fast = time.monotonic() - start < FAST_FOR_S
            self._stop.wait(FAST_PERIOD_S if fast else PERIOD_S)

    def _sample(self, procs: list) -> None:
        import psutil

        parent, kinds, exes = {}, {}, {}
        for proc in procs:
            # Judged once per (pid, executable): a forked child runs the launcher until exec.
            key = (proc.pid, _exe_name(proc))
            exes[proc.pid] = key[1]
            if key not in self._kinds and key[1]:
                self._kinds[key] = _judge(proc, self.names) if proc.pid != self.pid or \
                    not self.names & WRAPPERS else (LAUNCHER, "")  # the launcher itself
            kinds[proc.pid], starter = self._kinds.get(key, (OTHER, ""))
            if starter:
                self._starters.setdefault(proc.pid, starter)
            try:
                parent[proc.pid] = proc.ppid()
            except psutil.Error:
                continue
        self._skip_unexeced_forks(procs, parent, kinds, exes)
        for pid, kind in kinds.items():
            up = parent.get(pid)
            # Once the program's, or a rank whatever its name: `exec simpleFoam` (s29 tester A3).
            # Not what srun (the root, or its stub) runs: its own helpers, no ranks.
            if kind == OTHER and pid not in self._starters and (
                    pid in self._program_pids or kinds.get(up) == LAUNCHER
                    or up == self.pid and self.pid not in self._starters):
                kind = kinds[pid] = PROGRAM
            if kind == PROGRAM:
                self._program_pids.add(pid)
        ours = {pid for pid, kind in kinds.items() if kind == PROGRAM}
        for pid in ours:  # a starter the program runs under started it here (a stub srun)
            up = pid
            while up in parent:
                up = parent[up]
                self._local_starters.add(up)
        if not self.rank_launcher:
            self._find_rank_launcher(procs, parent, kinds, exes)
        for proc in procs:
            pid = proc.pid
            while pid in parent and pid not in ours:  # the program's own children count too
                pid = parent[pid]
            if pid not in ours:
                continue
            try:
                self.peak_mb = max(self.peak_mb, proc.memory_info().rss / 2**20)
                self.program_seen = True
            except psutil.Error:
                continue

    def _find_rank_launcher(self, procs: list, parent: dict, kinds: dict, exes: dict) -> None:
        """Sets :attr:`rank_launcher` from a job launcher among ``procs`` (judged a launcher or
        a remote starter this sample, ``kinds``; ``exes``: each pid's executable name) with a
        process of the program above it."""
        import psutil

        for proc in procs:
            if proc.pid == self.pid or not (kinds.get(proc.pid) == LAUNCHER
                                            or proc.pid in self._starters):
                continue
            up = parent.get(proc.pid)
            while up is not None and up not in self._program_pids:
                up = parent.get(up)
            if up is None:
                continue
            try:
                argv = proc.cmdline()
            except psutil.Error:
                continue
            # the launcher itself, or a script of it under its interpreter: never a tool
            # whose argument names the launcher's file
            names = [os.path.basename(arg) for arg in argv[:2]]
            launcher = exes.get(proc.pid) in JOB_LAUNCHERS or names[0] in JOB_LAUNCHERS or (
                len(names) > 1 and names[1] in JOB_LAUNCHERS and _INTERPRETERS.fullmatch(names[0]))
            if launcher and not _ASKING & set(argv[1:]) and \
                    any(_COUNTED.fullmatch(arg) for arg in argv[1:]):
                self.rank_launcher = " ".join(argv)
                return

    def _skip_unexeced_forks(self, procs: list, parent: dict, kinds: dict,
                             exes: dict) -> None:
        """Marks :data:`UNEXECED` a child of a launcher (or of a root whose children are the
        program) that is still its fork (same executable, same command line): it holds the
        launcher's memory until its ``exec`` (CI: a 150 MB launcher's fork was recorded as the
        20 MB program's peak); the same executable exec'd with other words is the program.
        ``exes``: each pid's executable name, read this sample."""
        import psutil

        by_pid = {proc.pid: proc for proc in procs}
        rooted = self.pid not in self._starters  # the root's children are ranks (_sample)
        for pid, up in parent.items():
            if pid == self.pid or up not in by_pid or not exes.get(pid) or \
                    exes.get(pid) != exes.get(up) or not (
                        kinds.get(up) == LAUNCHER or up == self.pid and rooted):
                continue
            # A psutil.Process is equal only to the same pid started at the same time: a
            # reused pid is asked again. Its exec is for good, so its command line is read
            # until it differs, not every sample (s31 review M4).
            execed = (by_pid[pid], exes[pid])
            if execed in self._execed:
                continue
            try:
                argv = by_pid[pid].cmdline()
                forked = argv == by_pid[up].cmdline()
            except psutil.Error:
                continue
            if forked:
                kinds[pid] = UNEXECED
            elif argv:  # [] (a zombie's) says nothing of an exec
                self._execed.add(execed)

    def stop(self) -> "TreeSampler":
        self._stop.set()
        self._thread.join()
        self.remote_starter = next((name for pid, name in self._starters.items()
                                    if pid not in self._local_starters), "")
        return self
