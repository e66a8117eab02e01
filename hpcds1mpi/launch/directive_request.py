"""What a batch script's directives ask for, read from the options that
:mod:`~hpcds1mpi.launch.script_reading` collected: nodes, ranks, threads, GPUs, the time limit,
the partition, account and job name (:func:`resolve_directives`; a PBS ``select`` by
:mod:`~hpcds1mpi.launch.pbs_request`), and the variables the scheduler sets from them in the
job's environment (:func:`scheduler_scope`), which the script's shell lines expand.
"""

from __future__ import annotations

from hpcds1mpi.launch.job_script import JobScript
from hpcds1mpi.launch.pbs_request import read_job_wide, read_select
from hpcds1mpi.launch.script_gpus import GPU_OPTIONS, gpus_of, per_node_gpus
from hpcds1mpi.launch.script_options import parse_pbs_time, parse_slurm_time, range_note, to_int
from hpcds1mpi.launch.time_forms import slurm_asks_no_limit


def scheduler_scope(script: JobScript) -> dict:
    """What the scheduler puts in the job's environment, from the directives."""
    s = {}
    if script.cpus_per_task:
        s["SLURM_CPUS_PER_TASK"] = script.cpus_per_task
    if script.nodes:
        s.update(SLURM_JOB_NUM_NODES=script.nodes, SLURM_NNODES=script.nodes,
                 PBS_NUM_NODES=script.nodes)
    tasks = script.ntasks or (script.nodes * script.ntasks_per_node
                              if script.nodes and script.ntasks_per_node else None)
    if tasks:
        s.update(SLURM_NTASKS=tasks, SLURM_NPROCS=tasks, PBS_NODEFILE_LINES=tasks)
    if script.ntasks_per_node:
        s.update(SLURM_NTASKS_PER_NODE=script.ntasks_per_node,
                 PBS_NUM_PPN=script.ntasks_per_node)
    if script.scheduler == "pbs" and script.threads:
        s["OMP_NUM_THREADS"] = script.threads  # PBS sets it from ompthreads
    # NCPUS: the ncpus of the first chunk, or of an old-style job-wide request
    ncpus = script.select.get("ncpus") or (
        script.directives.get("l:ncpus") if script.scheduler == "pbs" else None)
    if ncpus is not None and to_int(ncpus.value):
        s["NCPUS"] = to_int(ncpus.value)
    return {k: str(v) for k, v in s.items()}


def resolve_directives(script: JobScript) -> None:
    d = script.directives

    def take(key: str, name: str, convert=to_int):
        opt = d.get(name)
        if opt is None or opt.value is None:
            return None
        value = convert(opt.value)
        if value is None:
            script.note(f"line {opt.line}: cannot read {name} {opt.value!r}; ignored")
        else:
            script.where(key, opt.line)
            if convert is to_int and (ranged := range_note(opt.line, name, opt.value)):
                script.note(ranged)
        return value

    if script.scheduler == "slurm":
        script.nodes = take("nodes", "nodes")
        script.ntasks = take("ranks", "ntasks")
        script.ntasks_per_node = take("ranks", "ntasks-per-node")
        script.cpus_per_task = take("threads", "cpus-per-task")
        script.time_s = take("time", "time", _slurm_time(script)) or None
        for name in GPU_OPTIONS:
            count = gpus_of(script, d.get(name))
            if count:
                script.gpus_per_node = per_node_gpus(name, count, script.nodes or 1,
                                                     script.ntasks_per_node or 1)
        script.partition, script.account, script.job_name = (
            d[k].value if k in d else None for k in ("partition", "account", "job-name"))
        return
    select = d.get("l:select")
    if select is not None and select.value:
        read_select(script, select)
    elif d.get("l:nodes") is not None:  # Torque: -l nodes=2:ppn=32[:gpus=2]
        opt = d["l:nodes"]
        parts = dict(p.partition("=")[::2] for p in opt.value.split(":")[1:])
        script.nodes = to_int(opt.value.split(":")[0])
        script.ntasks_per_node = to_int(parts.get("ppn")) or 1
        script.gpus_per_node = to_int(parts.get("gpus")) or 0
        script.where("nodes", opt.line)
        script.where("ranks", opt.line)
    else:
        read_job_wide(script)
    script.time_s = take("time", "l:walltime", parse_pbs_time)
    script.partition, script.account, script.job_name = (
        d[k].value if k in d else None for k in ("q", "A", "N"))


def _slurm_time(script: JobScript):
    """parse_slurm_time, with --time=UNLIMITED / INFINITE / -1 / 0 (or 00:00:00) read as no
    limit asked and said so (s29 tester D10: "cannot read time 'UNLIMITED'", though sbatch
    takes it)."""
    def read(value: str) -> int | None:
        seconds = parse_slurm_time(value)
        if seconds is None and slurm_asks_no_limit(value.strip()):
            opt = script.directives["time"]
            script.note(f"line {opt.line}: asked no time limit ({value.strip()}): the "
                        "partition's limit applies")
            return 0  # read (no "cannot read" note), and taken as None below
        return seconds
    return read
