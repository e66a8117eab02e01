"""Before a program is launched: choose the launcher and prove it can start the program.

:func:`choose` turns the user's choice (``--launcher``, ``--mpiexec PATH``, ``--launcher-args``,
srun's ``--mpi``, the cluster file's ``mpiexec`` / ``launcher_args`` / ``mpi``) into one
:class:`~hpcds1mpi.launch.launchers.Launcher`; :func:`check` refuses, before anything runs, a
launcher that cannot start the program as one job: by the program's MPI
(:mod:`hpcds1mpi.launch.mpi_family`), for ``srun`` by whether it reaches a Slurm and has the
``--mpi`` plugin (:func:`check_srun`), and, for sweeps with more than one rank, by the 2-rank
launch probe (:mod:`hpcds1mpi.launch.probe`). The external sweep and System 2's launches of a
user's program both go through here; a check that passed is not made again in the same
process for the same launcher, options, program and environment (``tune --program`` launches
one sweep per trial: one probe per tune, not one per trial).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field

from hpcds1mpi.errors import ConfigError, LaunchError
from hpcds1mpi.launch import launcher_discovery, launchers, mpi_family, probe
from hpcds1mpi.launch.help_text import launcher_text
from hpcds1mpi.launch.mpi_installation import other_installation
from hpcds1mpi.launch.mpi_names import FAMILY_NAMES, MPICH, OPENMPI
from hpcds1mpi.launch.rank_program import rank_program


@dataclass
class LaunchChoice:
    """What the user said about launching (None / empty: not said)."""

    launcher: str | None = None
    mpi: str = "pmi2"
    mpiexec: str | None = None
    args: tuple = field(default_factory=tuple)
    #: a note on the cluster file's launch keys, where one goes unused ("": none)
    said: str = ""

    @classmethod
    def of(cls, *, launcher=None, mpi="pmi2", mpiexec=None, launcher_args=None,
           cluster_file=None, partition=None, program=None) -> "LaunchChoice":
        """The choice from the command line, the cluster file's settings filling what the
        command line leaves out (its ``launcher`` too: its ``mpiexec`` is used under
        ``mpiexec`` / ``mpirun``, not under ``srun``; s42). ``program``: the tokens of the program to launch, whose MPI's
        launcher a refused ``mpiexec`` names (None: not known; s32 tester X1).

        Raises:
            ConfigError: a bad ``--mpiexec`` (missing, not an MPI launcher) or unbalanced
                quotes in ``--launcher-args``.
        """
        from hpcds1mpi.cluster import launch_settings
        from hpcds1mpi.launch.given_launcher import check_mpiexec

        site = launch_settings(cluster_file, partition)
        args = launchers.parse_args(launcher_args) if launcher_args is not None else \
            launchers.parse_args(site["launcher_args"], "the cluster file's launcher_args")
        if launcher is None and not mpiexec and site["launcher"]:  # as its scripts launch
            launcher = "srun" if site["launcher"] == "srun" else "mpiexec"  # (s42)
        said = ""
        if launcher == "srun" and site["mpiexec"] and not mpiexec:  # left unused, as in a script
            said = (f"the cluster file's mpiexec = {site['mpiexec']!r} is not used: "
                    + ('its launcher = "srun" launches' if site["launcher"] == "srun" else
                       "--launcher srun launches") + " the ranks")
        path = mpiexec or (site["mpiexec"] if launcher != "srun" else "") or None
        if path and not mpiexec:  # named with its file and cluster, as recommend names it
            from hpcds1mpi.cluster import resolve_cluster
            from hpcds1mpi.launch.cluster_mpiexec import unlaunchable_mpiexec

            if refused := unlaunchable_mpiexec(resolve_cluster(cluster_file, partition),
                                               list(program) if program else None):
                raise ConfigError(refused)
        if path:  # a refusal names where it came from (s32 tester X1: "--mpiexec" for both)
            path = check_mpiexec(
                path, given="--mpiexec" if mpiexec else "the cluster file's mpiexec",
                program=list(program) if program else None)
        if path and launcher == "srun":
            raise ConfigError("--mpiexec names an mpiexec/mpirun; it cannot be combined with "
                              "--launcher srun")
        return cls(launcher or ("mpiexec" if path else None), mpi or site["mpi"], path, args,
                   said)

    def started_by(self, launcher: str | None) -> str:
        """What starts the ranks under this choice, where it is not srun, as a refusal of
        ``--mpi`` names it (:func:`refuse_unused_plugin`); "" where srun does. ``launcher``:
        the command line's ``--launcher``."""
        if (self.launcher or launcher_discovery.detect()) == "srun":
            return ""
        if launcher == "mpiexec":
            return "--launcher mpiexec"
        if self.mpiexec:
            return f"mpiexec ({self.mpiexec})"
        return ("the cluster file's launcher, mpiexec," if self.launcher else
                "outside a Slurm allocation mpiexec")

    def launcher_for(self, cores: int | None = None) -> launchers.Launcher:
        return launchers.local(self.launcher, mpi=self.mpi, mpiexec=self.mpiexec,
                               args=self.args, cores=cores)

    def describe(self, launch: launchers.Launcher) -> dict:
        """The launcher as the telemetry records it."""
        return {"launcher": launch.name, "command": getattr(launch, "command", "srun"),
                "flavour": type(launch).__name__, "args": list(launch.args),
                "mpi": self.mpi if launch.name == "srun" else ""}


def refuse_unused_plugin(mpi: str | None, started_by: str) -> None:
    """Refuse the command line's ``--mpi`` (srun's PMI plugin; None: not given) where
    ``started_by`` (:meth:`LaunchChoice.started_by`; "": srun) starts the ranks: it would have
    no effect (s44: under mpiexec it had been dropped silently), as the sweep refuses an option
    of the mode it is not in.

    Raises:
        ConfigError: ``--mpi`` given where srun does not start the ranks (exit 2).
    """
    if mpi is not None and started_by:
        raise ConfigError(f"--mpi {mpi} is srun's PMI plugin and has no effect here: "
                          f"{started_by} starts the ranks with its own process manager; drop "
                          "--mpi (it applies under --launcher srun, inside a Slurm allocation)")


def launcher_path(launch: launchers.Launcher, env: dict) -> str | None:
    """The launcher's executable, found on ``env``'s PATH (None: not found)."""
    head = getattr(launch, "command", "srun")
    return head if "/" in head and os.path.exists(head) else shutil.which(
        head, path=env.get("PATH"))


def srun_plugins(text: str) -> list[str]:
    """The plugin names in ``srun --mpi=list``'s output (Slurm 22+: tab-indented names and
    "specific pmix plugin versions available: pmix_v4"; older: ``srun: pmi2`` lines)."""
    names = []
    for line in text.splitlines():
        line = re.sub(r"^srun:\s*", "", line.strip())
        if "versions available:" in line:
            names += re.findall(r"[A-Za-z0-9_]+", line.split(":", 1)[1])
        elif re.fullmatch(r"[A-Za-z0-9_]+", line):
            names.append(line)
    return names


def _srun_says(err: str) -> str:
    """The line of a failed step's stderr that says why: a plugin that did not load (Slurm's
    "can not load PMIx library", Q4), else srun's first error, else its last line."""
    lines = [ln.strip() for ln in err.splitlines() if ln.strip()]
    return next((ln for ln in lines if re.search(r"(?i)(can ?not|couldn't) load", ln)),
                next((ln for ln in lines if "error:" in ln), lines[-1] if lines else ""))


def _step_fix(plugin: str, plugins: list[str], program, env: dict) -> str:
    """What to do where a one-task ``srun --mpi=plugin`` step failed: the other plugins that
    can start ``program``'s MPI (not another name of the failed one — ``pmix_v4`` for
    ``pmix`` —, nor ``none`` or a vendor's for a known family: s36 tester Q4 was told "none,
    cray_shasta, pmi2, pmix_v4" for Open MPI, whose sweep then refused pmi2), and its own
    launcher in place of srun."""
    family = getattr(program, "family", None)
    same = plugin.split("_")[0]
    others = [n for n in plugins if n != plugin and n.split("_")[0] != same]
    if family == OPENMPI:
        others = [n for n in others if n.startswith("pmix")
                  or (n == "pmi2" and not mpi_family.openmpi_pmi2_refusal(program, env))]
    elif family == MPICH:
        speaks = mpi_family.speaks_pmix(program, env) is not False
        others = [n for n in others if n == "pmi2" or (speaks and n.startswith("pmix"))]
    fix = f"pass another --mpi ({', '.join(others)})" if others else ""
    own = mpi_family.candidates(family, env, library=mpi_family.library_file(program, env)) \
        if family in (OPENMPI, MPICH) else []
    launcher = (f"--mpiexec {own[0]} in place of --launcher srun" if own else
                "--mpiexec PATH (the program's MPI launcher) in place of --launcher srun")
    return f"{fix}, or launch with {launcher}" if fix else f"launch with {launcher}"


def check_srun(path: str, launch: launchers.Launcher, env: dict, one_rank: bool,
               program=None, program_env: dict | None = None) -> list[str]:
    """Refuse an srun that cannot launch here, before anything runs; return what to say.

    ``srun --mpi=list`` fails where no Slurm is reachable, and names the plugins there are
    (an unknown ``--mpi`` had been recorded as failed runs, exit 0). With one rank no probe
    runs, so a one-task step with the plugin proves it loads (a listed plugin may not: pmix
    without its library). Outside an allocation srun makes a job per launch: said, not refused.

    Raises:
        ConfigError: no Slurm reachable, or a plugin srun does not have (exit 2).
        LaunchError: the one-task step fails (exit 1).
    """
    plugin = getattr(launch, "mpi", "")
    try:
        proc = subprocess.run([path, "--mpi=list"], capture_output=True, timeout=60, env=env,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        raise LaunchError(f"cannot run {path} --mpi=list ({exc}); nothing was launched") from None
    said = launcher_text(proc.stdout) + launcher_text(proc.stderr)
    if proc.returncode != 0:
        last = next((ln.strip() for ln in reversed(said.splitlines()) if ln.strip()), "")
        raise ConfigError(f"srun cannot reach a Slurm here ({last[:160]}); nothing was "
                          "launched: run inside an allocation on a Slurm cluster (salloc / "
                          "sbatch), or use --launcher mpiexec")
    plugins = srun_plugins(said)
    if plugin and plugins and plugin not in plugins:
        raise ConfigError(f"srun has no --mpi plugin {plugin!r}; `srun --mpi=list` names "
                          f"{', '.join(plugins)}: pass one with --mpi (or the cluster file's "
                          "mpi); nothing was launched")
    if one_rank and plugin:
        try:
            # bytes read as the sweep reads a launch's: a NUL the output ends with or a byte
            # that is no UTF-8 had been the reason, or a traceback
            step = subprocess.run([*launch.total_tokens(1), "true"], capture_output=True,
                                  timeout=120, env=env, stdin=subprocess.DEVNULL)
            code, err = step.returncode, launcher_text(step.stderr)
        except (OSError, subprocess.SubprocessError) as exc:
            code, err = "?", str(exc)
        if code != 0:
            raise LaunchError(f"a one-task srun --mpi={plugin} step failed (exit {code}: "
                              f"{_srun_says(err)[:200]}); nothing was measured: "
                              + _step_fix(plugin, plugins, program, program_env or env))
    lines = [f"a one-task srun --mpi={plugin} step ran"] if one_rank and plugin else []
    if not launcher_discovery.in_slurm(env):
        lines.append("not inside a Slurm allocation: each launch is a Slurm job of its own (its "
                     "wait counts in the launch's wall time); run inside salloc / sbatch")
    return lines


def say_notes(launch: launchers.Launcher, say, then=None):
    """A function of a configuration that says, once each, what ``launch`` adds on its own
    for it (:meth:`~hpcds1mpi.launch.launchers.Launcher.notes`: Open MPI's ``--oversubscribe``,
    ``--allow-run-as-root``), then returns ``then(config)`` (None without ``then``)."""
    said: set[str] = set()

    def note(config):
        for line in launch.notes(config):
            if line not in said:
                said.add(line)
                say(line)
        return then(config) if then is not None else None

    return note


#: Checks that passed in this process: key (:func:`_key`) -> the lines they said.
_PASSED: dict[tuple, list[str]] = {}


def _key(launch: launchers.Launcher, choice: LaunchChoice, path: str, env: dict,
         ranks: tuple[list[str], dict] | None, probed: bool) -> tuple:
    """What a check's verdict depends on: the launcher (its path, kind, options and 2-rank
    tokens), srun's plugin, the program (its file and when it last changed; ``ranks``: the
    program the ranks run, :func:`rank_program`'s) and the environment, less the variables
    every configuration sets for itself (the probe sets its own); ``probed``: whether the
    2-rank probe was part of it."""
    config = probe.probe_config()
    own = set(launch.environment(config))
    ranks = ranks or ([""], env)
    name = ranks[0][0] if ranks[0] else ""
    found = name if "/" in name else (shutil.which(name, path=ranks[1].get("PATH")) or name)
    try:
        changed = os.stat(found).st_mtime_ns
    except OSError:
        changed = None
    return (path, type(launch).__name__, tuple(launch.args), tuple(launch.tokens(config)),
            choice.mpi if launch.name == "srun" else "", os.path.realpath(found), changed,
            tuple(sorted((k, v) for k, v in env.items() if k not in own)), probed)


def check(launch: launchers.Launcher, choice: LaunchChoice, program_tokens: list[str],
          env: dict, max_ranks: int, ranks: tuple[list[str], dict] | None = None,
          cwd: str | None = None) -> list[str]:
    """Refuse a launcher that cannot start the program as one job; return what was found.

    A check that passed before in this process for the same launcher, program and
    environment (:func:`_key`) is not made again: its lines are returned, marked so.
    ``ranks``: :func:`rank_program`'s reading of ``program_tokens`` under ``launch``, where
    the caller has it (the sweep reads it once for every check and its fingerprint); None:
    read here. ``cwd``: the folder the program starts in (``--workdir``), where a relative
    program path is read (s33 tester D3: ``../../app_ompi`` was "not found", unchecked).

    Returns:
        Lines for the user: the program's MPI, the launcher's family, the probe's verdict, and
        whatever the launcher adds on its own.

    Raises:
        LaunchError: the launcher is not on PATH; it belongs to another MPI family than the
            program's (at any rank count); or (more than one rank) the 2-rank probe does not
            come up as one job.
    """
    path = launcher_path(launch, env)
    if path is None:
        raise LaunchError(f"launcher {getattr(launch, 'command', 'srun')!r} not found on PATH; "
                          "nothing was launched (install an MPI, or name one with --mpiexec)")
    # The program its ranks run, found on the PATH they get, past `env X=1`-like words (s30
    # tester K1, K4: `env` itself, or pyenv's python3 for the /usr/bin/python3 that ran)
    ranks = ranks or rank_program(program_tokens, env, getattr(launch, "command", ""),
                                  launch.args)
    from hpcds1mpi.launch.self_launching import ranks_in_folder

    key = _key(launch, choice, path, env, ranks_in_folder(ranks, cwd), max_ranks > 1)
    # A check with the probe covers one without (one rank needs no probe).
    earlier = _PASSED.get(key) or (None if key[-1] else _PASSED.get((*key[:-1], True)))
    if earlier is not None:
        return [f"{line} (checked earlier in this run)" for line in earlier]
    program_env = ranks[1] if ranks else env
    program = mpi_family.program_mpi(ranks[0] if ranks else program_tokens, program_env, cwd)
    # Even one rank: MPICH 5 aborts under Open MPI's mpirun ("unsupported PMI version PMIx"),
    # which was recorded as the program's failure (exit 16 and a line of dashes). srun's
    # plugin only matters for wiring up several ranks (one is a singleton under --mpi=none),
    # but for an Open MPI without Slurm's PMI: one rank of it aborts in MPI_Init under srun
    # whatever the plugin but pmix (s30 tester L2: Debian's Elk, every tune run failed).
    srun_mpi = choice.mpi if launch.name == "srun" else ""
    if max_ranks <= 1 and not (program.family == OPENMPI
                               and mpi_family.openmpi_pmi2_refusal(program, program_env)):
        srun_mpi = ""
    family = mpi_family.check_launcher(program, path, srun_mpi, program_env)
    lines = [f"program MPI: {program.describe()} ({program.evidence}); launcher: {path}"
             + (f" ({FAMILY_NAMES.get(family, family)})" if family else "")]
    if family == program.family and (other := other_installation(
            mpi_family.library_file(program, program_env), family, path)):
        lines.append(other)  # s35 tester I6: the MPICH wheel's hydra for Intel MPI's program
    if launch.name == "srun":
        lines += check_srun(path, launch, env, max_ranks <= 1, program, program_env)
    if max_ranks > 1:
        config = probe.probe_config()
        probe_env = {**env, **launch.environment(config)}
        lines.append(probe.run_probe(launch.tokens(config), probe_env, program.family))
    else:
        lines.append("one rank per launch: no probe needed (the launcher's family was checked)")
    _PASSED[key] = lines
    return list(lines)
