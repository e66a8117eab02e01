""""Sweep one configuration": the one description of a one-configuration ``hpcds1mpi sweep``.

A calibration script's step, System 2's launched run and System 2's in-process run all measure
one workload at one size on one configuration. :class:`SweepStep` says how, once:

* :meth:`SweepStep.options` — the sweep options (``sizes``, ``nodes``, ...);
* :meth:`SweepStep.sweep_args` — them as ``hpcds1mpi sweep`` arguments (scripts, launches);
* :meth:`SweepStep.plan_doc` — them as a plan document for an in-process sweep;
* :meth:`SweepStep.command` — the whole command line: a kernel's sweep runs in-process, so it
  is started under the launcher; a program's sweep launches the program itself once per
  configuration (:mod:`hpcds1mpi.measure.external`), so it is started alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.launchers import Launcher
from hpcds1mpi.launch.program import no_control, quote_tokens

#: A program's reading options (``sweep --time-regex`` ...), where it runs and what prepares
#: that folder first (``--setup``), written only when used; the one list of them: the
#: telemetry's ``launch`` attribute records them, each external row carries them
#: (``records.telemetry_rows.measure_options``), the bundle reads them back
#: (``surrogates.levels``), ``recommend`` and the service take them for a calibration sweep.
READING_KEYS = ("time_regex", "fom_regex", "ranks_regex", "output_file", "workdir", "setup",
                "fail_regex")
#: Reading keys added after records of programs existed: a record without one was written
#: before the option was, so it used none ("") -- never "the record is incomplete".
ABSENT_IS_NONE = ("fail_regex", "setup")
#: Measurement options written only when set (None = the sweep's own default).
_MEASURE_OPTIONS = ("min_time", "min_repeats", "max_repeats", "warmup", "timeout", "snapshot_every")


@dataclass
class SweepStep:
    """How one configuration of a workload is measured.

    Attributes:
        workload: a kernel's name, or the label of ``program``.
        size: the problem size.
        min_time / min_repeats / max_repeats / warmup / timeout / snapshot_every: the sweep's
            options; None leaves the sweep's default.
        program: a user's program (command line or tokens) instead of a kernel.
        measure: how the program's output is read and where it runs, as its earlier sweep
            did: ``{"time_regex": .., "fom_regex": .., "ranks_regex": .., "output_file": ..,
            "workdir": .., "fail_regex": .., "setup": ..}`` (:data:`READING_KEYS`, any subset;
            "" or None: not used). A step measuring the program otherwise than the runs a model learned
            from would mix two runtimes in it (or count a run that did not converge as ok).
    """

    workload: str
    size: int
    min_time: float | None = None
    min_repeats: int | None = None
    max_repeats: int | None = None
    warmup: int | None = None
    timeout: float | None = None
    program: str | Sequence[str] | None = None
    snapshot_every: float | None = None
    measure: dict | None = None

    def command_line(self) -> str | None:
        """The program as one command line (placeholders unfilled), or None for a kernel."""
        if self.program is None:
            return None
        text = self.program if isinstance(self.program, str) else quote_tokens(self.program)
        return no_control(text, "program")

    def options(self, config: Configuration) -> dict:
        """The sweep options measuring ``config``: ``{"kernel"|"command": ..., "sizes": [..],
        "nodes": [..], ..., "min_time": ..}`` (unset measurement options left out)."""
        if not isinstance(self.size, int) or self.size <= 0:
            raise ConfigError(f"size must be a positive integer, got {self.size!r}")
        head = {"kernel": self.workload} if self.program is None else \
            {"command": self.command_line(), "label": self.workload, **self._readings()}
        options = {**head, "sizes": [self.size], "nodes": [config.nodes],
                   "ranks_per_node": [config.ranks_per_node], "threads": [config.threads],
                   "devices": [config.device], "precisions": [config.precision]}
        for key in _MEASURE_OPTIONS:  # a program is repeated and warmed up like a kernel
            if getattr(self, key) is not None:
                options[key] = getattr(self, key)
        return options

    def _readings(self) -> dict:
        """The program's reading options that are used (:data:`READING_KEYS` order), checked."""
        given = self.measure or {}
        unknown = set(given) - set(READING_KEYS)
        if unknown:
            raise ConfigError(f"unknown reading option(s) {sorted(unknown)}; known: "
                              f"{', '.join(READING_KEYS)}")
        return {k: no_control(str(given[k]), "--" + k.replace("_", "-"))
                for k in READING_KEYS if given.get(k)}

    def sweep_args(self, config: Configuration, out: str, *, progress: bool = True,
                   cluster_file: str | None = None, partition: str | None = None) -> list[str]:
        """The ``hpcds1mpi sweep`` arguments (after ``sweep``) measuring ``config`` into
        ``out``, resuming (a rerun measures only what is missing)."""
        args = []
        for key, value in self.options(config).items():
            text = ",".join(str(v) for v in value) if isinstance(value, list) else str(value)
            args += [f"--{key.replace('_', '-')}", text]
        args += ["--out", out, "--resume"]
        if not progress:
            args.append("--no-progress")
        if cluster_file:
            args += ["--cluster", cluster_file]
        if partition:
            args += ["--partition", partition]
        return args

    def command(self, config: Configuration, launcher: Launcher, out: str, *,
                exe: str = "hpcds1mpi", **kwargs) -> list[str]:
        """The argv that measures ``config``: ``[launcher tokens] exe sweep ARGS``.

        A kernel's sweep is started under ``launcher`` (it runs in-process on the launched
        ranks); a program's sweep is started alone, as it launches the program itself.
        ``kwargs`` go to :meth:`sweep_args`.
        """
        if self.program is None:
            return [*launcher.tokens(config), exe, "sweep", *self.sweep_args(config, out, **kwargs)]
        # The program's sweep starts it with the same launcher (and srun plugin) as the script.
        how = ["--launcher", "srun", "--mpi", launcher.mpi] if launcher.name == "srun" \
            else ["--launcher", "mpiexec"]
        command = getattr(launcher, "command", "mpiexec")
        if launcher.name != "srun" and command != "mpiexec":  # the site's own mpirun
            how = ["--mpiexec", command]
        if launcher.args:  # the same launcher options as the script's own launch lines
            how += ["--launcher-args", quote_tokens(launcher.args)]
        return [exe, "sweep", *self.sweep_args(config, out, **kwargs), *how]

    def plan_doc(self, config: Configuration) -> dict:
        """The plan document (as a TOML plan file reads) of a kernel's one-configuration sweep.

        Raises:
            ConfigError: a program (it is swept through the external-program mode).
        """
        if self.program is not None:
            raise ConfigError("a program is swept by launching it, not in-process")
        options = self.options(config)
        kernel = {"name": options.pop("kernel")}
        kernel.update({k: options.pop(k) for k in ("sizes", "nodes", "ranks_per_node",
                                                   "threads", "devices", "precisions")})
        return {"sweep": options, "kernel": [kernel]}
