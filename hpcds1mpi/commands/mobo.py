"""``hpcds1mpi mobo``: runtime-energy Pareto front of a job's configuration by MOBO or a baseline.

The objective is the surrogate bundle (``--model DIR``) or, with ``--analytic``, a modelled
roofline cost of the kernel's own work model (a test objective, labelled ``modelled`` in every
output; :mod:`hpcds1mpi.surrogates.analytic_objective`). The candidate set is enumerated
(``--space nodes``: node count alone, the paper's; ``--space full``: nodes, ranks per node,
threads, device, precision), so the exact front is computed too and every hypervolume is also
reported as a ratio to it, under one fixed reference point recorded in the outputs.
Configurations that do not fit in memory (a bundle's by the limits ``recommend`` applies,
:func:`memory_judge`; the modelled objective's by its own model) are left out before the
search, in one line; when none fits, the command says so and exits 2.
"""

from __future__ import annotations

import click

from hpcds1mpi.measure.printable import printable
from hpcds1mpi.schemas.numbers import COUNT, SEED, SIZE
from hpcds1mpi.schemas.paths import BUNDLE_IS_CODE, NonEmptyPath

METHOD_CHOICES = ("mobo", "sobo-runtime", "sobo-energy", "random", "exact", "all")


@click.command(name="mobo")
@click.option("--model", "model_dir", type=NonEmptyPath(), default=None,
              help="Model bundle directory (the objective; default: the bundle shipped with the "
                   "package). " + BUNDLE_IS_CODE)
@click.option("--analytic", is_flag=True,
              help="Use the modelled roofline objective instead of a bundle (test fixture).")
@click.option("--workload", required=True, help="Workload (kernel or job label) the bundle knows.")
@click.option("--size", type=SIZE, required=True, help="Problem size.")
@click.option("--cluster", "cluster_file", type=NonEmptyPath(), default=None,
              help="Cluster TOML file (else the bundle's recorded partition).")
@click.option("--partition", default=None, help="Partition name.")
@click.option("--objectives", default="runtime,energy", show_default=True,
              help="Two objectives from runtime, energy, power.")
@click.option("--budget", type=COUNT, default=300, show_default=True, help="Evaluations allowed.")
@click.option("--method", type=click.Choice(METHOD_CHOICES), default="mobo", show_default=True,
              help="Method ('all' runs every method for the plot).")
@click.option("--space", type=click.Choice(("nodes", "full")), default="nodes", show_default=True,
              help="Design space.")
@click.option("--node-counts", type=click.Choice(("pow2", "all")), default="pow2", show_default=True,
              help="Node counts of the full space: powers of two (and the maximum), or every "
                   "count 1..max nodes (the nodes space always has every count).")
@click.option("--n-init", type=COUNT, default=None, help="Initial design size (default d+1, >= 4).")
@click.option("--out", "out_dir", type=NonEmptyPath(fix="give a folder for the mobo outputs"),
              default="mobo_out", show_default=True,
              help="Output directory (pareto.csv, mobo.json, pareto.png).")
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--model-partition", default=None,
              help="Extrapolate: give the bundle this trained partition's code while the hardware "
                   "comes from --cluster/--partition (a prediction outside the trained range).")
@click.option("--threads", type=COUNT, default=1, show_default=True,
              help="Torch threads for the GP fits and the acquisition (their matrices are "
                   "small: one thread is fastest unless the machine is idle).")
@click.option("--energy-from", type=click.Choice(("bundle", "power-model")), default="bundle",
              show_default=True,
              help="Energy objective: the bundle's prediction, or modelled = predicted runtime x "
                   "the partition's modelled allocation power.")
def command(model_dir, analytic, workload, size, cluster_file, partition, objectives, budget,
            method, space, node_counts, n_init, out_dir, seed, model_partition, threads,
            energy_from):
    """Find the runtime-energy Pareto front of a job's configuration."""
    from hpcds1mpi.errors import ConfigError

    from hpcds1mpi.surrogates.objectives import objective_columns

    from hpcds1mpi.atomic import check_output_folder

    columns = objective_columns(objectives.split(","))
    if len(columns) != 2:  # the Spread and the plot are of two objectives
        raise ConfigError(f"--objectives {objectives}: give exactly two, e.g. runtime,energy")
    if budget < 1:
        raise ConfigError(f"--budget must be at least 1, got {budget}")
    check_output_folder(out_dir, "mobo outputs")  # before the work, not after it
    _check_own_outputs(out_dir)
    from hpcds1mpi.output_paths import refuse_inside_bundle, refuse_inside_model

    refuse_inside_model(out_dir, model_dir, what="mobo outputs")  # learn then refused it (M11)
    refuse_inside_bundle(out_dir, what="mobo outputs")  # another bundle (s48 review RX2)
    node_counts = node_counts if space == "full" else "all"  # the nodes space has every count
    problem, part, source, left_out, outside, too_big = _problem(
        model_dir, analytic, workload, size, cluster_file, partition, columns, space,
        model_partition, energy_from, node_counts)
    _run_and_report(problem, part, source, columns, workload, size, space, method, budget, n_init,
                    out_dir, seed, node_counts, left_out, threads, outside, too_big)


def _problem(model_dir, analytic, workload, size, cluster_file, partition, columns, space,
             model_partition=None, energy_from="bundle", node_counts="pow2"):
    from hpcds1mpi.places import resolve_partition
    from hpcds1mpi.surrogates import mobo
    from hpcds1mpi.surrogates.objectives import BundleObjective, partition_for_bundle

    outside = None  # the measured size range when ``size`` lies beyond it
    if analytic:
        from hpcds1mpi.surrogates.analytic_objective import AnalyticObjective

        part = resolve_partition(cluster_file, partition)
        objective = AnalyticObjective(part)
        objective.check_workload(workload)
        source = "modelled"
        offer = None
    else:
        from hpcds1mpi.decide.recommend_prepare import refuse_job_bundle
        from hpcds1mpi.decide.system1_reading import system1_reading
        from hpcds1mpi.surrogates.bundle import load_bundle

        bundle = load_bundle(model_dir)
        refuse_job_bundle(bundle, "mobo")  # a job-table model has no configurations to search
        part = resolve_partition(cluster_file, partition) if cluster_file else \
            partition_for_bundle(bundle, partition)
        model_partition = _model_partition(bundle, part, model_partition)
        objective = BundleObjective(bundle, part, objectives=columns,
                                    model_partition=model_partition, energy_from=energy_from,
                                    memory=memory_judge(bundle, part),
                                    reading=system1_reading(bundle, part, workload, size))
        objective.check_workload(workload)
        source = "surrogate"
        offer = _measured_offer(bundle, workload, part)
        outside = _size_outside(bundle, workload, size)
    cands = mobo.build_candidates(part, workload, size, space,
                                  nodes=mobo.node_counts(part, node_counts), offer=offer)
    problem = mobo.Problem(cands, objective, columns)
    problem, too_big, memory_line = _within_memory(problem, part, workload, size, space)
    problem.fix_reference_point()
    left_out = (offer.left_out if offer is not None else []) + ([memory_line] if too_big else [])
    return problem, part, source, left_out, outside, too_big


def memory_judge(bundle, part):
    """``judge(configs, prediction) -> (need, limit)`` for :class:`BundleObjective`: each
    configuration's memory need and the limit it must stay under, MB, as ``recommend`` judges
    them (:mod:`hpcds1mpi.decide.memory_limits`: limits learned from the out-of-memory runs of
    the trained partition of ``part``'s hardware, the name it is predicted under; beyond the
    measured sizes a kernel's need never below its declared working set). A stand-in bundle
    without training data gets the nominal limit."""
    from dataclasses import replace

    import numpy as np

    from hpcds1mpi.decide.bundle_cache import measured_levels
    from hpcds1mpi.decide.memory_limits import (MemoryLimit, declared_need_mb,
                                                learn_memory_limits, memory_need_and_limit)
    from hpcds1mpi.decide.trained_hardware import trained_names

    limit = MemoryLimit.nominal(part)
    if hasattr(bundle, "training_frame") or hasattr(bundle, "training_columns"):
        trained = trained_names(bundle, [part]).get(part.name, part.name)
        limit = replace(learn_memory_limits(bundle, [replace(part, name=trained)])[trained],
                        partition=part.name)
    measured = getattr(bundle, "size_range", None) or {}

    def judge(configs, pred):
        n = len(configs)
        ranks = (configs["nodes"] * configs["ranks_per_node"]).to_numpy()
        precision = configs["precision"].astype(str).to_numpy()
        declared = np.full(n, np.nan)  # NaN: the learned need alone
        for (workload, size), rows in configs.groupby(["workload", "size"],
                                                      sort=False).indices.items():
            levels = measured_levels(bundle).get(str(workload))
            if levels is not None and levels.external:  # a program declares no memory model
                continue
            got = declared_need_mb(str(workload), int(size), ranks[rows], precision[rows],
                                   measured.get(str(workload)))
            if got is not None:
                declared[rows] = got
        cols = {"device": configs["device"].astype(str).to_numpy(),
                "ranks_per_node": configs["ranks_per_node"].to_numpy(),
                "peak_rss_mb": np.asarray(pred["peak_rss_mb"], dtype=float)
                if "peak_rss_mb" in pred else np.full(n, np.nan),  # a bundle without it
                "partition": np.full(n, part.name)}
        return memory_need_and_limit(cols, [part], {part.name: limit}, declared)

    return judge


def _within_memory(problem, part, workload: str, size: int, space: str):
    """``(problem, k, line)``: the problem without the ``k`` configurations that do not fit in
    memory (the objective's ``oom``: the limits ``recommend`` applies), so that none is
    searched or on a front, and the line that says so (None when all fit).

    Raises:
        ConfigError: none fits; one line with the smallest need, the limit and what to try.
    """
    import numpy as np

    from hpcds1mpi.errors import ConfigError

    problem.evaluate_all()  # the exact front needs every candidate's values anyway
    table = problem.table
    too_big = (table["status"] == "oom").to_numpy()
    if not too_big.any():
        return problem, 0, None
    smallest = usable = ""  # words for the modelled objective, which records no need
    if "mem_need_mb" in table:
        need, limit = table["mem_need_mb"].to_numpy(float), table["mem_limit_mb"].to_numpy(float)
        per = np.where(problem.candidates["device"].to_numpy(str) == "gpu", "GPU", "node")
        i = int(np.nanargmin(np.where(too_big, need, np.nan)))
        smallest = f": the smallest needs ~{_gb(need[i])} per {per[i]}"
        usable = "usable " + ", ".join(  # the limit of each kind of configuration left out
            f"{_gb(limit[j])} per {per[j]}"
            for j in sorted({per[j]: j for j in np.flatnonzero(too_big)}.values()))
    if too_big.all():
        wider = ", --space full (narrower precisions)" if space == "nodes" else ""
        limit_words = f"; {usable}" if usable else ""
        raise ConfigError(f"no configuration of {workload} size {size} fits in memory on "
                          f"partition {part.name!r}{smallest}{limit_words}; try a smaller "
                          f"--size{wider}, or a partition with more memory or more nodes")
    n, k = len(too_big), int(too_big.sum())
    limit_words = f" ({usable})" if usable else ""
    return problem.subset(~too_big), k, (
        f"{k} of {n} configurations need more memory than partition {part.name!r} gives"
        f"{limit_words}: not searched")


def _gb(mb: float) -> str:
    """``mb`` in GB, as ``recommend`` says it (a size far beyond the machine in 3 digits)."""
    gb = mb / 1000.0
    return f"{gb:.1f} GB" if gb < 1e6 else f"{gb:.3g} GB"


def _model_partition(bundle, part, model_partition: str | None) -> str | None:
    """The trained partition to predict ``part`` under: ``--model-partition`` when given, else
    ``part`` itself when trained, else the trained partition of the same hardware (said in a
    note, as ``recommend`` does).

    Raises:
        ModelError: no trained partition has ``part``'s hardware (names --model-partition).
    """
    from hpcds1mpi.decide.trained_hardware import matching_partition, trained_partitions
    from hpcds1mpi.errors import ModelError

    known = trained_partitions(bundle)
    if model_partition is not None or not known or part.name in known:
        return model_partition
    trained = matching_partition(bundle, part)
    if trained is None:
        raise ModelError(f"the model bundle was not trained for partition {part.name!r} nor "
                         f"for its hardware ({part.cores_per_node} cores, {part.memory_gb:g} GB, "
                         f"{part.gpus_per_node} GPUs); it knows {', '.join(sorted(known))}: "
                         "pass --model-partition NAME to extrapolate from one of them")
    # stderr, as every note: on stdout it came before the outputs were written, and a full
    # stdout or a reader gone (`| head -1`) had ended mobo before it wrote them (s32 tester T7)
    click.echo(f"note: partition {part.name!r} has the hardware of trained partition "
               f"{trained!r}: predicted as {trained!r}", err=True)
    return trained


def _size_outside(bundle, workload: str, size: int) -> tuple[float, float] | None:
    """The measured size range of ``workload`` when ``size`` lies outside it (the model
    extrapolates: warned in one line), else None."""
    lo_hi = (getattr(bundle, "size_range", None) or {}).get(workload)
    if lo_hi is None:
        return None
    lo, hi = float(lo_hi[0]), float(lo_hi[1])
    if lo <= size <= hi:
        return None
    click.echo(f"warning: size {size} is outside the measured range {lo:g}-{hi:g} of "
               f"{workload} (the model extrapolates): the front is predicted, not measured",
               err=True)
    return lo, hi


def _measured_offer(bundle, workload, part):
    """A program's measured levels as MOBO's offer (None: a kernel, its declared knobs)."""
    from hpcds1mpi.surrogates.levels import bundle_levels
    from hpcds1mpi.surrogates.measured_offer import measured_offer

    levels = bundle_levels(bundle, workload)
    if levels is None:
        return None
    return measured_offer(levels, ["cpu", "gpu"] if part.gpus_per_node else ["cpu"],
                          part.cores_per_node)


def _run_and_report(problem, part, source, columns, workload, size, space, method, budget, n_init,
                    out_dir, seed, node_counts, left_out=(), threads=1, outside=None,
                    too_big=0):
    import json
    from pathlib import Path

    from hpcds1mpi.atomic import write_error
    from hpcds1mpi.surrogates.pareto import hypervolume, spread
    from hpcds1mpi.analysis.pareto_plot import plot_fronts
    from hpcds1mpi.surrogates import mobo

    exact_idx, exact_front = problem.exact()
    exact_hv = hypervolume(exact_front, problem.ref_point)
    # Every candidate is already evaluated for the exact front and the reference point: methods
    # look values up and see only the candidates they ask for.
    problem.objective = mobo.CandidateTable(problem, source)
    methods = ["mobo", "sobo-runtime", "sobo-energy", "random"] if method == "all" else [method]
    exactly = method not in ("all", "exact") and len(problem.candidates) <= budget
    if exactly:
        # The budget covers the whole space: scoring every candidate is the exact front,
        # already computed, where a search would spend seconds to find at most the same.
        methods = ["exact"]
    from contextlib import nullcontext

    limit = nullcontext()
    if set(methods) - {"exact", "random"}:
        import torch
        from threadpoolctl import threadpool_limits

        torch.set_num_threads(threads)  # before the first GP: a shared machine thrashes on more
        # numpy's and SciPy's BLAS too (the GP refits' L-BFGS, the pre-filter): their own
        # thread pools spun both cores of a busy machine (-25 % CPU at 80 evaluations, same picks)
        limit = threadpool_limits(limits=threads)
    with limit:
        results = {m: mobo.run(problem, m, budget, seed=seed, n_init=n_init) for m in methods}
    main = results[methods[0]]
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(exc, out, "mobo outputs") from None
    front_rows = problem.candidates.loc[main.front_indices()].copy()
    values = problem.table.loc[front_rows.index]
    for col in ("runtime_s", "energy_j", "avg_power_w"):
        front_rows[col] = values[col].to_numpy()
    front_rows = front_rows.sort_values(columns[0])
    summaries = {}
    for name, res in results.items():
        s = res.summary()
        s["hv_ratio_to_exact"] = s["hv"] / exact_hv if exact_hv > 0 else float("nan")
        s["spread"] = spread(res.front(), exact_front) if len(res.front()) else float("nan")
        summaries[name] = s
    doc = {
        **summaries[methods[0]],
        "workload": workload, "size": size, "space": space, "node_counts": node_counts,
        "partition": part.name,
        "objectives": columns, "objective_source": source, "candidates": len(problem.candidates),
        "exact_hv": exact_hv, "exact_front_size": int(len(exact_idx)),
        "exact_front": problem.candidates.loc[exact_idx].assign(
            **{c: exact_front[:, i] for i, c in enumerate(columns)}).to_dict("records"),
        "front": front_rows.to_dict("records"),
        "methods": summaries,
        "settings": {**mobo.profile_dict(), "torch_threads": threads},
        "left_out": list(left_out),
        # configurations that do not fit in memory: left out of the search (see left_out)
        "memory_left_out": int(too_big),
        "requested_method": method, "scored_exactly": bool(exactly or method == "exact"),
        # the measured size range the size lies beyond (the front is extrapolated), else None
        "extrapolated_beyond_sizes": list(outside) if outside else None,
    }
    label = {"runtime_s": "runtime (s)", "energy_j": "energy (J)", "avg_power_w": "power (W)"}
    from hpcds1mpi.output_sets import write_set

    # Written only now that every figure is computed, and as one set.
    write_set(out, {
        "pareto.csv": ("Pareto front", lambda tmp: front_rows.to_csv(tmp, index=False)),
        "mobo.json": ("MOBO summary", lambda tmp: tmp.write_text(
            json.dumps(doc, indent=2, default=_plain), encoding="utf-8")),
        "pareto.png": ("Pareto plot", lambda tmp: plot_fronts(
            str(tmp), {m: r.front() for m, r in results.items()}, exact_front,
            problem.ref_point, labels=[label[c] for c in columns],
            title=f"{workload} size {size} on {part.name} ({space} space, {source})",
            force=True))})  # write_set's own temporary: --out was checked before the search
    # One "budget" figure, the asked --budget (s47 tester N6: this line gave the evaluations
    # run, the next one --budget); the evaluations follow when they differ from it.
    used = summaries[methods[0]]["evaluations"]
    click.echo(f"{workload} size {size} on {part.name}: {len(problem.candidates)} candidate"
               f"{'' if len(problem.candidates) == 1 else 's'}, "
               f"objective {source}, budget {budget}"
               + (f", {used} evaluation{'' if used == 1 else 's'}"
                  f"{' per method' if len(methods) > 1 else ''}" if used != budget else ""))
    click.echo(f"reference point (fixed): {', '.join(f'{v:.6g}' for v in problem.ref_point)}")
    if exactly:
        n = len(problem.candidates)
        click.echo(f"{n} candidate{'s' if n != 1 else ''} <= budget {budget}: every candidate "
                   f"scored exactly (the exact front; no {method} search needed)"
                   + ("; one configuration is nothing to choose from: try --space full or a "
                      "partition with more nodes" if n == 1 else ""))
    for line in left_out:  # a program is offered only what it was measured with
        click.echo(f"left out: {line}")
    for name, s in summaries.items():
        click.echo(f"{name:>13}: HV {s['hv']:.6g} = {s['hv_ratio_to_exact']:.4f} of exact, "
                   f"Spread {s['spread']:.3f}, {s['failed_evaluations']} failed evaluations, "
                   f"{s['wall_s']:.1f} s")
    kind = "modelled" if source == "modelled" else "predicted"
    if outside:
        kind += f", extrapolated beyond the measured sizes {outside[0]:g}-{outside[1]:g}"
    click.echo(f"Pareto front of {methods[0]} ({len(front_rows)} "
               f"point{'s' if len(front_rows) != 1 else ''}, {kind}):")
    show = ["nodes", "ranks_per_node", "threads", "device", "precision", *columns]
    click.echo(front_rows[show].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    click.echo("wrote " + ", ".join(printable(out / name)
                                    for name in ("pareto.csv", "mobo.json", "pareto.png")))


def _plain(value):
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


#: The files a mobo run writes into its --out folder (anything else there is left alone).
OUTPUTS = ("pareto.csv", "mobo.json", "pareto.png")


def _check_own_outputs(out_dir: str) -> None:
    """Refuse a model bundle or quickstart folder (their commands refuse one holding other
    files: `mobo --out MODEL` had left train and learn calling the bundle "not a bundle"), and
    a folder with a pareto.csv / mobo.json / pareto.png that no earlier mobo run wrote (a
    user's own pareto.csv was replaced without a word)."""
    import json
    from pathlib import Path

    from hpcds1mpi.commands.quickstart import MARK
    from hpcds1mpi.errors import OutputError
    from hpcds1mpi.output_paths import has_bundle_manifest

    out = Path(out_dir)
    # is_bundle's manifest test, not its "no other file" one (mobo's may be there)
    owner = ("a model bundle" if has_bundle_manifest(out) else
             "a quickstart folder" if (out / MARK).exists() else None)
    if owner:
        raise OutputError(f"--out {out} is {owner}, which must hold only its own files; "
                          "choose another --out for the mobo outputs (a new folder)")
    present = [name for name in OUTPUTS if (out / name).exists()]
    if not present:
        return
    try:
        with open(out / "mobo.json", "rb") as fh:  # a summary is a few hundred KB
            doc = json.loads(fh.read(50_000_000))
        ours = isinstance(doc, dict) and {"objectives", "exact_hv", "methods"} <= doc.keys()
    except (OSError, ValueError, RecursionError):
        ours = False
    if not ours:
        raise OutputError(f"{out} holds {', '.join(present)} that no mobo run wrote; choose "
                          "another --out (or move them)")

