"""Launchers: one class per way of starting an MPI job, the same object for every use.

A launcher gives

* :meth:`Launcher.tokens`: the argv (without the program) that starts one Configuration, here
  (the sweep's program mode, System 2) and in batch scripts (``srun --nodes=2 ... -c 2``);
* :meth:`Launcher.total_tokens`: ``ranks`` ranks as the launcher lays them out (the sweep
  supervisor); :meth:`Launcher.environment`: the program's environment, with its binding.

:class:`Srun` (Slurm), :class:`HydraMpiexec` (MPICH, Intel MPI), :class:`OpenMpiMpirun` (Open
MPI) launch on this machine; :class:`Mpiexec` is a site's ``mpiexec``/``mpirun`` of unknown
flavour, as a PBS script writes it (placement comes from the ``select`` chunks).
:func:`local` picks one for this machine (what it offers: :mod:`~.launcher_discovery`),
:func:`for_script` for a batch script. The options
that give Open MPI's ranks the cores of their threads are :mod:`~.open_mpi_binding`'s.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from typing import Sequence

from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError, LaunchError
from hpcds1mpi.launch import launcher_discovery as discovery, program
from hpcds1mpi.launch.hydra_binding import hydra_binding, hydra_thread_args
from hpcds1mpi.launch.intel_pinning import (bind_to_note, is_intel, own_binding, own_tokens,
                                            pinning_binding, pinning_note, pinning_text,
                                            user_pinning, what_pins_do)
from hpcds1mpi.launch.open_mpi_binding import (UNBIND_OPEN_MPI, ThreadBinding, binds_its_own,
                                               open_mpi_thread_binding)
from hpcds1mpi.launch.srun_overcommit import overcommit_note, overcommit_tokens
from hpcds1mpi.runtime import site_binding

#: Launcher kinds a user may ask for on this machine (``--launcher``).
LAUNCHERS = ("srun", "mpiexec")
#: Launcher commands a cluster file may name for its batch scripts.
SCRIPT_LAUNCHERS = ("srun", "mpiexec", "mpirun")
_MPI_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


class Launcher:
    """Starts MPI jobs. Subclasses give the tokens; ``binds_cores`` says whether each rank is
    bound to its own cores (which decides the OpenMP binding variables). ``args`` are the
    user's own launcher options (``--launcher-args``, the cluster file's ``launcher_args``),
    written after the launcher's placement options and before the program."""

    name = ""
    binds_cores = False
    args: tuple = ()

    def notes(self, config: Configuration) -> list[str]:
        """What this launcher adds on its own for ``config`` and why (said to the user)."""
        return []

    def run_notes(self, config: Configuration) -> list[str]:
        """:meth:`notes` and the shell's binding variables the runs were not given (s36 E2)."""
        note = site_binding.left_out_note("OMP_PLACES" in self.environment(config), self.name)
        return self.notes(config) + ([note] if note else [])

    def script_lines(self, config: Configuration) -> list[str]:
        """Shell lines a batch script runs before this launcher's line for ``config``."""
        return []

    def tokens(self, config: Configuration) -> list[str]:
        """The argv, without the program, that runs ``config`` (nodes x ranks x threads)."""
        raise NotImplementedError

    def total_tokens(self, ranks: int) -> list[str]:
        """The argv that starts ``ranks`` ranks laid out however the launcher chooses."""
        raise NotImplementedError

    def environment(self, config: Configuration, extra: dict | None = None) -> dict[str, str]:
        """The program's environment for ``config`` under this launcher."""
        return program.environment(config, binds_cores=self.binds_cores, extra=extra)

    def binding(self, config: Configuration) -> str:
        """How this launcher binds the ranks of ``config``, as the telemetry's ``binding``
        records it (what :meth:`notes` says follows it there)."""
        return "srun --cpu-bind=cores" if self.binds_cores else f"{self.name} default"


@dataclass
class Srun(Launcher):
    """Slurm's ``srun``, with the ``--mpi`` plugin ``mpi`` (none when empty)."""

    mpi: str = "pmi2"
    args: tuple = ()
    cores: int | None = None  # the CPUs the allocation gives a node: --overcommit above them
    name = "srun"
    binds_cores = True

    def __post_init__(self) -> None:
        self.args = tuple(self.args)
        if self.mpi and not _MPI_RE.match(self.mpi):
            raise ConfigError(f"srun --mpi value {self.mpi!r} has characters not allowed "
                              "(use letters, digits, _ and - only)")

    def _plugin(self) -> list[str]:
        return [f"--mpi={self.mpi}"] if self.mpi else []

    def tokens(self, config: Configuration) -> list[str]:
        # --ntasks: a step inherits SLURM_NTASKS of a larger allocation and would ask for that
        # many tasks. -c: Slurm 22.05 srun does not inherit --cpus-per-task. --cpu-bind=cores
        # gives each rank its own cores. --kill-on-bad-exit: one dead rank (e.g. a failed PMI
        # wire-up) ends the step instead of stranding the others in MPI calls.
        return ["srun", f"--nodes={config.nodes}", f"--ntasks={config.ranks}",
                f"--ntasks-per-node={config.ranks_per_node}", "-c", str(config.threads),
                "--cpu-bind=cores", "--kill-on-bad-exit=1", *self._plugin(),
                *overcommit_tokens(config, self.cores, self.args), *self.args]

    def notes(self, config: Configuration) -> list[str]:
        return [n for n in [overcommit_note(config, self.cores, self.args)] if n]

    def total_tokens(self, ranks: int) -> list[str]:
        return ["srun", "-n", str(ranks), *self._plugin(), *self.args]


@dataclass
class Mpiexec(Launcher):
    """An ``mpiexec``/``mpirun`` of unknown flavour: ``-n ranks`` only, placement left to the
    scheduler's integration (PBS ``select`` chunks). Ranks are not bound by these tokens."""

    command: str = "mpiexec"
    args: tuple = ()
    #: Ranks per node given at one node too: a sweep's launch (:func:`local`) may run in an
    #: allocation of more nodes, whose slots hydra and mpirun fill node by node (s36 M0).
    hold: bool = False
    name = "mpiexec"

    def __post_init__(self) -> None:
        self.args = tuple(self.args)

    def tokens(self, config: Configuration) -> list[str]:
        return [self.command, "-n", str(config.ranks), *self._own(config.ranks_per_node),
                *self._per_node(config), *self._args(config)]

    def _args(self, config: Configuration) -> tuple:
        return self.args  # the user's options, as given

    def _own(self, ranks_per_node: int) -> list[str]:
        """Options this flavour needs on this machine (root, oversubscription)."""
        return []

    def _per_node(self, config: Configuration) -> list[str]:
        return []

    def total_tokens(self, ranks: int) -> list[str]:
        return [self.command, "-n", str(ranks), *self._own(ranks), *self.args]

    def script_lines(self, config: Configuration) -> list[str]:
        # Open MPI's mpirun refuses root unless told by its own variables; a script cannot
        # know who runs it, so it asks at run time (other MPIs ignore these variables).
        return [*self._thread_lines(config),
                'if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 '
                'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi']

    def _thread_lines(self, config: Configuration) -> list[str]:
        """Lines that keep a rank's threads off one shared core whichever MPI this is:
        Open MPI 4.1's mpirun binds each rank of a small job to one core, its binding policy
        read from the environment undoes that, MPICH / Intel MPI ignore the variable (hydra
        binds nothing by default). The user's own binding options win."""
        if config.threads <= 1 or binds_its_own(self.args):
            return []
        return [f"# {config.threads} threads per rank: if the launcher below is Open MPI's, "
                "it binds each rank to one core, which its threads would share; the next "
                "line unbinds them (MPICH and Intel MPI ignore it). For a core set per rank "
                f"under Open MPI, give --map-by slot:PE={config.threads} (launcher_args).",
                f"export {UNBIND_OPEN_MPI}=none"]


@dataclass
class HydraMpiexec(Mpiexec):
    """MPICH's / Intel MPI's hydra ``mpiexec``: ``-ppn`` places ranks per node.

    Intel MPI's (``intel``) pins ranks itself, by its own count of ranks per node (under Slurm
    the job's, not the step's: s35 tester I1), and ignores ``-bind-to``: each rank gets its
    threads' cpus through ``I_MPI_PIN_DOMAIN`` unless the user set their own ``I_MPI_PIN*``
    (:mod:`~.intel_pinning`); ``cores``: a node's, to say where ranks share them. Threads move
    within their rank's domain: OMP_PROC_BIND would bind the first one (and sched_getaffinity
    of the rank) to one cpu of it."""

    intel: bool = False
    cores: int | None = None

    def _pins(self) -> dict:
        """The user's own I_MPI_PIN* settings (none for MPICH's hydra, which reads none)."""
        return user_pinning(os.environ, self.args) if self.intel else {}

    def _pins_own(self) -> bool:
        """Whether the launch gives Intel's ranks their domains (I_MPI_PIN_DOMAIN=omp)."""
        return self.intel and not self._pins()

    def _thread_lines(self, config: Configuration) -> list[str]:
        return []  # hydra binds nothing by default: a rank's threads have the node's cores

    def _per_node(self, config: Configuration) -> list[str]:
        ppn = ["-ppn", str(config.ranks_per_node)] if config.nodes > 1 or self.hold else []
        return ppn + (own_tokens() if self._pins_own() else [])

    def _args(self, config: Configuration) -> tuple:  # -bind-to core:T (s31 tester P3)
        if self.intel:  # Intel's mpiexec ignores -bind-to: left as given (s35 tester I3b)
            return self.args
        return hydra_thread_args(self.args, config.threads)[0]

    def binding(self, config: Configuration) -> str:
        if self.intel:
            pins = self._pins()
            return pinning_binding(self.name, pins) if pins else own_binding(
                self.name, config.ranks_per_node, config.threads, self.cores)
        return hydra_binding(self.name, self.args, config.threads) or super().binding(config)

    def oversubscribed_as(self) -> str | None:
        """How ranks that overfill a node run under Intel's pinning, for the sweep's line on
        them (s35 tester I3c: it said "unbound" where Intel pinned each to one core); None
        for MPICH's hydra, which leaves them unbound."""
        if not self.intel:
            return None
        pins = self._pins()
        return (f"Intel MPI pins them by the user's {pinning_text(pins)} ({what_pins_do(pins)})"
                if pins else "Intel MPI pins each rank to a domain of its threads' cpus, "
                "which the ranks share")

    def notes(self, config: Configuration) -> list[str]:
        if self.intel:
            pins = self._pins()
            said = [pinning_note(pins)] if pins else []
            return [n for n in [*said, bind_to_note(self.args, pins)] if n]
        return [n for n in hydra_thread_args(self.args, config.threads)[1:] if n]


@dataclass
class OpenMpiMpirun(Mpiexec):
    """Open MPI's ``mpirun``/``mpiexec``: ``--map-by ppr:R:node`` places ranks per node.

    Asked for explicitly and said (:meth:`notes`), as Open MPI refuses them: running as root
    (``as_root``: ``--allow-run-as-root``) and more ranks on a node than its ``cores``
    (``--oversubscribe``; unknown cores: never). Several threads per rank get their cores
    (:func:`open_mpi_thread_binding`), also said.
    """

    as_root: bool = False
    cores: int | None = None

    def _own(self, ranks_per_node: int) -> list[str]:
        own = ["--allow-run-as-root"] if self.as_root else []
        if self.cores and ranks_per_node > self.cores:
            own.append("--oversubscribe")
        return own

    def _threads(self, config: Configuration) -> ThreadBinding:
        return open_mpi_thread_binding(config, self.cores, self.args, per_node=self.hold)

    def _thread_lines(self, config: Configuration) -> list[str]:
        return []  # its options place the threads (_threads): nothing left to guess

    def _per_node(self, config: Configuration) -> list[str]:
        return list(self._threads(config).tokens)

    def environment(self, config: Configuration, extra: dict | None = None) -> dict[str, str]:
        return program.environment(config, binds_cores=self._threads(config).binds_cores,
                                   extra=extra)

    def binding(self, config: Configuration) -> str:
        if self._threads(config).note:
            return f"{self.name} {' '.join(self._threads(config).tokens)}"
        if config.threads > 1 and binds_its_own(self.args):
            return f"{self.name} {shlex.join(self.args)} (the user's launcher options)"
        return super().binding(config)

    def notes(self, config: Configuration) -> list[str]:
        said = []
        if self.as_root:
            said.append("running as root: Open MPI's mpirun is given --allow-run-as-root")
        if self.cores and config.ranks_per_node > self.cores:
            said.append(f"{config.ranks_per_node} ranks on a node of {self.cores} cores: "
                        "Open MPI's mpirun is given --oversubscribe (ranks share cores)")
        if self._threads(config).note:
            said.append(self._threads(config).note)
        return said


def library_version(path: str) -> str:
    """The launcher's version line, e.g. ``"mpiexec Version: 4.2.0"``, for the fingerprint
    (:func:`~hpcds1mpi.launch.mpi_names.launcher_version_line`: never a help box's frame)."""
    from hpcds1mpi.launch.mpi_names import launcher_version_line

    text = discovery.version_text(path)
    if text is None:  # cannot run: the fingerprint has said "unknown" for this since it began
        return "unknown"
    return f"{os.path.basename(path)} {launcher_version_line(text)}"


def parse_args(text: str | None, what: str = "--launcher-args", script: bool = False
               ) -> tuple[str, ...]:
    """A launcher-options string split like a POSIX shell (quotes honoured), checked;
    ``script``: for a job script, not a sweep (the refusal's fix, s36 review 2).

    Raises:
        ConfigError: unbalanced quotes, a control character, or an option that sets what a
            configuration sets (the rank count, threads: s36 tester M3).
    """
    from hpcds1mpi.launch.owned_options import refuse_owned

    if not text:
        return ()
    program.no_control(text, what)
    try:
        words = tuple(shlex.split(text))
    except ValueError as exc:
        raise ConfigError(f"{what} {text!r} cannot be parsed ({exc}); fix its quoting") from None
    refuse_owned(words, what, script)
    return words


def local(launcher: str | None = None, *, mpi: str = "pmi2", mpiexec: str | None = None,
          args: Sequence[str] = (), cores: int | None = None) -> Launcher:
    """The launcher that starts jobs on this machine.

    Args:
        launcher: ``"srun"`` or ``"mpiexec"``; detected when None (:func:`detect`); a given
            ``mpiexec`` path means ``"mpiexec"``.
        mpi: srun's ``--mpi`` plugin.
        mpiexec: path of mpiexec (found when None); its flavour is asked once.
        args: the user's launcher options, after the launcher's own.
        cores: cores per node (Open MPI's ``--oversubscribe`` when ranks exceed them, srun's
            ``--overcommit`` when ranks x threads do).

    Raises:
        LaunchError: an unknown launcher, or no mpiexec.
    """
    launcher = launcher or ("mpiexec" if mpiexec else discovery.detect())
    if launcher == "srun":
        return Srun(mpi, tuple(args), cores=cores)
    if launcher == "mpiexec":
        path = mpiexec or discovery.mpiexec_path()
        if discovery.mpiexec_flavor(path) == "openmpi":
            root = hasattr(os, "geteuid") and os.geteuid() == 0
            return OpenMpiMpirun(path, tuple(args), hold=True, as_root=root, cores=cores)
        return HydraMpiexec(path, tuple(args), hold=True,
                            intel=is_intel(discovery.version_text(path)), cores=cores)
    raise LaunchError(f"unknown launcher {launcher!r}; use one of {', '.join(LAUNCHERS)}")


#: The schedulers a batch script can be written for.
SCHEDULERS = ("slurm", "pbs")


def check_scheduler(scheduler: str) -> str:
    """``scheduler`` if a script can be written for it, else :class:`ConfigError`."""
    if scheduler not in SCHEDULERS:
        raise ConfigError(f"--emit must be one of {', '.join(SCHEDULERS)}, got {scheduler!r}")
    return scheduler


def for_script(scheduler: str, cluster=None, cores: int | None = None) -> Launcher:
    """The launcher a batch script for ``scheduler`` writes: ``srun`` under Slurm, ``mpiexec``
    under PBS, unless the cluster file's ``launcher`` key names another; srun's ``--mpi`` from
    the cluster file (default pmi2); the cluster file's ``mpiexec`` (a path) in place of the
    ``mpiexec``/``mpirun`` name and its ``launcher_args`` after the launcher's own options.

    An ``mpiexec`` path that is Open MPI's here gives :class:`OpenMpiMpirun` (``cores``: the
    partition's cores per node), so a rank's threads get cores of their own as in the sweep
    (:func:`open_mpi_thread_binding`); root is asked at run time by :meth:`script_lines`. A
    bare name is whatever the job's PATH gives there: flavour unknown, :class:`Mpiexec`.

    Raises:
        ConfigError: an unknown launcher or a bad ``--mpi`` value.
    """
    check_scheduler(scheduler)
    name = (getattr(cluster, "launcher", "") or "") if cluster is not None else ""
    name = name or ("srun" if scheduler == "slurm" else "mpiexec")
    if name not in SCRIPT_LAUNCHERS:
        raise ConfigError(f"launcher {name!r} unknown; use one of {', '.join(SCRIPT_LAUNCHERS)}")
    args = parse_args(getattr(cluster, "launcher_args", ""), "the cluster file's launcher_args",
                      script=True)
    if name == "srun":  # no cores: the script's job asks what its step needs
        return Srun((getattr(cluster, "mpi", "") or "pmi2") if cluster is not None else "pmi2",
                    args)
    command = getattr(cluster, "mpiexec", "") or name
    if _open_mpi_here(command):
        return OpenMpiMpirun(command, args, as_root=False, cores=cores)
    if "/" in command and os.path.isfile(command) and is_intel(discovery.version_text(command)):
        return HydraMpiexec(command, args, intel=True, cores=cores)  # s35 tester I1
    return Mpiexec(command, args)


def _open_mpi_here(command: str) -> bool:
    """Whether ``command`` is a path to Open MPI's launcher on this machine."""
    # mpiexec_flavor, not mpi_family.launcher_family: mpi_family imports this module.
    return "/" in command and os.path.isfile(command) \
        and discovery.mpiexec_flavor(command) == "openmpi"
