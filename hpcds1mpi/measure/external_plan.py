"""The plan of an external-program sweep: which runs, and how often each is launched.

:func:`build_external_plan` turns ``sweep --command`` / ``tune --program``'s ranges into a
:class:`~hpcds1mpi.measure.plan.SweepPlan` of every size x configuration, each run carrying the
program command, with its repeat settings checked (``--min-repeats`` / ``--max-repeats`` /
``--min-time`` / ``--warmup``; a bound not given yields to the one given). :func:`format_command`
is the program rule's placeholder filling (:mod:`hpcds1mpi.launch.program`) for one run, so an
unparsable command is refused while the plan is built. :mod:`hpcds1mpi.measure.external` runs it.
"""

from __future__ import annotations

import math
import re

from hpcds1mpi.config import enumerate_configs
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.program import placeholder_values, program_tokens
from hpcds1mpi.measure.plan import RunSpec, SweepPlan, parse_ints, parse_words
from hpcds1mpi.schemas.sweep_defaults import PROGRAM, UNCAPPED, lifted_cap_note, lifts_cap

#: Repeats of an external program unless told (a short program gets at least 3 repeats).
MIN_REPEATS, MIN_TIME, MAX_REPEATS = PROGRAM.min_repeats, PROGRAM.min_time, PROGRAM.max_repeats


def format_command(program: str, spec: RunSpec) -> list[str]:
    """The program's tokens with placeholders filled in (the program rule's replacement)."""
    try:
        return program_tokens(program, placeholder_values(spec.config, spec.size))
    except ConfigError as exc:
        raise ConfigError(f"--command: {exc}") from None


#: The placeholder that passes a run's size to the program.
SIZE_PLACEHOLDER = "{size}"


def check_sizes_reach_program(plan: SweepPlan, workdir: str | None,
                              setup: str | None = None) -> None:
    """Refuse a sweep of several sizes that nothing passes to the program: ``{size}`` in
    neither the command, ``--workdir`` nor ``--setup`` (which may write the input from it:
    Elk's ``elk.in``; no environment variable carries the size, and
    ``--output-file`` is only what the sweep reads). Every size would run the same input and
    be recorded as a size it never was (s28 tester T: ``cp2k.psmp -i h2o-150.inp`` swept at
    150 and 250, "ok 2"). One size without ``{size}`` is a label, and allowed.

    Raises:
        ConfigError: more than one size, and no ``{size}`` that reaches the program.
    """
    sizes = sorted({spec.size for spec in plan.runs})
    command = plan.source.get("command", "")
    if len(sizes) < 2 or any(SIZE_PLACEHOLDER in (text or "") for text in (command, workdir,
                                                                           setup)):
        return
    shown = ", ".join(str(size) for size in sizes[:3]) + (", ..." if len(sizes) > 3 else "")
    nor_workdir = f" (nor has --workdir {workdir!r})" if workdir else ""
    raise ConfigError(f"--command {command!r} has no {SIZE_PLACEHOLDER}{nor_workdir}: nothing "
                      f"would differ between sizes {shown}; put "
                      f"{SIZE_PLACEHOLDER} where the program reads its size (in --command, e.g. "
                      f"'-i in-{SIZE_PLACEHOLDER}.inp', or a --workdir per size holding its "
                      f"input: --workdir 'runs/{SIZE_PLACEHOLDER}'), or sweep one size")


def build_external_plan(program: str, label: str, *, sizes, nodes=None, ranks_per_node=None,
                        threads=None, devices=None, precisions=None, partition=None,
                        valid_only: bool = False, timeout: float | None = None,
                        seed: int | None = None, snapshot_every: float | None = None,
                        min_repeats: int | None = None, max_repeats: int | None = None,
                        min_time: float | None = None, warmup: int | None = None
                        ) -> SweepPlan:
    """The plan of an external sweep: every size x configuration, with its repeat settings.

    Raises:
        ConfigError: bad ranges, command line, timeout or repeat settings, or a label that
            is not a word or is a kernel's name.
    """
    from hpcds1mpi.config import DEVICES, PRECISIONS

    size_list = parse_ints(sizes, "sizes")
    node_list = parse_ints(nodes if nodes is not None else 1, "nodes")
    rpn_list = parse_ints(ranks_per_node if ranks_per_node is not None else 1, "ranks_per_node")
    thread_list = parse_ints(threads if threads is not None else 1, "threads")
    device_list = parse_words(devices or "cpu", "devices", DEVICES, ())
    precision_list = parse_words(precisions or "fp64", "precisions", PRECISIONS, ())
    from hpcds1mpi.schemas.runs import WORKLOAD_LABEL, WORKLOAD_LABEL_WORDS

    if not label or not re.fullmatch(WORKLOAD_LABEL, label):
        raise ConfigError(f"--label {label!r}: {WORKLOAD_LABEL_WORDS}")
    from hpcds1mpi import kernels as registry

    if kernel := registry.declaring(label):  # stored, learnt, answered as the kernel's (s41 D8)
        what = "the name of a kernel" if kernel == label else f"the label of kernel {kernel} " \
            "run with options (a plan's extra)"
        raise ConfigError(f"--label {label!r} is {what} (`hpcds1mpi kernels` lists them); your "
                          "program's runs would be taken for the kernel's: choose another "
                          "--label")
    runs = []
    configs = list(enumerate_configs(
        partition if valid_only else None, nodes=node_list, ranks_per_node=rpn_list,
        threads=thread_list, devices=device_list, precisions=precision_list))
    for size in size_list:
        for config in configs:
            spec = RunSpec(label, size, config, seed or 0, (("command", program),))
            format_command(program, spec)  # an unparsable command fails now
            runs.append(spec)
    if not runs:  # why, by reason with counts (s33 tester A10)
        from hpcds1mpi.measure.left_out import LeftOut

        left_out = LeftOut()
        if valid_only and partition is not None:
            left_out.layouts(partition, node_list, rpn_list, thread_list, device_list,
                             precision_list)
        raise ConfigError("the ranges leave no configuration to run" + (
            f": left out {left_out.line()}; give ranges that fit the partition"
            if left_out.line() else ""))
    if timeout is not None and not timeout > 0:
        raise ConfigError(f"--timeout {timeout:g}: give a positive number of seconds")
    if snapshot_every is not None and not snapshot_every >= 0:
        raise ConfigError(f"--snapshot-every {snapshot_every:g}: give 0 or more seconds")
    # A bound not given yields to the one given: --max-repeats 1 alone means 1 launch (tune
    # --program passes only its --max-repeats), --min-repeats 12 alone at most 12.
    lo = min(MIN_REPEATS, max_repeats) if min_repeats is None and isinstance(
        max_repeats, int) and max_repeats >= 1 else MIN_REPEATS if min_repeats is None \
        else min_repeats
    lifted = lifts_cap(min_time, max_repeats)  # --min-time alone: its time, not 10 launches
    hi = UNCAPPED if lifted else max(MAX_REPEATS, lo) if max_repeats is None else max_repeats
    for name, value in (("--min-repeats", lo), ("--max-repeats", hi)):
        if not isinstance(value, int) or value < 1:
            raise ConfigError(f"{name} {value}: give a whole number of 1 or more")
    if hi < lo:
        raise ConfigError(f"--max-repeats {hi} is below --min-repeats {lo}; raise it")
    if warmup is not None and (not isinstance(warmup, int) or warmup < 0):
        raise ConfigError(f"--warmup {warmup}: give 0 or more launches")
    least = MIN_TIME if min_time is None else min_time
    if not (isinstance(least, (int, float)) and math.isfinite(least) and least >= 0):
        raise ConfigError(f"--min-time {least}: give 0 or more seconds")
    plan = SweepPlan(runs=runs, timeout=float(timeout) if timeout else PROGRAM.timeout,
                     min_repeats=lo, max_repeats=hi, warmup=warmup or PROGRAM.warmup,
                     min_time=float(least),
                     cap_note=lifted_cap_note(least, MAX_REPEATS, "--max-repeats")
                     if lifted else "",
                     snapshot_every=30.0 if snapshot_every is None else float(snapshot_every),
                     source={"command": program, "label": label, "sizes": str(sizes)})
    return plan
