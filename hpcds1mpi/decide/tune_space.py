"""The search space of a tuning session: the configurations its allocation can hold.

:class:`Space` holds them in a fixed order and knows each one's neighbours (one knob changed);
:func:`workload_space` builds it for a kernel or a user's program (:func:`one_thread_only`:
threads = 1 for a program that cannot use more), :func:`allocation` says what the allocation is, :func:`default_config` is the rules-of-thumb start and
:func:`start_config` the user's own; :func:`nodes_note` says a ``--max-nodes`` above the
nodes reached, :func:`check_reachable` refuses a space beyond them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

from hpcds1mpi.config import DEVICES, PRECISIONS, Configuration
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.program import program_precisions


def config_key(config: Configuration) -> tuple:
    return (config.nodes, config.ranks_per_node, config.threads, config.device, config.precision)


@dataclass
class Space:
    """The configurations a tuning session may run (those the allocation can hold).

    Attributes:
        configs: every allowed configuration, in a fixed order.
    """

    configs: list[Configuration]

    def __post_init__(self) -> None:
        self._keys = {config_key(c): i for i, c in enumerate(self.configs)}
        if not self.configs:
            raise ConfigError("no configuration fits the allocation; ask for more cores or nodes")

    def __contains__(self, config: Configuration) -> bool:
        return config_key(config) in self._keys

    def index(self, config: Configuration) -> int:
        return self._keys[config_key(config)]

    def allowed_text(self, nodes: int, cores: int) -> str:
        """What the space holds, for tune's first line: "6 configurations allowed (1 node x 2
        cores: 3 layouts, each in cpu fp64 and cpu fp32)"; the bare "(1 node(s) x 2)" read as a
        count of 2 (s40 tester D14)."""
        layouts = {(c.nodes, c.ranks_per_node, c.threads) for c in self.configs}
        kinds = sorted({(c.device, c.precision) for c in self.configs},
                       key=lambda k: (DEVICES.index(k[0]), PRECISIONS.index(k[1])))
        how = (f"{len(layouts)} layout{'s, each' if len(layouts) != 1 else ''} in "
               f"{_listed([f'{d} {p}' for d, p in kinds])}"
               if len(layouts) * len(kinds) == len(self.configs)
               else f"{len(layouts)} layouts in {len(kinds)} device and precision pairs")
        return (f"{len(self.configs)} configuration{'s' if len(self.configs) != 1 else ''} "
                f"allowed ({nodes} node{'s' if nodes != 1 else ''} x {cores} "
                f"core{'s' if cores != 1 else ''}: {how})")

    def neighbours(self, config: Configuration) -> list[Configuration]:
        """Configurations one knob away, in a fixed heuristic order: more parallelism, ranks
        traded for threads, less parallelism, then other precisions and devices."""
        c = config
        same = (c.device, c.precision)
        moves = [
            Configuration(c.nodes, c.ranks_per_node * 2, c.threads, *same),
            Configuration(c.nodes, c.ranks_per_node, c.threads * 2, *same),
            Configuration(c.nodes * 2, c.ranks_per_node, c.threads, *same),
        ]
        # Trading ranks for threads at the same core count.
        if c.threads > 1:
            moves.append(Configuration(c.nodes, c.ranks_per_node * 2, c.threads // 2, *same))
        if c.ranks_per_node > 1:
            moves.append(Configuration(c.nodes, c.ranks_per_node // 2, c.threads * 2, *same))
        if c.ranks_per_node > 1:
            moves.append(Configuration(c.nodes, c.ranks_per_node // 2, c.threads, *same))
        if c.threads > 1:
            moves.append(Configuration(c.nodes, c.ranks_per_node, c.threads // 2, *same))
        if c.nodes > 1:
            moves.append(Configuration(c.nodes // 2, c.ranks_per_node, c.threads, *same))
        moves += [Configuration(c.nodes, c.ranks_per_node, c.threads, c.device, p)
                  for p in PRECISIONS if p != c.precision]
        moves += [Configuration(c.nodes, c.ranks_per_node, c.threads, d, c.precision)
                  for d in DEVICES if d != c.device]
        return [m for m in moves if m in self]


def _listed(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def build_space(partition, *, max_nodes: int, cores_per_node: int | None = None,
                devices: Sequence[str] | None = None, precisions: Sequence[str] | None = None,
                uses_threads: bool = True) -> Space:
    """Every configuration of System 1's grid that fits ``max_nodes`` nodes of ``partition``
    with ``cores_per_node`` usable cores each (the allocation)."""
    from dataclasses import replace

    from hpcds1mpi.config import configuration_grid

    # The allocation limits what may run; the partition's hardware stays as it is.
    cores = min(int(cores_per_node or partition.usable_cores_per_node), partition.cores_per_node)
    part = replace(partition, max_nodes=max(1, int(max_nodes)), allocated_cores_per_node=cores)
    grid = configuration_grid(part, max_nodes=max_nodes, devices=devices, precisions=precisions,
                              uses_threads=uses_threads)
    configs = [Configuration(int(n), int(r), int(t), DEVICES[int(d)], PRECISIONS[int(p)])
               for n, r, t, d, p in zip(grid["nodes"], grid["ranks_per_node"], grid["threads"],
                                        grid["device_code"], grid["precision_code"])]
    return Space(configs)


def workload_space(partition, kernel: str | None, *, max_nodes: int,
                   cores_per_node: int | None = None, offer=None,
                   program: str | None = None) -> Space:
    """:func:`build_space` for a kernel (only the devices, precisions and threads it declares)
    or, with ``kernel`` None, for a user's program: everything the partition offers (the
    precisions only where the command takes them: :func:`program_precisions`), or with
    ``offer`` (its measured levels, :func:`hpcds1mpi.decide.offer.offer_for`) only those."""
    from hpcds1mpi.kernels import offered

    uses_threads, precisions, devices = offered(kernel, partition)
    if offer is not None and offer.levels is not None:
        uses_threads, precisions = offer.uses_threads, offer.precisions
        devices = [d for d in devices if d in (offer.devices or ())]
    elif kernel is None and program_precisions(program) is not None:
        allowed = program_precisions(program)
        precisions = [p for p in (precisions or allowed) if p in allowed] or precisions
    space = build_space(partition, max_nodes=max_nodes, cores_per_node=cores_per_node,
                        devices=devices, precisions=precisions, uses_threads=uses_threads)
    if offer is None or offer.levels is None:
        return space
    top = offer.max_ranks_per_node or partition.usable_cores_per_node
    kept = [c for c in space.configs
            if c.threads in (offer.threads or [1]) and c.ranks_per_node <= top]
    if not kept:
        raise ConfigError(f"nothing {offer.levels.workload} was measured with fits this "
                          "allocation; drop --model to search everything")
    return Space(kept)


def one_thread_only(space: Space, program: str | None, env: dict | None = None
                    ) -> tuple[Space, str]:
    """``space`` at threads = 1 only, and the line saying why, where ``program`` cannot use
    more threads per rank (:func:`~hpcds1mpi.launch.program_threads.unthreaded_program`):
    its runs at 2 threads would be the same computation as at 1, told apart by noise. As it
    is, with "", for a kernel or a program that may use them."""
    from hpcds1mpi.launch.program_threads import one_thread_line, unthreaded_program

    name = unthreaded_program(program, env) if program is not None else None
    if name is None or all(c.threads == 1 for c in space.configs):
        return space, ""
    return Space([c for c in space.configs if c.threads == 1]), one_thread_line(name, program)


def allocation(partition, launcher: str, layout=None, env=None) -> tuple[int, int]:
    """(nodes, cores per node) a tune may use: the launched layout in-process, the Slurm
    allocation under srun (its CPUs per node, :func:`~hpcds1mpi.slurm_allocation.allocation_cpus_per_node`),
    this node under mpiexec; never more cores than the partition's nodes have.

    Raises:
        ClusterFileError: the allocation's CPU count is not a number.
    """
    from hpcds1mpi.slurm_allocation import allocation_cpus_per_node
    from hpcds1mpi.errors import ClusterFileError

    usable = partition.usable_cores_per_node
    if layout is not None:
        return layout.nodes, usable
    from hpcds1mpi.slurm_allocation import leftover_job

    env = os.environ if env is None else env
    if launcher == "srun" and not leftover_job(env):  # not a leftover job's figures (s32 T4)
        nodes = int(env.get("SLURM_JOB_NUM_NODES") or env.get("SLURM_NNODES") or 1)
        try:
            cores = allocation_cpus_per_node(env) or usable
        except ValueError as exc:  # the same one line as detect_slurm's
            raise ClusterFileError(f"the Slurm allocation reports a count that is not a "
                                   f"number ({exc}); give the partition with --cluster FILE"
                                   ) from None
        return nodes, min(cores, partition.cores_per_node)
    return 1, usable  # mpiexec without a host file: this node only


def nodes_note(max_nodes: int | None, nodes: int, kind: str, partition_nodes: int | None = None,
               env=None) -> str:
    """The line for a ``--max-nodes`` above the ``nodes`` that ``kind`` (``srun``,
    ``mpiexec``, ``in-process``) reaches, which are tuned: --max-nodes is a most, so the space
    is limited to them, said (s35 fixer L3: ``--max-nodes 2`` on one machine tuned 1 node,
    unsaid), with the way to more where the partition (``partition_nodes``) has more; "" where
    it asks no more, or inside another scheduler's job (tune says that)."""
    from hpcds1mpi.foreign_jobs import foreign_job

    if max_nodes is None or max_nodes <= nodes:
        return ""
    plural = "s" if nodes != 1 else ""
    if kind == "in-process":
        why = f"the launched ranks are on {nodes} node{plural}"
    elif kind == "srun":
        why = f"this Slurm allocation has {nodes} node{plural}"
    elif foreign_job(env) is not None:
        return ""
    else:
        why = f"{kind}'s trials run on this machine only"
    most = min(max_nodes, partition_nodes or max_nodes)
    more = "" if most <= nodes else " (" + {
        "in-process": f"launch tune on {most} nodes for more",
        "srun": f"run tune in an allocation of {most} nodes for more"}.get(
        kind, f"srun inside an allocation of {most} nodes runs on them") + ")"
    return f"--max-nodes {max_nodes}: {why}, so {nodes} node{plural} " \
        f"{'are' if plural else 'is'} tuned{more}"


def check_reachable(space: Space, launch, env=None) -> None:
    """Refuse, before any trial, a ``space`` with configurations on more nodes than
    ``launch`` reaches from here (:func:`~hpcds1mpi.measure.reachable_nodes.reachable_nodes`),
    as the sweep refuses them, not one trial at a time (s35 fixer L3).

    Raises:
        ConfigError: one line naming the nodes asked and held, and what to do.
    """
    from hpcds1mpi.measure.reachable_nodes import reachable_nodes

    reach = reachable_nodes(launch, env)
    most = max(c.nodes for c in space.configs)
    if reach is None or most <= reach[0]:
        return
    held, holder = reach
    raise ConfigError(f"the tune's space has configurations on {most} nodes but {holder} "
                      f"{held} node{'s' if held != 1 else ''}: run tune inside `salloc -N "
                      f"{most}` (or your cluster's allocation of {most} nodes), or give "
                      f"--max-nodes {held}")


def start_config(space: Space, wanted: dict, *, nodes: int, cores: int, partition,
                 kernel: str | None, why: str = "", offer=None,
                 launcher: str = "srun") -> Configuration:
    """The user's start settings (``wanted``: nodes, ranks_per_node, threads, device,
    precision; None where not given) filled from :func:`default_config`. ``why``: the line
    of :func:`one_thread_only`, said where the settings ask for more threads; ``offer``: the
    model's offer that limited ``space`` (:func:`workload_space`), named where it left the
    settings out (:func:`offer_refusal`). ``launcher``: the trials' (``mpiexec`` runs them on
    this machine, inside an allocation too).

    Raises:
        ConfigError: the settings are not in ``space``, saying which one and what to do.
    """
    base = default_config(space, cores)
    start = Configuration(*(wanted.get(k) or getattr(base, k) for k in
                            ("nodes", "ranks_per_node", "threads", "device", "precision")))
    if start in space:
        return start
    label = start.label()
    devices = {c.device for c in space.configs}
    precisions = {c.precision for c in space.configs if c.device == start.device}
    if start.device == "gpu" and not partition.gpus_per_node:
        raise ConfigError(f"your settings {label}: {partition.name} has no GPU; drop --device "
                          f"or use --device {sorted(devices)[0]}")
    left_out = offer_refusal(start, offer, cores)  # the model's offer left it out (s35 A3)
    if left_out:
        raise ConfigError(f"your settings {label}: {left_out}")
    if start.device not in devices:
        raise ConfigError(f"your settings {label}: {kernel or 'the program'} does not run on "
                          f"{start.device}; drop --device or use --device {sorted(devices)[0]}")
    if start.precision not in precisions:
        raise ConfigError(f"your settings {label}: {kernel or 'the program'} has no "
                          f"{start.precision} on {start.device}; use --precision "
                          f"{'/'.join(sorted(precisions))}")
    if why and start.threads > 1:
        raise ConfigError(f"your settings {label}: {why}; use --threads 1, or put {{threads}} "
                          "in --program where the program takes its thread count")
    from hpcds1mpi.foreign_jobs import foreign_job
    from hpcds1mpi.slurm_allocation import in_allocation

    # outside Slurm the "allocation" is this machine (s29 V1-7: it named one that did not
    # exist); inside another scheduler's job it is not "outside any allocation" (s35 fixer L2)
    inside = in_allocation()
    job = None if inside else foreign_job()
    where = "the allocation" if inside else (
        f"this machine (the {job.scheduler} job's nodes are not read)" if job
        else "this machine (outside any allocation)")
    if start.nodes > nodes and inside and launcher == "mpiexec":  # not "the allocation has 1"
        raise ConfigError(f"your settings {label} need {start.nodes} nodes, mpiexec's trials "
                          f"run on this machine only; pass --launcher srun to tune on the "
                          f"allocation's nodes (one of {start.nodes} nodes or more)")
    if start.nodes > nodes:
        fix = (f"tune this machine (drop --nodes), or tune in a Slurm allocation of "
               f"{start.nodes} nodes" if job else f"run tune in a larger allocation (salloc -N "
               f"{start.nodes}, or --submit --max-nodes {start.nodes})")
        raise ConfigError(f"your settings {label} need {start.nodes} nodes, {where} "
                          f"has {nodes}; {fix}")
    raise ConfigError(f"your settings {label} do not fit {where} ({nodes} "
                      f"node{'s' if nodes != 1 else ''} x {cores} "
                      f"core{'s' if cores != 1 else ''}); use at most {cores} ranks x "
                      "threads per node")


def offer_refusal(start: Configuration, offer, cores: int) -> str:
    """Why the model's ``offer`` (:func:`workload_space`) left ``start`` out of the space, and
    what to do; "" where it did not (or there is none, or ``start`` needs more than ``cores``
    per node: the machine's refusal says that). s35 tester A3: mb-mpi at 2 ranks per node,
    measured at 1 only, was refused as "do not fit this machine (1 node x 2 cores); use at
    most 2 ranks x threads per node", which 2 x 1 does."""
    if offer is None or offer.levels is None:
        return ""
    name, levels = offer.levels.workload, offer.levels
    fix = (f"drop --model to search without it, or sweep {name} at {{option}} {{value}} and "
           "`hpcds1mpi learn` it into the model first")

    def never(what: str, option: str, value, measured) -> str:
        listed = ", ".join(map(str, measured)) or "nothing"
        return (f"{what} {value} was never measured for {name} in --model (measured {listed}; "
                f"left out above); use {option} {measured[-1]}, " if measured else
                f"{what} {value} was never measured for {name} in --model; ") + \
            fix.format(option=option, value=value)

    if start.device not in (offer.devices or levels.devices):
        return never("device", "--device", start.device, list(offer.devices or levels.devices))
    if start.precision not in (offer.precisions or levels.precisions):
        return never("precision", "--precision", start.precision,
                     list(offer.precisions or levels.precisions))
    if start.ranks_per_node * start.threads > cores:
        return ""
    top = offer.max_ranks_per_node or cores
    if start.ranks_per_node > top:
        # beyond what the guard offers past the measured maximum: say both (s48 tester Q6)
        measured = levels.max_ranks_per_node or top
        beyond = f"the measured maximum {measured} of {name} in --model" + (
            f" and the {top} the guard finds familiar" if top > measured else "")
        return (f"ranks per node {start.ranks_per_node} is beyond {beyond} (left out above); "
                f"use --ranks-per-node at most {top}, "
                + fix.format(option="--ranks-per-node", value=start.ranks_per_node))
    if start.threads not in (offer.threads or [1]) and start.threads in levels.threads and (
            levels.idle_threads):  # measured, and one computation at any thread count
        from hpcds1mpi.measure.thread_use import idle_threads_line

        # its command: advice to add {threads} only where it gives none (s47 L7, as sweep)
        return f"{idle_threads_line(name, levels.idle_threads, levels.command)}; use --threads 1"
    if start.threads not in (offer.threads or [1]):
        return never("threads", "--threads", start.threads, list(offer.threads or [1]))
    return ""


def default_config(space: Space, cores_per_node: int) -> Configuration:
    """The rules-of-thumb start: one node, every core a rank, one thread, CPU, fp64 (or the
    closest configuration the space has)."""
    want = Configuration(1, cores_per_node, 1, "cpu", "fp64")
    if want in space:
        return want
    cpu64 = [c for c in space.configs if c.device == "cpu" and c.precision == "fp64"
             and c.nodes == 1] or space.configs
    return max(cpu64, key=lambda c: (c.ranks_per_node * c.threads, c.ranks_per_node))
