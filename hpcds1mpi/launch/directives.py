"""A batch job's description and its scheduler directives (``#SBATCH`` / ``#PBS`` lines).

This is the first of the three roles of a batch script (as ReFrame keeps them): the scheduler
emits directive lines, the launcher (:mod:`hpcds1mpi.launch.launchers`) returns the command
tokens, the assembler (:mod:`hpcds1mpi.launch.scripts`) joins them through the templates in
``jobscripts/``.

Every value a user or a cluster file provides is checked before it reaches a script:

* values that land in ``#SBATCH``/``#PBS`` lines (job name, partition, account, QOS, output
  path) and module names must match a conservative pattern, because ``sbatch`` strips quotes
  and expands nothing there, and a newline would start a new directive or command;
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
from hpcds1mpi.launch import launchers, program as program_rule
from hpcds1mpi.launch.program import no_control

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Cluster, Partition


@dataclass(frozen=True)
class Shape:
    """What a value that lands unquoted in a directive line (sbatch strips quotes, expands
    nothing) or a ``module load`` line may look like: the one source of both the pattern the
    code applies and the words its messages say. Deliberately narrow: letters, digits and a few
    marks.

    Attributes:
        marks: the characters allowed besides letters and digits.
        first_marks: those of ``marks`` also allowed as the first character.
        max_len: the longest value.
    """

    marks: str
    first_marks: str = ""
    max_len: int = 128

    @property
    def pattern(self) -> re.Pattern:
        first = "A-Za-z0-9" + re.escape(self.first_marks)
        rest = "A-Za-z0-9" + re.escape(self.marks)
        return re.compile(f"^[{first}][{rest}]{{0,{self.max_len - 1}}}$")

    def words(self) -> str:
        """The rule in words, as every message about it says it."""
        start = "a letter or digit" if not self.first_marks else \
            "a letter, digit or " + " ".join(self.first_marks)
        return (f"letters, digits and {' '.join(self.marks)} only, starting with {start}, at "
                f"most {self.max_len} characters")

    def problem(self, value: str) -> str | None:
        """What breaks the rule in ``value``, in a few words; None when it holds."""
        if not value:
            return "is empty"
        if len(value) > self.max_len:
            return f"is {len(value)} characters long"
        bad = sorted({c for c in value
                      if not (c.isascii() and c.isalnum()) and c not in self.marks})
        if bad:
            return "has characters not allowed in a batch script (" + \
                " ".join(repr(c) for c in bad) + ")"
        if not self.pattern.match(value):
            return f"starts with {value[0]!r}"
        return None


#: Job names (also the workload's name in a calibration sweep).
NAME = Shape("._+-")
#: Partitions, accounts and QOS names.
ACCOUNT = Shape("._-")
#: Module names (``openmpi/4.1``, Spack's ``gcc@12+shared``).
MODULE = Shape("._+/@-")
#: Output paths: directories and Slurm's %j / %x patterns; no spaces, no shell syntax.
PATH = Shape("._%/+=-", first_marks="._%/+-", max_len=1024)
# The patterns themselves, for callers that match without a message.
NAME_RE, ACCOUNT_RE, MODULE_RE, PATH_RE = (s.pattern for s in (NAME, ACCOUNT, MODULE, PATH))
#: The longest job name (Slurm keeps more; PBS Pro and our own checks stop here).
MAX_JOB_NAME = NAME.max_len

#: Default multiplier on the predicted upper-quantile runtime and the floor of a time limit.
TIME_MARGIN = 1.5
TIME_FLOOR_S = 60

#: The memory a script asks per node: the predicted need x this margin, and at least this
#: much (MiB) above the need (a peak learned from a few runs; a run can exceed it), ...
MEMORY_MARGIN = 1.5
MEMORY_FLOOR_MIB = 1000.0
#: ... but no more than this share of the node's stated memory: what recommend judged the
#: need against (decide.memory_limits.NOMINAL_MEMORY_SHARE), and below what the scheduler
#: counts as the node's (Slurm's RealMemory leaves out the OS), which it would refuse.
MEMORY_REQUEST_SHARE = 0.9


def check_value(value: str, what: str, shape: Shape = NAME) -> str:
    """Return ``value`` if it is safe for a directive line, else raise :class:`ConfigError`
    saying what breaks ``shape``'s rule and the rule itself.

    Args:
        value: the user- or cluster-file-provided text.
        what: what it is, for the message (e.g. ``"job name"``).
        shape: the allowed shape (:data:`NAME`, :data:`ACCOUNT`, :data:`MODULE`, :data:`PATH`).
    """
    if len(value) <= shape.max_len:  # an overlong value is told its length first
        no_control(value, what)
    problem = shape.problem(value)
    if problem is not None:
        shown = f" {value!r}" if value and len(value) <= 60 else ""  # a long one: its length
        raise ConfigError(f"{what}{shown} {problem}; use {shape.words()}")
    return value


def check_job_name(value: str) -> str:
    """A job name that is safe in a directive line."""
    return check_value(value, "job name", NAME)


def job_name_with(base: str, suffix: str) -> str:
    """The job name ``base`` + ``suffix`` (a calibration sweep's ``-calib``), ``base`` checked
    as the user gave it and shortened so that the whole name keeps the length limit: any name
    valid for one job is valid for the jobs derived from it."""
    check_job_name(base)
    return check_job_name(base[:MAX_JOB_NAME - len(suffix)] + suffix)


def check_output_path(value: str) -> str:
    """An output path that is safe in a directive line (``%j``/``%x`` allowed)."""
    return check_value(value, "output path", PATH)


def check_preamble_line(value: str) -> str:
    """A site preamble line from the cluster file: raw shell written by the site, one line."""
    return no_control(value, "preamble line")


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


#: A job's time limit when the user asked for none (``--time-limit UNLIMITED``, ``0``, ``-1``):
#: the script writes no ``--time`` / ``walltime``, so the partition's (queue's) limit applies,
#: never a floor of a minute (s46 tester J1).
NO_TIME_LIMIT = 0


def no_time_limit_note(given: str, scheduler: str) -> str:
    """What a script with :data:`NO_TIME_LIMIT` says of its limit (``given``: the user's)."""
    applies = ("the partition's time limit applies (its DefaultTime where it sets one, else "
               "its MaxTime)" if scheduler == "slurm" else "the queue's default walltime "
               "applies")
    option = "--time" if scheduler == "slurm" else "walltime"
    return f"no {option}: your --time-limit {given} asks for no limit, so {applies}"


def given_time_limit_s(seconds: float) -> int:
    """A given time limit (a walltime proposed from the history, a ``--time-limit``) as a
    script asks for it, s: whole minutes rounded up (to the millisecond: 900.0004 s is 15
    min, as ``--time`` is written), at least :data:`TIME_FLOOR_S`. The one rule of the
    script and of the figures said beside it (s40 tester D10: the JSON said 910.87 s of a
    script asking 960 s)."""
    seconds = max(float(TIME_FLOOR_S), float(seconds))
    return int(math.ceil(round(seconds, 3) / 60.0) * 60)


def script_time_limit_s(script: str) -> float | None:
    """The time limit a Slurm script asks for (its ``#SBATCH --time=``), in seconds."""
    from hpcds1mpi.launch.script_options import parse_slurm_time

    for line in script.splitlines():
        if line.startswith("#SBATCH --time="):
            return parse_slurm_time(line.split("=", 1)[1])
    return None


def memory_request_mib(need_mib: float, node_memory_gb: float) -> int:
    """The memory (MiB, the unit of Slurm's ``--mem=NM`` and PBS's ``mem=Nmb``) to ask per
    node for a job predicted to need ``need_mib`` MiB per node (the surrogate's
    ``peak_rss_mb`` is MiB, as the meters measure it): the need with its margin
    (:data:`MEMORY_MARGIN`, at least :data:`MEMORY_FLOOR_MIB` more), at most
    :data:`MEMORY_REQUEST_SHARE` of the node, never below the need. A node's GB is 1000 MiB
    here, as Slurm's RealMemory is read (``cluster``) and as the fit was judged
    (:class:`~hpcds1mpi.decide.memory_limits.MemoryLimit`): one unit, no conversion (s40 D1:
    the MiB need was shrunk 4.6 % as if it were decimal MB).

    Raises:
        ConfigError: a need that is not a finite positive number, or above the node's memory.
    """
    if not isinstance(need_mib, (int, float)) or not math.isfinite(need_mib) or need_mib <= 0:
        raise ConfigError(f"predicted memory need {need_mib!r} MiB is not a positive number")
    node_mib = float(node_memory_gb) * 1000.0
    if need_mib > node_mib:
        raise ConfigError(f"predicted memory need {need_mib:.0f} MiB per node is above the "
                          f"node's {node_mib:.0f} MiB; use more nodes or a partition with more "
                          "memory")
    asked = min(max(need_mib * MEMORY_MARGIN, need_mib + MEMORY_FLOOR_MIB),
                MEMORY_REQUEST_SHARE * node_mib)
    return int(math.ceil(max(asked, need_mib)))


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


def format_time_limit(seconds: int, scheduler: str) -> str:
    """A time limit as ``scheduler``'s scripts write it: Slurm's ``--time`` (``1-12:00:00``),
    PBS's ``walltime`` (``36:00:00``)."""
    return format_slurm_time(seconds) if scheduler == "slurm" else format_pbs_walltime(seconds)


@dataclass
class BatchJob:
    """Everything a batch script needs.

    Attributes:
        config: the configuration to run.
        partition: where it runs.
        program: the program's command line (or tokens); may use ``{precision}`` etc.
        time_limit_s: time limit, s (see :func:`time_limit_s`); :data:`NO_TIME_LIMIT`: none.
        cluster: site settings (account, QOS, modules, GRES syntax, MPI, preamble); optional.
        job_name: the scheduler's job name.
        output: the job's stdout path (Slurm ``%j``/``%x`` patterns allowed); optional.
        exclusive: ask for whole nodes.
        account / qos: override the cluster file's values.
        size: the problem size, for the ``{size}`` placeholder.
        summary: a comment line written at the top (sanitised).
        extra_env: more variables exported before the launch.
        gpus: GPUs per node to request; default one per rank on GPU configurations.
        memory_mb: the predicted host memory need per node, MiB: the script asks for it with
            a margin (:func:`memory_request_mib`). None: not known; then an exclusive job asks
            for the whole node's memory (Slurm ``--mem=0``), another none (the site's default
            memory per CPU applies, said in the script: :func:`memory_note`).
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
    gpus: int | None = None
    memory_mb: float | None = None

    # ---- derived, validated values -------------------------------------------------------
    def site(self, key: str):
        return getattr(self.cluster, key) if self.cluster is not None else None

    def queue(self) -> str:
        name = self.partition.slurm_partition or self.partition.name
        return check_value(name, "partition", ACCOUNT)

    def account_value(self) -> str:
        value = self.account if self.account is not None else (self.site("account") or "")
        return check_value(value, "account", ACCOUNT) if value else ""

    def qos_value(self) -> str:
        value = self.qos if self.qos is not None else (self.site("qos") or "")
        return check_value(value, "qos", ACCOUNT) if value else ""

    def modules(self) -> list[str]:
        return [check_value(m, "module", MODULE) for m in (self.site("modules") or [])]

    def preamble(self) -> list[str]:
        return [check_preamble_line(line) for line in (self.site("preamble") or [])]

    def gpus_per_node(self) -> int:
        if self.gpus is not None:
            return int(self.gpus)
        return self.config.ranks_per_node if self.config.device == "gpu" else 0

    def memory_mib(self) -> int | None:
        """MiB to ask per node (:func:`memory_request_mib`); None when the need is unknown."""
        if self.memory_mb is None:
            return None
        return memory_request_mib(self.memory_mb, self.partition.memory_gb)

    def placeholder_values(self) -> dict:
        return program_rule.placeholder_values(self.config, self.size)

    def launcher(self, scheduler: str) -> launchers.Launcher:
        """The launcher this job's script writes under ``scheduler``."""
        return launchers.for_script(scheduler, self.cluster, self.partition.cores_per_node)

    def environment(self, scheduler: str = "slurm") -> list[tuple[str, str]]:
        """(name, already-quoted value) pairs exported before the launch: the program rule's
        environment (:func:`hpcds1mpi.launch.program.environment`) under this job's launcher."""
        env = self.launcher(scheduler).environment(self.config, self.extra_env)
        return [(k, shlex.quote(v)) for k, v in env.items()]

    def validate(self) -> None:
        """Check every field; raise :class:`ConfigError` on the first bad one."""
        check_job_name(self.job_name)
        if self.output is not None:
            check_output_path(self.output)
        check_fits(self.config, self.partition)
        self.memory_mib()
        if not isinstance(self.time_limit_s, int) or (
                self.time_limit_s < 60 and self.time_limit_s != NO_TIME_LIMIT):
            raise ConfigError(f"time limit must be at least 60 s, got {self.time_limit_s!r}")
        self.queue(), self.account_value(), self.qos_value(), self.modules(), self.preamble()
        self.launcher("slurm")  # checks the cluster file's launcher and srun --mpi value
        program_rule.program_tokens(self.program, self.placeholder_values())


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
    memory = job.memory_mib()
    if memory is not None:
        lines.append(f"--mem={memory}M")
    elif job.exclusive:  # an exclusive job gets only the memory it asks for: the whole node's
        lines.append("--mem=0")
    if job.time_limit_s != NO_TIME_LIMIT:
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
    if job.memory_mib() is not None:
        chunk += f":mem={job.memory_mib()}mb"  # PBS's mb is MiB
    lines = [
        f"-N {job.job_name}",
        f"-q {job.queue()}",
        f"-l {chunk}",
        "-l place=scatter:excl" if job.exclusive else "-l place=scatter",
    ]
    if job.time_limit_s != NO_TIME_LIMIT:
        lines.append(f"-l walltime={format_pbs_walltime(job.time_limit_s)}")
    if job.account_value():
        lines.append(f"-A {job.account_value()}")
    if job.output is not None:
        if "%" in job.output:  # Slurm's %j / %x: PBS writes the path as it stands
            raise ConfigError(f"output path {job.output!r}: PBS does not expand Slurm's %j / "
                              "%x patterns; give a plain path, or no --job-output (PBS then "
                              "names the file JOBNAME.oJOBID)")
        lines += [f"-o {job.output}", "-j oe"]
    return [f"#PBS {line}" for line in lines]


def memory_note(job: BatchJob, scheduler: str) -> str:
    """One line for the script on the memory it asks for, and why (``""``: nothing to say)."""
    memory = job.memory_mib()
    if memory is not None:
        return (f"asks {memory} MiB per node: the predicted need of {job.memory_mb:.0f} MiB "
                f"x {MEMORY_MARGIN:g} (at least {MEMORY_FLOOR_MIB:.0f} MiB more), at most "
                f"{MEMORY_REQUEST_SHARE:.0%} of the node's {job.partition.memory_gb:g} GB")
    if job.exclusive and scheduler == "slurm":
        return ""  # --mem=0: the whole node's, as the fit was judged
    default = ("the site's default memory (DefMemPerCPU, DefMemPerGPU or DefMemPerNode)"
               if scheduler == "slurm" else "the queue's default mem")
    option = "#SBATCH --mem=" if scheduler == "slurm" else "mem= in -l select"
    return (f"no {option}: this script was written without a predicted memory need, so "
            f"{default} applies; a fit is judged against {MEMORY_REQUEST_SHARE:.0%} of the "
            f"node's {job.partition.memory_gb:g} GB: ask for memory if that default is smaller")


def directives(job: BatchJob, scheduler: str) -> list[str]:
    """The directive lines of ``job`` for ``scheduler`` (``slurm`` or ``pbs``)."""
    launchers.check_scheduler(scheduler)
    return slurm_directives(job) if scheduler == "slurm" else pbs_directives(job)
