"""Batch scripts for Slurm and PBS Pro, in three roles kept apart (as ReFrame does).

* **scheduler directives** — :func:`slurm_directives`, :func:`pbs_directives`: the ``#SBATCH`` /
  ``#PBS`` lines of a job, as a list of strings (what the golden tests hold);
* **launcher tokens** — :func:`launcher_tokens`: ``srun -c T --cpu-bind=cores --mpi=..`` or
  ``mpiexec -n R``, as a list of argv tokens;
* **assembly** — :func:`render`: the Jinja2 templates in ``jobscripts/`` join directives,
  site preamble, module loads, environment and the launch line into a script.

Every value a user or a cluster file provides is checked before it reaches a script:

* values that land in ``#SBATCH``/``#PBS`` lines (job name, partition, account, QOS, output
  path) and module names must match a conservative pattern, because ``sbatch`` strips quotes
  and expands nothing there, and a newline would start a new directive or command;
* the program command line is split with :mod:`shlex` and every token re-quoted with
  :func:`shlex.quote`, so ``$()``, backticks, ``;`` and quotes in it reach the program as
  literal characters and never run in the job's shell;
* any control character (newline, carriage return, NUL, ...) anywhere is rejected.

A rejected value raises :class:`~hpcds1mpi.errors.ConfigError` with a one-line message.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from hpcds1mpi.config import Configuration, check_fits
from hpcds1mpi.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Cluster, Partition

SCHEDULERS = ("slurm", "pbs")

# Patterns for values that end up unquoted in directive lines (sbatch strips quotes, expands
# nothing) or in `module load` lines. Deliberately narrow: letters, digits and a few marks.
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")
_ACCOUNT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_MODULE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+/-]{0,127}$")
# Output paths may hold Slurm's %j/%x patterns and directories; no spaces, no shell syntax.
_PATH_RE = re.compile(r"^[A-Za-z0-9._%/+-][A-Za-z0-9._%/+=-]{0,1023}$")
_MPI_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_LAUNCHERS = ("srun", "mpiexec", "mpirun")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")

# Placeholders a program command line may use; filled per configuration.
PLACEHOLDERS = ("precision", "device", "threads", "ranks", "nodes", "ranks_per_node", "size")

#: Default multiplier on the predicted upper-quantile runtime and the floor of a time limit.
TIME_MARGIN = 1.5
TIME_FLOOR_S = 60


def _no_control(value: str, what: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{what} must be text, got {value!r}")
    if _CONTROL_RE.search(value):
        raise ConfigError(
            f"{what} {value!r} contains a newline or control character; remove it"
        )
    return value


def check_value(value: str, what: str, pattern: re.Pattern = _NAME_RE) -> str:
    """Return ``value`` if it is safe for a directive line, else raise :class:`ConfigError`.

    Args:
        value: the user- or cluster-file-provided text.
        what: what it is, for the message (e.g. ``"job name"``).
        pattern: the allowed shape.
    """
    _no_control(value, what)
    if not pattern.match(value):
        raise ConfigError(
            f"{what} {value!r} has characters not allowed in a batch script "
            "(use letters, digits and . _ - only)"
        )
    return value


def check_job_name(value: str) -> str:
    return check_value(value, "job name", _NAME_RE)


def check_output_path(value: str) -> str:
    _no_control(value, "output path")
    if not _PATH_RE.match(value):
        raise ConfigError(
            f"output path {value!r} has characters not allowed in a batch script "
            "(use letters, digits, / . _ - % only, no spaces or quotes)"
        )
    return value


def check_preamble_line(value: str) -> str:
    """A site preamble line from the cluster file: raw shell written by the site, one line."""
    return _no_control(value, "preamble line")


def program_tokens(program: str | Sequence[str], values: dict | None = None) -> list[str]:
    """Split a program command line into argv tokens and fill placeholders.

    Args:
        program: a command line (split like a POSIX shell would, quotes honoured) or a token
            list.
        values: placeholder values, e.g. ``{"precision": "fp32"}``; ``{precision}`` in any
            token is replaced. Unknown ``{...}`` text is left as is.

    Returns:
        The tokens, not yet quoted.

    Raises:
        ConfigError: empty program, unbalanced quotes, or a control character.
    """
    if isinstance(program, str):
        _no_control(program, "program")
        try:
            tokens = shlex.split(program)
        except ValueError as exc:
            raise ConfigError(f"program {program!r} cannot be parsed ({exc}); fix its quoting")
    else:
        tokens = [_no_control(str(t), "program argument") for t in program]
    if not tokens:
        raise ConfigError("program is empty; pass --program \"./my_app ...\"")
    values = values or {}
    filled = []
    for token in tokens:
        for key in PLACEHOLDERS:
            if key in values:
                token = token.replace("{" + key + "}", str(values[key]))
        filled.append(token)
    return filled


def quote_tokens(tokens: Sequence[str]) -> str:
    """Join argv tokens into one shell-inert command line."""
    return " ".join(shlex.quote(t) for t in tokens)


def time_limit_s(runtime_hi_s: float, margin: float = TIME_MARGIN,
                 floor_s: int = TIME_FLOOR_S) -> int:
    """Time limit from a predicted upper-quantile runtime: ×margin, floored, whole minutes.

    Raises:
        ConfigError: a runtime that is not a finite positive number.
    """
    if not isinstance(runtime_hi_s, (int, float)) or not math.isfinite(runtime_hi_s) \
            or runtime_hi_s <= 0:
        raise ConfigError(f"predicted runtime {runtime_hi_s!r} is not a positive number")
    seconds = max(float(floor_s), float(runtime_hi_s) * margin)
    return int(math.ceil(seconds / 60.0) * 60)


def format_slurm_time(seconds: int) -> str:
    """``D-HH:MM:SS`` beyond a day, else ``HH:MM:SS``."""
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{hours:02d}:{minutes:02d}:{secs:02d}"


def format_pbs_walltime(seconds: int) -> str:
    """``HH:MM:SS`` (hours may exceed 24, as PBS Pro accepts)."""
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}"


@dataclass
class BatchJob:
    """Everything a batch script needs.

    Attributes:
        config: the configuration to run.
        partition: where it runs.
        program: the program's command line (or tokens); may use ``{precision}`` etc.
        time_limit_s: time limit, s (see :func:`time_limit_s`).
        cluster: site settings (account, QOS, modules, GRES syntax, MPI, preamble); optional.
        job_name: the scheduler's job name.
        output: the job's stdout path (Slurm ``%j``/``%x`` patterns allowed); optional.
        exclusive: ask for whole nodes.
        account / qos: override the cluster file's values.
        size: the problem size, for the ``{size}`` placeholder.
        summary: a comment line written at the top (sanitised).
    """

    config: Configuration
    partition: "Partition"
    program: str | Sequence[str]
    time_limit_s: int = 3600
    cluster: "Cluster | None" = None
    job_name: str = "hpcds1mpi"
    output: str | None = None
    exclusive: bool = False
    account: str | None = None
    qos: str | None = None
    size: int | None = None
    summary: str = ""
    extra_env: dict = field(default_factory=dict)
    gpus: int | None = None  # GPUs per node to request; default: one per rank on GPU configs

    # ---- derived, validated values -------------------------------------------------------
    def site(self, key: str):
        return getattr(self.cluster, key) if self.cluster is not None else None

    def queue(self) -> str:
        name = self.partition.slurm_partition or self.partition.name
        return check_value(name, "partition", _ACCOUNT_RE)

    def account_value(self) -> str:
        value = self.account if self.account is not None else (self.site("account") or "")
        return check_value(value, "account", _ACCOUNT_RE) if value else ""

    def qos_value(self) -> str:
        value = self.qos if self.qos is not None else (self.site("qos") or "")
        return check_value(value, "qos", _ACCOUNT_RE) if value else ""

    def modules(self) -> list[str]:
        return [check_value(m, "module", _MODULE_RE) for m in (self.site("modules") or [])]

    def preamble(self) -> list[str]:
        return [check_preamble_line(line) for line in (self.site("preamble") or [])]

    def gpus_per_node(self) -> int:
        if self.gpus is not None:
            return int(self.gpus)
        return self.config.ranks_per_node if self.config.device == "gpu" else 0

    def placeholder_values(self) -> dict:
        c = self.config
        values = {"precision": c.precision, "device": c.device, "threads": c.threads,
                  "ranks": c.ranks, "nodes": c.nodes, "ranks_per_node": c.ranks_per_node}
        if self.size is not None:
            values["size"] = self.size
        return values

    def environment(self) -> list[tuple[str, str]]:
        """(name, already-quoted value) pairs exported before the launch."""
        c = self.config
        env = [
            ("OMP_NUM_THREADS", str(c.threads)),
            ("OMP_PLACES", "cores"),
            ("OMP_PROC_BIND", "close"),
            ("HPCDS1MPI_PRECISION", c.precision),
            ("HPCDS1MPI_DEVICE", c.device),
        ]
        for key, value in self.extra_env.items():
            if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", str(key)):
                raise ConfigError(f"environment variable name {key!r} is not valid")
            env.append((key, _no_control(str(value), f"value of {key}")))
        return [(k, shlex.quote(v)) for k, v in env]

    def validate(self) -> None:
        """Check every field; raise :class:`ConfigError` on the first bad one."""
        check_job_name(self.job_name)
        if self.output is not None:
            check_output_path(self.output)
        check_fits(self.config, self.partition)
        if not isinstance(self.time_limit_s, int) or self.time_limit_s < 60:
            raise ConfigError(f"time limit must be at least 60 s, got {self.time_limit_s!r}")
        self.queue(), self.account_value(), self.qos_value(), self.modules(), self.preamble()
        if self.site("mpi"):
            check_value(self.site("mpi"), "srun --mpi value", _MPI_RE)
        program_tokens(self.program, self.placeholder_values())


# ---- role 1: scheduler directives ---------------------------------------------------------


def slurm_directives(job: BatchJob) -> list[str]:
    """The ``#SBATCH`` lines of ``job`` (validated)."""
    job.validate()
    c = job.config
    lines = [
        f"--job-name={job.job_name}",
        f"--partition={job.queue()}",
        f"--nodes={c.nodes}",
        f"--ntasks-per-node={c.ranks_per_node}",
        f"--cpus-per-task={c.threads}",
    ]
    gpus = job.gpus_per_node()
    if gpus:
        if (job.site("gres_syntax") or "gpus-per-node") == "gres":
            lines.append(f"--gres=gpu:{gpus}")
        else:
            lines.append(f"--gpus-per-node={gpus}")
    lines.append(f"--time={format_slurm_time(job.time_limit_s)}")
    if job.exclusive:
        lines.append("--exclusive")
    if job.account_value():
        lines.append(f"--account={job.account_value()}")
    if job.qos_value():
        lines.append(f"--qos={job.qos_value()}")
    if job.output is not None:
        lines.append(f"--output={job.output}")
    return [f"#SBATCH {line}" for line in lines]


def pbs_directives(job: BatchJob) -> list[str]:
    """The ``#PBS`` lines of ``job`` (validated). QOS has no PBS Pro equivalent: not written."""
    job.validate()
    c = job.config
    chunk = (f"select={c.nodes}:ncpus={c.ranks_per_node * c.threads}"
             f":mpiprocs={c.ranks_per_node}:ompthreads={c.threads}")
    if job.gpus_per_node():
        chunk += f":ngpus={job.gpus_per_node()}"
    lines = [
        f"-N {job.job_name}",
        f"-q {job.queue()}",
        f"-l {chunk}",
        "-l place=scatter:excl" if job.exclusive else "-l place=scatter",
        f"-l walltime={format_pbs_walltime(job.time_limit_s)}",
    ]
    if job.account_value():
        lines.append(f"-A {job.account_value()}")
    if job.output is not None:
        lines += [f"-o {job.output}", "-j oe"]
    return [f"#PBS {line}" for line in lines]


# ---- role 2: launcher tokens --------------------------------------------------------------


def launcher_tokens(scheduler: str, config: Configuration, cluster: "Cluster | None" = None
                    ) -> list[str]:
    """The MPI launcher's argv tokens for ``config`` (the program follows them).

    Slurm: ``srun --nodes N --ntasks-per-node R -c T --cpu-bind=cores --kill-on-bad-exit=1
    --mpi=<cluster.mpi>``
    (Slurm 22.05 srun does not inherit ``--cpus-per-task``, so ``-c`` is explicit).
    PBS: ``mpiexec -n <ranks>``; placement comes from the ``select`` chunks.
    A cluster file's ``launcher`` key (``srun``, ``mpiexec`` or ``mpirun``) overrides the choice.
    """
    if scheduler not in SCHEDULERS:
        raise ConfigError(f"scheduler must be one of {', '.join(SCHEDULERS)}, got {scheduler!r}")
    launcher = (getattr(cluster, "launcher", "") or "") if cluster is not None else ""
    if not launcher:
        launcher = "srun" if scheduler == "slurm" else "mpiexec"
    if launcher not in _LAUNCHERS:
        raise ConfigError(f"launcher {launcher!r} unknown; use one of {', '.join(_LAUNCHERS)}")
    if launcher == "srun":
        mpi = (getattr(cluster, "mpi", "") or "pmi2") if cluster is not None else "pmi2"
        check_value(mpi, "srun --mpi value", _MPI_RE)
        # --kill-on-bad-exit: one dead rank ends the step instead of stranding the others in
        # MPI calls until the walltime.
        return ["srun", f"--nodes={config.nodes}", f"--ntasks-per-node={config.ranks_per_node}",
                "-c", str(config.threads), "--cpu-bind=cores", "--kill-on-bad-exit=1",
                f"--mpi={mpi}"]
    return [launcher, "-n", str(config.ranks)]


# ---- role 3: assembly ---------------------------------------------------------------------


def _environment():
    import jinja2
    from importlib import resources

    folder = resources.files("hpcds1mpi.jobscripts")
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # shell, not HTML: every value is validated/quoted in Python first
    )


def _comment(text: str) -> str:
    # Comments cannot break out of their line once control characters are gone.
    return _CONTROL_RE.sub(" ", text)


def render(job: BatchJob, scheduler: str = "slurm") -> str:
    """The whole batch script for ``job`` under ``scheduler`` (``slurm`` or ``pbs``)."""
    if scheduler not in SCHEDULERS:
        raise ConfigError(f"--emit must be one of {', '.join(SCHEDULERS)}, got {scheduler!r}")
    directives = slurm_directives(job) if scheduler == "slurm" else pbs_directives(job)
    tokens = launcher_tokens(scheduler, job.config, job.cluster) + program_tokens(
        job.program, job.placeholder_values())
    template = _environment().get_template(
        "slurm.sbatch.j2" if scheduler == "slurm" else "pbs.pbs.j2")
    from hpcds1mpi import __version__

    return template.render(
        directives=directives,
        summary=_comment(job.summary),
        version=__version__,
        preamble=job.preamble(),
        modules=job.modules(),
        environment=job.environment(),
        launch=quote_tokens(tokens),
    )


@dataclass
class CalibrationStep:
    """One configuration of a calibration sweep and why it was chosen."""

    config: Configuration
    reason: str = ""


def calibration_step_tokens(step: Configuration, workload: str, size: int, telemetry: str,
                            program: str | Sequence[str] | None = None) -> list[str]:
    """The ``hpcds1mpi sweep`` argv measuring one configuration (one job step).

    A built-in kernel is measured in-process; a user's program through the sweep's
    external-program mode (``--command``) under the workload label.
    """
    check_value(workload, "workload", _NAME_RE)
    check_output_path(telemetry)
    c = step
    tokens = ["hpcds1mpi", "sweep"]
    if program is not None:
        command = program if isinstance(program, str) else quote_tokens(program)
        _no_control(command, "program")
        tokens += ["--command", command, "--label", workload]
    else:
        tokens += ["--kernel", workload]
    tokens += ["--sizes", str(int(size)), "--nodes", str(c.nodes),
               "--ranks-per-node", str(c.ranks_per_node), "--threads", str(c.threads),
               "--devices", c.device, "--precisions", c.precision,
               "--out", telemetry, "--resume"]
    return tokens


def render_calibration(steps: Sequence[CalibrationStep], partition: "Partition", workload: str,
                       size: int, *, cluster: "Cluster | None" = None,
                       program: str | Sequence[str] | None = None,
                       telemetry: str = "calibration.h5", job_name: str = "hpcds1mpi-calib",
                       time_limit: int = 3600, output: str | None = None,
                       reason: str = "") -> str:
    """A Slurm script that measures a few configurations, one job step each, into telemetry.

    The allocation is sized for the largest step; each step asks srun for exactly its own
    nodes, ranks and threads. ``|| true`` keeps one failing configuration from ending the
    sweep: its failure is itself a measurement the sweep records.
    """
    if not steps:
        raise ConfigError("a calibration sweep needs at least one configuration")
    if not isinstance(size, int) or size <= 0:
        raise ConfigError(f"size must be a positive integer, got {size!r}")
    # The allocation covers every step: the most nodes, the most ranks per node, and enough
    # CPUs per task that the widest step (ranks x threads per node) fits; whole nodes.
    most_ranks = max(s.config.ranks_per_node for s in steps)
    most_cores = max(s.config.ranks_per_node * s.config.threads for s in steps)
    biggest = Configuration(
        nodes=max(s.config.nodes for s in steps),
        ranks_per_node=most_ranks,
        threads=max(1, min(-(-most_cores // most_ranks), partition.cores_per_node // most_ranks)),
    )
    gpu_ranks = [s.config.ranks_per_node for s in steps if s.config.device == "gpu"]
    job = BatchJob(config=biggest, partition=partition, program=["true"], cluster=cluster,
                   job_name=job_name, time_limit_s=time_limit, output=output, exclusive=True,
                   gpus=max(gpu_ranks) if gpu_ranks else 0)
    directives = slurm_directives(job)
    rendered_steps = []
    for step in steps:
        check_fits(step.config, partition)
        launch = launcher_tokens("slurm", step.config, cluster)
        if launch[0] == "srun":
            # A step inherits SLURM_NTASKS of the (larger) allocation; without its own task
            # count srun asks for allocation-tasks x this step's -c and is refused.
            launch.insert(1, f"--ntasks={step.config.ranks}")
        tokens = launch + calibration_step_tokens(step.config, workload, size, telemetry,
                                                  program)
        rendered_steps.append({
            "label": step.config.label(),
            "reason": _comment(step.reason),
            "threads": step.config.threads,
            "precision": shlex.quote(step.config.precision),
            "launch": quote_tokens(tokens),
        })
    from hpcds1mpi import __version__

    return _environment().get_template("calibration.sbatch.j2").render(
        directives=directives,
        version=__version__,
        reason=_comment(reason),
        workload=workload,
        size=int(size),
        telemetry=shlex.quote(telemetry),
        preamble=job.preamble(),
        modules=job.modules(),
        steps=rendered_steps,
    )


def check_bash_syntax(script: str) -> None:
    """Run ``bash -n`` on a script; raise :class:`ConfigError` with bash's message if it fails."""
    import subprocess

    proc = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True,
                          timeout=30)
    if proc.returncode != 0:
        raise ConfigError(f"generated script fails bash -n: {proc.stderr.strip()}")
