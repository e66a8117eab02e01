"""Pluggable objectives for MOBO: what a configuration costs in runtime and energy.

The protocol is one call. An objective takes a pandas DataFrame of candidate configurations,
one row each, with the columns

    nodes, ranks_per_node, threads, device, precision   (the configuration)
    workload, size                                       (the problem)

and returns a DataFrame aligned with it (same index, same order) holding

    runtime_s     seconds (NaN when infeasible)
    energy_j      joules of the whole job (NaN when infeasible)
    avg_power_w   energy_j / runtime_s
    feasible      bool; False for failed / oom / timeout / unsupported / wrong runs
    status        ok / failed / oom / timeout / unsupported / wrong / crashed / predicted-fail

A failed evaluation is recorded as infeasible with NaN objectives, never as a number that could
look best (or worst, which would still steer the GP). Three objectives are provided:

- :class:`BundleObjective` wraps a trained surrogate bundle (the paper's setting).
- :class:`RealRunObjective` adapts any function that runs one configuration for real (the sweep
  machinery, used by System 2) and reports a runs-table row.
- :class:`~.analytic_objective.AnalyticObjective` (its own module) is a *modelled* roofline /
  latency-bandwidth cost of the kernels' own work models. It is a test fixture and a clearly
  labelled fallback for benchmarks when no bundle exists; nothing it returns is measured.

:class:`TableObjective` replays values already computed for a whole candidate set (the
benchmarks compute every candidate once for the exact front, then let each method look up only
what it asks for).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence, runtime_checkable

from hpcds1mpi.errors import ConfigError, ModelError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from hpcds1mpi.cluster import Partition

CONFIG_COLUMNS = ("nodes", "ranks_per_node", "threads", "device", "precision")
PROBLEM_COLUMNS = ("workload", "size")
#: Objective names a user may ask for, and the column each one reads.
OBJECTIVE_COLUMNS = {"runtime": "runtime_s", "energy": "energy_j", "power": "avg_power_w"}
OUTPUT_COLUMNS = ("runtime_s", "energy_j", "avg_power_w", "feasible", "status")


@runtime_checkable
class Objective(Protocol):
    """What MOBO calls to evaluate configurations.

    Attributes:
        source: where the numbers come from: ``"surrogate"``, ``"measured"`` or ``"modelled"``.
    """

    source: str

    def __call__(self, configs: "pd.DataFrame") -> "pd.DataFrame":
        """Evaluate ``configs`` (n rows) and return n rows of :data:`OUTPUT_COLUMNS`."""
        ...


def objective_columns(names: Sequence[str]) -> list[str]:
    """Map user objective names (``runtime``, ``energy``, ``power``) to result columns.

    Raises:
        ConfigError: for an unknown name, a repeated name, or fewer than two objectives.
    """
    cols = []
    for name in names:
        key = name.strip().lower()
        if key in OBJECTIVE_COLUMNS.values():
            key = next(k for k, v in OBJECTIVE_COLUMNS.items() if v == key)
        if key not in OBJECTIVE_COLUMNS:
            raise ConfigError(
                f"unknown objective {name!r}; choose from {', '.join(OBJECTIVE_COLUMNS)}"
            )
        cols.append(OBJECTIVE_COLUMNS[key])
    if len(set(cols)) != len(cols):
        raise ConfigError(f"objective listed twice in {','.join(names)}")
    if len(cols) < 2:
        raise ConfigError(
            "multi-objective optimisation needs two objectives, e.g. --objectives runtime,energy"
        )
    return cols


def finalise(frame: "pd.DataFrame") -> "pd.DataFrame":
    """Make an objective's output honest: infeasible rows get NaN objectives.

    Also marks rows infeasible whose runtime or energy is missing, non-finite or <= 0, and
    fills ``avg_power_w`` / ``energy_j`` from each other where one is missing.
    """
    import numpy as np

    out = frame.copy()
    for col in ("runtime_s", "energy_j", "avg_power_w"):
        if col not in out:
            out[col] = np.nan
        out[col] = out[col].astype(float)
    need_energy = out["energy_j"].isna() & out["avg_power_w"].notna()
    out.loc[need_energy, "energy_j"] = out.loc[need_energy, "avg_power_w"] * out.loc[need_energy, "runtime_s"]
    need_power = out["avg_power_w"].isna() & out["energy_j"].notna()
    out.loc[need_power, "avg_power_w"] = out.loc[need_power, "energy_j"] / out.loc[need_power, "runtime_s"]
    if "feasible" not in out:
        out["feasible"] = True
    if "status" not in out:
        out["status"] = np.where(out["feasible"], "ok", "failed")
    values = out[["runtime_s", "energy_j", "avg_power_w"]].to_numpy(dtype=float)
    good = np.all(np.isfinite(values) & (values > 0), axis=1)
    bad_numbers = out["feasible"].astype(bool) & ~good
    out.loc[bad_numbers, "status"] = "failed"
    out["feasible"] = out["feasible"].astype(bool) & good
    out.loc[~out["feasible"], ["runtime_s", "energy_j", "avg_power_w"]] = np.nan
    return out[list(OUTPUT_COLUMNS)]


# ------------------------------------------------------------------------------------------
# Surrogate bundle


class BundleObjective:
    """The surrogate bundle's predictions for one problem on one partition.

    A configuration counts as failed when the bundle's ``fail_prob`` is at least
    ``fail_threshold`` (or its predictions are not finite and positive), and as ``oom`` when
    ``memory`` says it needs more memory than the partition gives.

    Args:
        bundle: an object with ``predict(df) -> DataFrame``, ``targets`` and ``workloads``
            (see ``hpcds1mpi.surrogates.bundle``).
        partition: the partition whose hardware columns are passed to the bundle.
        objectives: result columns asked for (e.g. ``["runtime_s", "energy_j"]``).
        fail_threshold: predicted failure probability at which a configuration is infeasible.
        model_partition: extrapolation to hardware the bundle never saw: the name of a trained
            partition whose category code the bundle is given, while the hardware columns
            (cores per node, memory, GPUs, node counts) come from ``partition``. The result is
            the model's extrapolation, carried by the kernels' analytic work/communication
            features, not a prediction within the trained range.
        energy_from: ``"bundle"``: the bundle's own energy/power prediction. ``"power-model"``:
            *modelled* energy = predicted runtime x the partition's modelled power of the
            allocation (``hpcds1mpi.measure.meters.modelled_power``: every allocated node's idle power
            plus each busy core's share of the dynamic range, busy cores = ranks x threads, GPUs
            fully busy when the device is gpu). That is the formula the reference telemetry's
            energy column was made with, applied with the target partition's power figures;
            use it when the bundle's energy was learnt on one node and does not scale with the
            allocation.
        memory: ``memory(configs, prediction) -> (need, limit)``, two ``(n,)`` arrays in MB:
            each configuration's memory need and the limit it must stay under; a need above
            its limit is ``oom``, and the output also carries both (``mem_need_mb``,
            ``mem_limit_mb``). The ``mobo`` command passes the limits ``recommend`` applies
            (``decide.memory_limits``, a later stage than this one). None: not judged.
        reading: ``reading(configs, prediction) -> prediction``: the bundle's answer as a later
            stage reads it; the ``mobo`` command passes System 1's (runs measured at and
            around the size replace the model's runtime and energy there, as ``recommend``
            prints them). None: the model's own answer.

    Raises:
        ModelError: the bundle predicts no energy/power when it is asked for, or does not know
            the partition.
    """

    source = "surrogate"

    def __init__(self, bundle: Any, partition: "Partition", objectives: Sequence[str] = ("runtime_s", "energy_j"),
                 fail_threshold: float = 0.5, model_partition: str | None = None,
                 energy_from: str = "bundle",
                 memory: "Callable[[pd.DataFrame, Any], tuple] | None" = None,
                 reading: "Callable[[pd.DataFrame, Any], Any] | None" = None) -> None:
        if energy_from not in ("bundle", "power-model"):
            raise ModelError(f"unknown energy source {energy_from!r}; use bundle or power-model")
        self.energy_from = energy_from
        self.bundle = bundle
        self.partition = partition
        self.model_partition = model_partition or partition.name
        self.fail_threshold = fail_threshold
        targets = {str(t) for t in getattr(bundle, "targets", ())}
        if "runtime_s" not in targets:
            raise ModelError("the model bundle does not predict runtime_s; retrain it with runtime")
        wants_energy = any(c in ("energy_j", "avg_power_w") for c in objectives)
        if wants_energy and energy_from == "bundle" and not targets & {"energy_j", "avg_power_w"}:
            raise ModelError(
                "the model bundle has no energy target (energy_j or avg_power_w); retrain it on "
                "telemetry with energy, or use --objectives runtime,<other>"
            )
        known_parts = getattr(bundle, "partitions", None)
        if known_parts and self.model_partition not in set(known_parts):
            known = ", ".join(sorted(known_parts))
            if model_partition:  # the trained partition asked for is not one
                raise ModelError(
                    f"model partition {model_partition!r} is not one the model bundle was "
                    f"trained on; it knows {known}: give one of them (mobo: --model-partition)")
            raise ModelError(
                f"the model bundle was not trained for partition {partition.name!r}; it knows "
                f"{known}: predict it as one of them with model_partition=NAME (mobo: "
                "--model-partition NAME), or use a partition the bundle was trained on")
        self.memory = memory
        self.reading = reading

    def check_workload(self, workload: str) -> None:
        """Raise :class:`ModelError` for a workload the bundle never saw."""
        known = list(getattr(self.bundle, "workloads", ()) or ())
        if known and workload not in known:
            raise ModelError(
                f"the model bundle does not know workload {workload!r}; it knows {', '.join(sorted(known))}"
            )

    def __call__(self, configs: "pd.DataFrame") -> "pd.DataFrame":
        import numpy as np

        for w in configs["workload"].unique():
            self.check_workload(str(w))
        frame = configs.copy()
        frame["ranks"] = frame["nodes"] * frame["ranks_per_node"]
        frame["partition"] = self.model_partition
        frame["cores_per_node"] = self.partition.cores_per_node
        frame["memory_gb"] = self.partition.memory_gb
        frame["gpus_per_node"] = self.partition.gpus_per_node
        pred = self.bundle.predict(frame)
        if self.reading is not None:
            pred = self.reading(configs, pred)
        out = configs[[]].copy()
        out["runtime_s"] = np.asarray(pred["runtime_s"], dtype=float)
        out["energy_j"] = np.asarray(pred["energy_j"], dtype=float) if "energy_j" in pred else np.nan
        out["avg_power_w"] = np.asarray(pred["avg_power_w"], dtype=float) if "avg_power_w" in pred else np.nan
        if self.energy_from == "power-model":
            out["avg_power_w"] = self._modelled_power(configs)
            out["energy_j"] = out["runtime_s"] * out["avg_power_w"]
        if "fail_prob" in pred:
            fail = np.asarray(pred["fail_prob"], dtype=float)
            out["feasible"] = ~(fail >= self.fail_threshold) & np.isfinite(fail)
        else:
            out["feasible"] = True
        out["status"] = np.where(out["feasible"], "ok", "predicted-fail")
        if self.memory is None:
            return finalise(out)
        need, limit = (np.asarray(a, dtype=float) for a in self.memory(configs, pred))
        too_big = np.isfinite(need) & (need > limit)  # as recommend: an unknown need passes
        out.loc[too_big, "feasible"] = False
        out.loc[too_big, "status"] = "oom"
        out = finalise(out)
        out["mem_need_mb"], out["mem_limit_mb"] = need, limit
        return out

    def _modelled_power(self, configs: "pd.DataFrame"):
        """``(n,)`` modelled average power (W) of each configuration's allocation."""
        import numpy as np

        from hpcds1mpi.measure.meters import modelled_power, power_model

        model = power_model(self.partition)
        watts = []
        for nodes, rpn, threads, device in zip(configs["nodes"], configs["ranks_per_node"],
                                               configs["threads"], configs["device"]):
            busy_cores = min(int(rpn) * int(threads), self.partition.cores_per_node) * int(nodes)
            gpus = int(nodes) * self.partition.gpus_per_node if device == "gpu" else 0
            # Unit window: cpu_s and gpu_busy_s are then busy cores and busy GPUs.
            watts.append(modelled_power(model, nodes=int(nodes), window_s=1.0, cpu_s=busy_cores,
                                        gpus=gpus, gpu_busy_s=float(gpus)))
        return np.asarray(watts, dtype=float)


# ------------------------------------------------------------------------------------------
# Real runs


class RealRunObjective:
    """Adapts a function that runs one configuration for real into an objective.

    ``run_one(row)`` receives one candidate row as a dict (configuration + problem columns) and
    returns a runs-table row as a dict (at least ``status`` and ``runtime_s``; ``energy_j`` or
    ``avg_power_w`` when energy is an objective). Only ``status == "ok"`` is feasible; an
    exception from ``run_one`` is recorded as ``crashed``. Every returned row is kept in
    ``history`` so nothing measured is lost.
    """

    source = "measured"

    def __init__(self, run_one: Callable[[dict], dict]) -> None:
        self.run_one = run_one
        self.history: list[dict] = []

    def __call__(self, configs: "pd.DataFrame") -> "pd.DataFrame":
        import pandas as pd

        rows = []
        for _, cand in configs.iterrows():
            try:
                result = dict(self.run_one(cand.to_dict()))
            except Exception as exc:  # a crashed run is a result, not a reason to stop tuning
                result = {"status": "crashed", "error": str(exc)}
            self.history.append({**cand.to_dict(), **result})
            status = str(result.get("status", "failed"))
            rows.append({
                "runtime_s": result.get("runtime_s", float("nan")),
                "energy_j": result.get("energy_j", float("nan")),
                "avg_power_w": result.get("avg_power_w", float("nan")),
                "feasible": status == "ok",
                "status": status,
            })
        return finalise(pd.DataFrame(rows, index=configs.index))


# ------------------------------------------------------------------------------------------
# Lookup of precomputed values


def _config_keys(frame: "pd.DataFrame") -> list[str]:
    """One "a|b|..." key per row of ``frame`` from its configuration and problem columns, each
    formatted as ``astype(str)`` does. Joined column by column: a row-wise pandas ``agg``
    doubled the cost of each of System 2's one-configuration lookups."""
    columns = [frame[c].astype(str).to_numpy() for c in CONFIG_COLUMNS + PROBLEM_COLUMNS]
    return ["|".join(values) for values in zip(*columns)]


class TableObjective:
    """Replays precomputed outputs for a candidate set, counting what was looked up.

    Args:
        candidates: the candidate DataFrame the table was computed on.
        table: the objective's output for every candidate, aligned with ``candidates``.
        source: the source label of the objective that made the table.
    """

    def __init__(self, candidates: "pd.DataFrame", table: "pd.DataFrame", source: str) -> None:
        self.source = source
        self._index = {k: i for i, k in enumerate(_config_keys(candidates))}
        self._table = table.reset_index(drop=True)
        self.calls = 0

    def __call__(self, configs: "pd.DataFrame") -> "pd.DataFrame":
        try:
            rows = [self._index[k] for k in _config_keys(configs)]
        except KeyError as exc:
            raise ConfigError(f"configuration {exc.args[0]} is not in the candidate table") from None
        self.calls += len(rows)
        out = self._table.iloc[rows].copy()
        out.index = configs.index
        return out


def partition_for_bundle(bundle: Any, name: str | None = None) -> "Partition":
    """The partition a bundle was trained on, rebuilt from its recorded hardware.

    ``max_nodes`` is the recorded value, else the largest node count in its training data.

    Raises:
        ModelError: the bundle does not know ``name``, knows several and none was named, or
            recorded no hardware for it (job logs: give the cluster file instead).
    """
    from hpcds1mpi.cluster import Partition

    parts = dict(getattr(bundle, "partitions", {}) or {})
    if not parts:
        raise ModelError("the model bundle records no partition; give --cluster FILE --partition P")
    if name is None:
        if len(parts) > 1:
            raise ModelError(f"the model bundle knows several partitions ({', '.join(sorted(parts))}); "
                             "choose one with --partition")
        name = next(iter(parts))
    if name not in parts:
        raise ModelError(f"the model bundle was not trained for partition {name!r}; it knows "
                         f"{', '.join(sorted(parts))}: name one of them with --partition, or "
                         f"describe {name!r} with --cluster FILE --partition {name}")
    hw = parts[name]
    if hw.get("cores_per_node") is None or hw.get("memory_gb") is None:
        raise ModelError(f"the model bundle records no hardware for partition {name!r}; "
                         "describe it with --cluster FILE --partition P")
    max_nodes = hw.get("max_nodes")
    if max_nodes is None and hasattr(bundle, "training_frame"):
        frame = bundle.training_frame()
        if "partition" in frame and "nodes" in frame:
            seen = frame.loc[frame["partition"].astype(str) == name, "nodes"]
            max_nodes = int(seen.max()) if len(seen) else None
    gpus = int(hw.get("gpus_per_node") or 0)
    return Partition(name=name, cores_per_node=int(hw["cores_per_node"]), memory_gb=float(hw["memory_gb"]),
                     max_nodes=int(max_nodes or 1), gpus_per_node=gpus,
                     gpu_memory_gb=float(hw.get("gpu_memory_gb") or (16.0 if gpus else 0.0)))
