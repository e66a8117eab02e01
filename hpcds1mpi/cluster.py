"""Clusters and partitions: from a TOML file (validated on load) or detected.

A cluster file holds one or more clusters, each with one or more partitions::

    [clusters.mycluster]
    account = "proj42"             # optional site lines used by batch scripts
    qos = "normal"
    modules = ["openmpi/4.1"]
    gres_syntax = "gpus-per-node"  # or "gres" (--gres=gpu:N)
    mpi = "pmi2"                   # srun --mpi plugin: pmix (Open MPI), pmi2 (MPICH), none;
                                   # unset: pmi2, or the plugin a model's sweep ran with
    launcher = "srun"              # optional: srun, mpiexec or mpirun in batch scripts
    mpiexec = "/usr/bin/mpirun.openmpi"  # optional: the site's mpiexec/mpirun (path or name)
    launcher_args = "--bind-to core"     # optional: options after the launcher's own, in
                                   # local launches and every batch script (shell quoting)

    [clusters.mycluster.partitions.cpu]
    cores_per_node = 64
    memory_gb = 256
    max_nodes = 16
    gpus_per_node = 0
    gpu_memory_gb = 0
    idle_watts_node = 90           # optional power figures (modelled energy uses them)
    max_watts_node = 420

A file with a single ``[cluster]`` table and ``[partitions.<name>]`` tables is accepted too.
Where a job may go (the partitions a command chooses among, the one it uses):
:mod:`hpcds1mpi.places`.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import asdict, dataclass, field

from hpcds1mpi.cpu_signature import cpu_signature as this_cpu_signature
from hpcds1mpi.errors import ClusterFileError
from hpcds1mpi.slurm_allocation import (allocation_cpus_per_node, asked_job_memory_mb,
                                        first_node, gpus_from_gres, in_allocation,
                                        parse_scontrol_nodes)

# Power figures a partition falls back to when the file gives none. They only feed *modelled*
# energy, which is always labelled as such. A typical 2-socket server / a typical datacentre GPU.
DEFAULT_IDLE_WATTS_PER_CORE = 3.0
DEFAULT_MAX_WATTS_PER_CORE = 10.0
DEFAULT_IDLE_WATTS_GPU = 60.0
DEFAULT_MAX_WATTS_GPU = 400.0

@dataclass
class Partition:
    """A set of identical nodes.

    Attributes:
        name: partition name (also the Slurm/PBS queue unless ``slurm_partition`` is set).
        cores_per_node: physical cores per node.
        memory_gb: memory per node in GB.
        max_nodes: the most nodes a job may get.
        gpus_per_node: GPUs per node (0 for CPU partitions).
        gpu_memory_gb: memory of one GPU in GB.
        idle_watts_node / max_watts_node: node power at idle / full load, W (optional).
        idle_watts_gpu / max_watts_gpu: one GPU's power at idle / full load, W (optional).
        allocated_cores_per_node / allocated_memory_gb: what the Slurm allocation this runs in
            holds of each node (``salloc -c 1`` on 64-core nodes: 1); None outside one. The
            fields above stay the node's hardware (what the model was trained on); what may
            run here is :attr:`usable_cores_per_node` / :attr:`usable_memory_gb`.
    """

    name: str
    cores_per_node: int
    memory_gb: float
    max_nodes: int = 1
    gpus_per_node: int = 0
    gpu_memory_gb: float = 0.0
    gpu_model: str = ""
    cpu_model: str = ""
    #: This machine's CPU signature (:mod:`hpcds1mpi.cpu_signature`) where the
    #: partition was detected here; "" from a cluster file.
    cpu_signature: str = ""
    idle_watts_node: float | None = None
    max_watts_node: float | None = None
    idle_watts_gpu: float | None = None
    max_watts_gpu: float | None = None
    slurm_partition: str = ""
    allocated_cores_per_node: int | None = None
    allocated_memory_gb: float | None = None
    #: What reading Slurm's nodes found worth saying (mixed nodes, hardware threads).
    node_notes: list[str] = field(default_factory=list)

    @property
    def usable_cores_per_node(self) -> int:
        """Cores per node a job here may use: the allocation's share, else the node's."""
        if self.allocated_cores_per_node:
            return min(self.allocated_cores_per_node, self.cores_per_node)
        return self.cores_per_node

    @property
    def usable_memory_gb(self) -> float:
        """Memory per node (GB) a job here may use: the allocation's share, else the node's."""
        if self.allocated_memory_gb:
            return min(self.allocated_memory_gb, self.memory_gb)
        return self.memory_gb

    def hardware_notes(self) -> list[str]:
        """What in this partition's figures limits what runs on it, one line each: said, not
        refused. Fewer cores than GPUs per node is possible (Slurm allows it; a task may hold
        several GPUs), but a GPU run here is one rank per GPU with at least a core each, so
        the GPUs beyond the cores are never used."""
        if 0 < self.cores_per_node < self.gpus_per_node:
            return [*self.node_notes, f"{self.cores_per_node} cores per node for {self.gpus_per_node} GPUs: a GPU "
                    f"run takes one rank per GPU and a core per rank, so at most "
                    f"{self.cores_per_node} GPUs per node are used; check cores_per_node"]
        return list(self.node_notes)

    def power_figures(self) -> dict:
        """Power figures for modelled energy, with the defaults filled in and flagged."""
        given = self.idle_watts_node is not None and self.max_watts_node is not None
        return {
            "idle_watts_node": self.idle_watts_node
            if self.idle_watts_node is not None
            else DEFAULT_IDLE_WATTS_PER_CORE * self.cores_per_node,
            "max_watts_node": self.max_watts_node
            if self.max_watts_node is not None
            else DEFAULT_MAX_WATTS_PER_CORE * self.cores_per_node,
            "idle_watts_gpu": self.idle_watts_gpu
            if self.idle_watts_gpu is not None
            else DEFAULT_IDLE_WATTS_GPU,
            "max_watts_gpu": self.max_watts_gpu
            if self.max_watts_gpu is not None
            else DEFAULT_MAX_WATTS_GPU,
            "power_figures_source": "cluster file" if given else "default per-core figures",
        }

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class Cluster:
    """A named cluster with its partitions and site-specific batch-script settings."""

    name: str
    partitions: dict[str, Partition] = field(default_factory=dict)
    account: str = ""
    qos: str = ""
    modules: list[str] = field(default_factory=list)
    gres_syntax: str = "gpus-per-node"
    #: srun's ``--mpi`` plugin the file names; "" where it names none (pmi2, unless a
    #: model's sweep recorded another): an explicit ``mpi = "pmi2"`` is kept apart (s42)
    mpi: str = ""
    launcher: str = ""
    mpiexec: str = ""
    launcher_args: str = ""
    preamble: list[str] = field(default_factory=list)
    #: The cluster file it was read from ("" where none was), for refusals naming its keys.
    file: str = field(default="", compare=False)

    def partition(self, name: str | None = None) -> Partition:
        if name is None:
            return next(iter(self.partitions.values()))
        try:
            return self.partitions[name]
        except KeyError:
            raise ClusterFileError(
                f"cluster {self.name!r} has no partition {name!r}; "
                f"it has: {', '.join(self.partitions)}"
            ) from None


def load_clusters(path: str | os.PathLike) -> dict[str, Cluster]:
    """Load and validate every cluster in a TOML file (schema: :mod:`hpcds1mpi.schemas.cluster`:
    numbers finite and in range, counts positive integers, unknown keys refused).

    Raises:
        ClusterFileError: naming the file, the key and what to do.
    """
    from hpcds1mpi.schemas.cluster import cluster_tables
    from hpcds1mpi.tomlfile import read_toml

    path = str(path)
    doc = read_toml(path, "cluster file", ClusterFileError)
    clusters: dict[str, Cluster] = {}
    for cname, table in cluster_tables(doc, path).items():
        partitions = {pname: Partition(name=pname, **ptable)
                      for pname, ptable in table.pop("partitions").items()}
        clusters[cname] = Cluster(name=cname, partitions=partitions, file=path, **table)
    return clusters


def load_cluster(path: str | os.PathLike, name: str | None = None) -> Cluster:
    """Load one cluster from a file (the only one, or the one called ``name``)."""
    clusters = load_clusters(path)
    if name is None:
        if len(clusters) > 1:
            raise ClusterFileError(
                f"{path}: holds {len(clusters)} clusters ({', '.join(clusters)}); name one"
            )
        return next(iter(clusters.values()))
    if name not in clusters:
        raise ClusterFileError(f"{path}: no cluster {name!r}; it has {', '.join(clusters)}")
    return clusters[name]


# --------------------------------------------------------------------------------------------
# Detection


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()


def _physical_cores() -> tuple[int, str | None]:
    """(the physical cores this process may run on, the note saying so where its CPU mask
    leaves it fewer than the machine has). A mask (``taskset -c 0``, a cpuset) was not read:
    a sweep under it recorded 2 cores and called 2 ranks on 1 CPU fitting (s36 tester E3)."""
    import psutil

    machine = psutil.cpu_count(logical=False) or os.cpu_count() or 1
    try:
        mask = os.sched_getaffinity(0)
    except (AttributeError, OSError):  # no affinity on this system: the machine's
        return machine, None
    if len(mask) >= (os.cpu_count() or len(mask)):
        return machine, None
    cores = min(machine, max(1, len({_core_of(cpu) for cpu in mask})))
    if cores >= machine:
        return machine, None
    return cores, (f"this process may run on {len(mask)} of the machine's {os.cpu_count()} "
                   f"CPUs (its CPU mask: taskset, a cpuset), {cores} of its {machine} cores: only "
                   "those are used and recorded; run outside the mask to use them all")


def _core_of(cpu: int) -> tuple:
    """The (package, core) a logical CPU belongs to (its hardware threads share one)."""
    topology = f"/sys/devices/system/cpu/cpu{cpu}/topology/"
    try:
        with open(topology + "physical_package_id") as package, open(topology + "core_id") as core:
            return package.read().strip(), core.read().strip()
    except OSError:  # no topology: each CPU its own core
        return ("cpu", cpu)


def detect_gpus() -> tuple[int, float, str]:
    """Return (count, memory GB of the first, model) using nvidia-smi; (0, 0, "") if none."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return 0, 0.0, ""
    rows = [r.split(",") for r in out.strip().splitlines() if r.strip()]
    if not rows:
        return 0, 0.0, ""
    return len(rows), float(rows[0][1]) / 1024.0, rows[0][0].strip()


def detect_local(name: str = "local") -> Cluster:
    """The machine this runs on, as a one-node partition."""
    import psutil

    ngpu, gpu_mem, gpu_model = detect_gpus()
    cores, masked = _physical_cores()
    part = Partition(
        name=name,
        cores_per_node=cores,
        memory_gb=round(psutil.virtual_memory().total / 1e9, 1),
        max_nodes=1,
        gpus_per_node=ngpu,
        gpu_memory_gb=round(gpu_mem, 1),
        gpu_model=gpu_model,
        cpu_model=_cpu_model(),
        cpu_signature=this_cpu_signature(),
        node_notes=[masked] if masked else [],
    )
    return Cluster(name=name, partitions={name: part})


def detect_slurm(env: dict | None = None, scontrol_text: str | None = None) -> Cluster:
    """The current Slurm allocation's partition, from ``SLURM_*`` and ``scontrol``: the
    node's hardware (CPUTot, RealMemory, CPU model, GPUs), the allocation's nodes, and what it
    holds of each node (``allocated_*``: :mod:`hpcds1mpi.slurm_allocation`, ``--mem``).

    Raises:
        ClusterFileError: outside an allocation (SLURM_JOB_ID unset, naming a job that Slurm
            says is not running, or one whose figures its SLURM_* contradict:
            :func:`~hpcds1mpi.slurm_allocation.in_allocation`), or a
            count in it that is not a number.
    """
    env = dict(os.environ if env is None else env)
    if "SLURM_JOB_ID" not in env:
        raise ClusterFileError("not inside a Slurm allocation (SLURM_JOB_ID unset); use --cluster")
    if not in_allocation(env):  # s32 T4 / s35 X3: SLURM_* of no job, or of another job
        raise ClusterFileError(f"not inside a Slurm allocation (SLURM_JOB_ID="
                               f"{env['SLURM_JOB_ID'].strip()} is no running job, or one its "
                               "SLURM_* contradict); unset the leftover SLURM_* variables, or "
                               "use --cluster")
    pname = env.get("SLURM_JOB_PARTITION", "slurm")
    if scontrol_text is None:  # every node of the allocation: they may differ (s33 A2)
        nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST") or \
            env.get("SLURMD_NODENAME") or first_node(env)
        try:
            scontrol_text = subprocess.run(
                ["scontrol", "show", "node", nodelist], capture_output=True, text=True,
                timeout=20, check=True,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            scontrol_text = ""
    nodes = parse_scontrol_nodes(scontrol_text)
    node = nodes[0] if nodes else {}
    # Two things: the node's hardware (model features, the trained-hardware match) and the
    # allocation's share of it (a partial-node allocation, salloc -c 1 / -n 2 / -N 2, cannot
    # start a step wider than it holds: "More processors requested than permitted").
    try:
        node_cores, threads_per_core, node_notes = node_cores_of(nodes)
        allocated_cpus = allocation_cpus_per_node(env)  # Slurm's CPUs: hardware threads
        allocated = max(1, allocated_cpus // threads_per_core) if allocated_cpus else None
        cores = node_cores or allocated or 1
        allocated_mb = asked_job_memory_mb(env, allocated_cpus or cores * threads_per_core)
        node_mb = min((float(n.get("RealMemory") or 0) for n in nodes), default=0.0) \
            or allocated_mb
        max_nodes = int(env.get("SLURM_JOB_NUM_NODES") or env.get("SLURM_NNODES") or 1)
    except ValueError:  # not Python's words ("Exceeds the limit (4300 digits)"): s29 V3-3
        raise ClusterFileError("the Slurm allocation reports a node, CPU or memory count that is "
                               "not a number; give the partition with --cluster FILE") from None
    memory_gb = round(node_mb / 1000.0, 1) if node_mb else round(_local_memory_gb(), 1)
    ngpu = gpus_from_gres(node.get("Gres", ""))
    gpu_count, gpu_mem, gpu_model = detect_gpus() if ngpu else (0, 0.0, "")
    part = Partition(
        name=pname,
        cores_per_node=cores,
        memory_gb=memory_gb,
        max_nodes=max_nodes,
        gpus_per_node=ngpu,
        gpu_memory_gb=round(gpu_mem, 1) if gpu_count else (1.0 if ngpu else 0.0),
        gpu_model=gpu_model,
        cpu_model=_cpu_model(),
        cpu_signature=this_cpu_signature(),
        slurm_partition=pname,
        allocated_cores_per_node=min(allocated or cores, cores),
        allocated_memory_gb=min(round(allocated_mb / 1000.0, 1), memory_gb) if allocated_mb
        else memory_gb,
        node_notes=node_notes,
    )
    return Cluster(name=env.get("SLURM_CLUSTER_NAME", "slurm"), partitions={pname: part})


def allocation_limits_note(partition: Partition, job_id: str = "") -> str:
    """The line said with a script written inside a Slurm allocation (``partition`` from
    :func:`detect_slurm`; "" for another): its layouts were held to the allocation's nodes
    and share of each node, though sbatch gives the script's job its own (s46 tester J5: a
    1 node x 1 CPU salloc wrote 1 x 1 x 1, with 2 x 2 CPUs in the partition, unsaid)."""
    if partition.allocated_cores_per_node is None:
        return ""
    nodes = f"{partition.max_nodes} node{'s' if partition.max_nodes != 1 else ''}"
    job = f" (SLURM_JOB_ID={job_id})" if job_id else ""
    return (f"the layouts were limited by this shell's Slurm allocation{job}: {nodes} x "
            f"{partition.usable_cores_per_node} of each node's {partition.cores_per_node} "
            f"cores; the script's job gets its own from sbatch: for partition "
            f"{partition.slurm_partition or partition.name}'s full choice, give --cluster FILE "
            "describing it, or run recommend outside the allocation")


def node_cores_of(nodes: list[dict]) -> tuple[int, int, list[str]]:
    """(physical cores of the smallest node, the most hardware threads per core, notes) of
    ``scontrol show node``'s ``nodes``: a layout must fit every node (s33 tester A2: m2's one
    CPU read as m1's two), and a node's CPUs are hardware threads where ThreadsPerCore > 1
    (s33 tester A7: ranks on two threads of one core). (0, 1, []) for no nodes.

    Raises:
        ValueError: a count that is not a number.
    """
    cores, notes = {}, []
    threads = max((int(n.get("ThreadsPerCore") or 1) for n in nodes), default=1)
    for n in nodes:
        cpus, per_core = int(n.get("CPUTot") or 0), max(1, int(n.get("ThreadsPerCore") or 1))
        cores[n.get("NodeName", "?")] = max(1, cpus // per_core) if cpus else 0
    if threads > 1:
        notes.append(f"Slurm counts {threads} hardware threads per core as CPUs: cores, not "
                     "threads, are counted for ranks x threads")
    if len(set(cores.values())) > 1:
        shown = ", ".join(f"{name} {count}" for name, count in cores.items())
        notes.append(f"the nodes differ (cores: {shown}): every layout is sized for the "
                     f"smallest, {min(cores.values())} cores per node")
    return (min(cores.values()) if cores else 0), threads, notes


def _local_memory_gb() -> float:
    import psutil

    return psutil.virtual_memory().total / 1e9


def resolve_cluster(cluster_file: str | None, partition: str | None) -> "Cluster | None":
    """The site (account, QOS, modules, preamble, launcher) whose partition a command uses:
    the cluster of the file that has ``partition`` (its first without one); None without a
    file."""
    if not cluster_file:
        return None
    clusters = list(load_clusters(cluster_file).values())
    return next((c for c in clusters if partition is None or partition in c.partitions),
                clusters[0] if clusters else None)


def srun_mpi(cluster_file: str | None, default: str = "pmi2") -> str:
    """The srun ``--mpi`` plugin the cluster file names (``mpi = ...``; its first cluster that
    says one), else ``default``: local launches use the same plugin as the site's scripts."""
    if not cluster_file:
        return default
    for cluster in load_clusters(cluster_file).values():
        if cluster.mpi:
            return cluster.mpi
    return default


def launch_settings(cluster_file: str | None, partition: str | None = None) -> dict:
    """The cluster file's local-launch settings: ``{"mpi", "mpiexec", "launcher_args",
    "launcher"}`` (``pmi2``, "", "" and "" without a file), so a sweep launches as the site's
    scripts do."""
    cluster = resolve_cluster(cluster_file, partition)
    if cluster is None:
        return {"mpi": "pmi2", "mpiexec": "", "launcher_args": "", "launcher": ""}
    return {"mpi": cluster.mpi or "pmi2", "mpiexec": cluster.mpiexec,
            "launcher_args": cluster.launcher_args, "launcher": cluster.launcher}
