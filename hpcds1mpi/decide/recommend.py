"""``recommend``: where and how to run a job, or a calibration sweep when it is not familiar.

The pieces: System 1 scores every configuration of every allowed partition
(:mod:`hpcds1mpi.decide.system1`), the guard decides whether the answer may be acted on
(:mod:`hpcds1mpi.decide.guard`), partitions where the job failed before are skipped (a small JSON
failure history), and the result renders as a table, as JSON, or as a batch script
(:mod:`hpcds1mpi.launch.scripts`). An escalated job gets no guessed settings: a short calibration sweep
over the configurations the model is least sure about is written instead.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from hpcds1mpi.decide import guard as guard_mod
from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.errors import ConfigError, HpcdsError, ModelError

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Cluster, Partition

DEFAULT_MODEL = Path(__file__).resolve().parents[1] / "data" / "default_model"
CALIBRATION_STEPS = 4
TOP_ALTERNATIVES = 5


# --------------------------------------------------------------------------------------------
# Model loading


def load_model(model_dir: str | os.PathLike | None):
    """Load a bundle; any failure becomes a one-line :class:`ModelError`."""
    path = Path(model_dir) if model_dir else DEFAULT_MODEL
    if not path.is_dir():
        if model_dir is None:
            raise ModelError(
                f"no default model shipped at {path}; train one (hpcds1mpi train) and pass "
                "--model DIR")
        raise ModelError(f"model bundle {path} not found; pass --model DIR of a trained bundle")
    try:
        from hpcds1mpi.surrogates.bundle import load_bundle
    except ImportError as exc:
        raise ModelError(f"this installation cannot read model bundles ({exc})") from None
    try:
        return load_bundle(path)
    except HpcdsError:
        raise
    except Exception as exc:  # a corrupt bundle must not print a traceback
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ModelError(f"cannot read model bundle {path} ({text[:160]}); retrain it with "
                         "hpcds1mpi train or pass another --model") from None


# --------------------------------------------------------------------------------------------
# Failure history


def default_history_path() -> Path:
    env = os.environ.get("HPCDS1MPI_HISTORY")
    if env:
        return Path(env)
    return guard_mod.cache_dir() / "failures.json"


@dataclass
class FailureHistory:
    """Jobs that failed on a partition, so the next recommendation moves elsewhere.

    A failure of ``workload`` at ``size`` on a partition rules that partition out for the same
    workload at that size and larger (a job that ran out of memory will not fit when bigger).
    """

    path: Path
    failures: list = field(default_factory=list)

    @classmethod
    def load(cls, path: str | os.PathLike | None = None) -> "FailureHistory":
        path = Path(path) if path else default_history_path()
        try:
            data = json.loads(path.read_text())
            failures = [f for f in data.get("failures", []) if isinstance(f, dict)]
        except FileNotFoundError:
            failures = []
        except (OSError, ValueError, AttributeError):
            raise ConfigError(f"failure history {path} is unreadable; fix or delete it") from None
        return cls(path, failures)

    def record(self, workload: str, size: int, partition: str, cluster: str = "",
               status: str = "failed") -> None:
        self.failures.append({"workload": workload, "size": int(size), "partition": partition,
                              "cluster": cluster, "status": status,
                              "time": time.strftime("%Y-%m-%dT%H:%M:%S")})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"version": 1, "failures": self.failures}, indent=1))
        os.replace(tmp, self.path)  # atomic: a reader never sees half a file

    def failed_on(self, workload: str, size: int, partition: str, cluster: str = ""
                  ) -> dict | None:
        for f in reversed(self.failures):
            if (f.get("workload") == workload and f.get("partition") == partition
                    and (not cluster or not f.get("cluster") or f.get("cluster") == cluster)
                    and int(f.get("size", 0)) <= int(size)):
                return f
        return None


# --------------------------------------------------------------------------------------------
# Recommendation


@dataclass
class Place:
    """One partition considered: its pick (if any) or why it was rejected."""

    cluster: str
    partition: "Partition"
    choice: s1.Choice | None = None
    verdict: guard_mod.Verdict | None = None
    rejected: str = ""

    @property
    def label(self) -> str:
        return f"{self.cluster}/{self.partition.name}" if self.cluster else self.partition.name


@dataclass
class Recommendation:
    workload: str
    size: int
    objective: str
    places: list[Place]
    picked: Place | None
    verdict: guard_mod.Verdict
    energy_label: str = "modelled"
    calibration_steps: list = field(default_factory=list)
    calibration_partition: "Partition | None" = None
    calibration_cluster: "Cluster | None" = None
    clusters: dict = field(default_factory=dict)


def _energy_label(bundle) -> str:
    source = getattr(bundle, "energy_source", None)
    if isinstance(source, str) and source and source != "none":
        return source if source == "modelled" else f"measured ({source})" \
            if "modelled" not in source else "partly modelled"
    try:
        frame = bundle.training_frame()
        if "energy_source" in frame.columns:
            sources = set(frame["energy_source"].dropna().astype(str))
            if sources and sources <= {"modelled"}:
                return "modelled"
            if "modelled" in sources:
                return "partly modelled"
            return "measured (" + ", ".join(sorted(sources)) + ")"
    except Exception:
        pass
    return "modelled"


def _gb(mb: float) -> str:
    return f"{mb / 1000.0:.1f} GB"


def _rejection(place: Place, scores: s1.Scores) -> str:
    """Why nothing on this partition is feasible, in one line."""
    cols = scores.cols
    on = cols["partition"] == place.partition.name
    reasons = cols["reason"][on]
    if len(reasons) == 0:
        return "no configuration fits this partition"
    not_failing = on & (cols["reason"] != "fail")
    if (reasons == "fail").all():
        return "every configuration is predicted to fail here"
    lim = scores.limits.get(place.partition.name)
    mem = not_failing & (cols["reason"] == "memory")
    if mem.any() and (cols["reason"][not_failing] == "memory").all():
        need = cols["mem_need_mb"][mem]
        gpu = cols["device"][mem] == "gpu"
        # The smallest need among the configurations that were ruled out for memory.
        i = int(np.argmin(need))
        if gpu[i]:
            src = "measured runs there fail above" if lim and lim.gpu_source == "measured" \
                else "usable per GPU:"
            return (f"needs ~{_gb(need[i])} per GPU; {src} {_gb(lim.gpu_mb if lim else 0)}"
                    + (f" (nominal {_gb(lim.nominal_gpu_mb)})" if lim and lim.nominal_gpu_mb
                       else ""))
        src = "measured runs there fail above" if lim and lim.node_source == "measured" \
            else "usable per node:"
        return f"needs ~{_gb(need[i])} per node; {src} {_gb(lim.node_mb if lim else 0)}"
    if (cols["reason"][not_failing] == "deadline").any():
        fastest = float(np.min(cols["runtime_hi"][not_failing]))
        return f"cannot meet the deadline: fastest predicted upper bound {fastest:.3g} s"
    if (cols["reason"][not_failing] == "energy").any():
        cheapest = float(np.min(cols["energy_hi"][not_failing]))
        return f"over the energy budget: cheapest predicted upper bound {cheapest:.3g} J"
    return "no feasible configuration"


def calibration_steps(scores: s1.Scores, partition: "Partition", n: int = CALIBRATION_STEPS
                      ) -> list:
    """A few informative configurations to measure, chosen by the model's uncertainty.

    From the configurations the model does not expect to fail or run out of memory on this
    partition, on one node (calibration must be cheap): the one with the widest relative
    runtime interval in each (device, precision) group, then the rules-of-thumb configuration
    (all cores as ranks, one thread) as an anchor, then the widest remaining ones.
    """
    from hpcds1mpi.launch.scripts import CalibrationStep

    cols = scores.cols
    on = (cols["partition"] == partition.name) & (cols["nodes"] == 1) & \
        np.isin(cols["reason"], ["", "deadline", "energy"])
    idx = np.flatnonzero(on)
    if len(idx) == 0:
        idx = np.flatnonzero((cols["partition"] == partition.name) & (cols["nodes"] == 1))
    if len(idx) == 0:
        return []
    runtime = np.where(cols["runtime_s"][idx] > 0, cols["runtime_s"][idx], np.nan)
    width = np.nan_to_num((cols["runtime_hi"][idx] - cols["runtime_lo"][idx]) / runtime,
                          nan=0.0)
    order = idx[np.argsort(-width, kind="stable")]
    chosen, seen = [], set()
    choice = s1.Choice(scores, None, order, order, "time")

    def add(i: int, why: str) -> None:
        if i not in [c[0] for c in chosen] and len(chosen) < n:
            chosen.append((i, why))

    for i in order:
        key = (cols["device"][i], cols["precision"][i])
        if key not in seen:
            seen.add(key)
            w = (cols["runtime_hi"][i] - cols["runtime_lo"][i]) / max(cols["runtime_s"][i], 1e-12)
            add(int(i), f"widest runtime interval for {key[0]} {key[1]} (±{50 * w:.0f} %)")
    rule = idx[(cols["threads"][idx] == 1) & (cols["device"][idx] == "cpu")]
    if len(rule):
        add(int(rule[np.argmax(cols["ranks_per_node"][rule])]),
            "rules-of-thumb anchor: every core a rank, one thread")
    for i in order:
        add(int(i), "wide runtime interval")
    return [CalibrationStep(choice.config(i), why) for i, why in chosen]


def recommend(bundle, workload: str, size: int,
              places: Sequence[tuple["Cluster | None", "Partition"]], *,
              objective: str = "time", constraints: s1.Constraints | None = None,
              history: FailureHistory | None = None, model_dir=None,
              device: str | None = None) -> Recommendation:
    """Compare every allowed partition and pick one, or escalate.

    Args:
        bundle: the model bundle.
        workload, size: the problem.
        places: (cluster, partition) pairs the job may use.
        objective: ``time``, ``energy``, ``edp`` or ``balanced``.
        constraints: ``--max-nodes``, ``--deadline``, ``--energy-budget``.
        history: failure history (partitions where this job failed are skipped).
        model_dir: where the bundle lives (calibration files next to it).
        device: restrict to ``cpu`` or ``gpu``.
    """
    if objective not in s1.OBJECTIVES:
        raise ConfigError(f"--objective must be one of {', '.join(s1.OBJECTIVES)}")
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        raise ConfigError(f"--size must be a positive integer, got {size!r}")
    if not places:
        raise ConfigError("no partition to choose from; check --cluster / --partition")
    constraints = constraints or s1.Constraints()
    from hpcds1mpi.kernels import support

    uses_threads, precisions, devices = support(workload)
    if device is not None:
        if device not in ("cpu", "gpu"):
            raise ConfigError(f"--device must be cpu or gpu, got {device!r}")
        if device == "gpu" and not any(p.gpus_per_node for _, p in places):
            names = ", ".join(p.name for _, p in places)
            raise ConfigError(f"GPU asked but no allowed partition ({names}) has GPUs; use "
                              "--device cpu or a GPU partition")
        devices = [device]
    constraints = s1.Constraints(constraints.max_nodes, constraints.deadline_s,
                                 constraints.energy_budget_j,
                                 devices=devices if devices is not None else constraints.devices,
                                 precisions=precisions if precisions is not None
                                 else constraints.precisions)
    history = history or FailureHistory(default_history_path())
    ref = guard_mod.reference(bundle)
    calibration = guard_mod.load_calibration(bundle, model_dir, ref)
    conf_model = s1.ConfidenceModel.load(model_dir)
    all_places = [Place(c.name if c is not None else "", p) for c, p in places]
    clusters = {pl.label: c for pl, (c, _) in zip(all_places, places)}
    usable: list[Place] = []
    for pl in all_places:
        failed = history.failed_on(workload, size, pl.partition.name, pl.cluster)
        if failed:
            pl.rejected = (f"this job failed here before ({failed.get('status', 'failed')} at size "
                           f"{failed.get('size')}, {failed.get('time', '')}); moving on")
            continue
        if constraints.devices == ["gpu"] and pl.partition.gpus_per_node < 1:
            pl.rejected = "no GPUs"
            continue
        if guard_mod.matching_partition(bundle, pl.partition) is None:
            pl.verdict = guard_mod.judge(bundle, workload, size, pl.partition, calibration, ref)
            pl.rejected = "never measured hardware like this; run a calibration sweep there"
            continue
        usable.append(pl)
    scores = None
    if usable:
        parts = [pl.partition for pl in usable]
        names = [p.name for p in parts]
        if len(set(names)) != len(names):
            raise ConfigError("two allowed partitions share a name; pass --partition to choose")
        scores = s1.score(bundle, workload, size, parts, constraints, uses_threads=uses_threads)
        for pl in usable:
            sub = _subset(scores, pl.partition.name)
            pl.choice = s1.choose(sub, objective, conf_model)
            if pl.choice.index is None:
                pl.rejected = _rejection(pl, sub)
    candidates = [pl for pl in usable if pl.choice is not None and pl.choice.index is not None]
    picked = None
    if candidates:
        # One choice over every feasible candidate of every usable partition: the pick's
        # partition wins, and the front and alternatives span all partitions.
        joint = s1.choose(scores, objective, conf_model)
        where = str(scores.cols["partition"][joint.index])
        picked = next(pl for pl in usable if pl.partition.name == where)
        picked.choice = joint
    judged = picked or (usable[0] if usable else all_places[0])
    # The guard judges the job where it would run (or the first familiar partition).
    verdict = guard_mod.judge(bundle, workload, size, judged.partition, calibration, ref,
                              picked.choice.confidence if picked else None)
    familiar_but_impossible = picked is None and verdict.verdict != "escalate"
    if familiar_but_impossible:
        # Known job, but every configuration fails, overflows memory or misses a constraint:
        # measuring more of the same would not help, so no calibration sweep either.
        verdict.verdict = "escalate"
        verdict.reasons.append("no allowed partition can run this job (see the lines below)")
    judged.verdict = verdict
    if picked is not None and verdict.verdict != "escalate":
        best = picked.choice.pick
        for pl in candidates:
            if pl is picked:
                continue
            p = pl.choice.pick
            pl.rejected = (f"{'slower' if objective == 'time' else 'not chosen for ' + objective}"
                           f": best there {_fmt_time(p['runtime_s'])}, {_fmt_energy(p['energy_j'])}"
                           f" vs {_fmt_time(best['runtime_s'])}, {_fmt_energy(best['energy_j'])}"
                           f" on {picked.label}")
    rec = Recommendation(workload, size, objective, all_places, picked, verdict,
                         _energy_label(bundle), clusters=clusters)
    if verdict.verdict == "escalate":
        rec.picked = None
    if verdict.verdict == "escalate" and not familiar_but_impossible:
        target = judged.partition
        rec.calibration_partition = target
        rec.calibration_cluster = clusters.get(judged.label)
        if scores is not None and target.name in set(scores.cols["partition"]):
            rec.calibration_steps = calibration_steps(_subset(scores, target.name), target)
        else:
            cal_scores = s1.score(bundle, workload, size, [target],
                                  s1.Constraints(max_nodes=1, devices=constraints.devices,
                                                 precisions=constraints.precisions),
                                  uses_threads=uses_threads)
            rec.calibration_steps = calibration_steps(cal_scores, target)
    return rec


def _subset(scores: s1.Scores, partition: str) -> s1.Scores:
    mask = scores.cols["partition"] == partition
    return s1.Scores({k: v[mask] for k, v in scores.cols.items()}, scores.workload, scores.size,
                     scores.limits)


# --------------------------------------------------------------------------------------------
# Output


def _fmt_time(s: float) -> str:
    if not math.isfinite(s):
        return "?"
    if s < 1:
        return f"{s * 1000:.3g} ms"
    if s < 120:
        return f"{s:.3g} s"
    if s < 7200:
        return f"{s / 60:.3g} min"
    return f"{s / 3600:.3g} h"


def _fmt_energy(j: float) -> str:
    if not math.isfinite(j):
        return "?"
    for unit, scale in (("MJ", 1e6), ("kJ", 1e3)):
        if j >= scale:
            return f"{j / scale:.3g} {unit}"
    return f"{j:.3g} J"


def _config_text(cfg) -> str:
    return (f"{cfg.nodes} node{'s' if cfg.nodes > 1 else ''} x {cfg.ranks_per_node} ranks x "
            f"{cfg.threads} thread{'s' if cfg.threads > 1 else ''}, {cfg.device}, {cfg.precision}")


def _row(choice: s1.Choice, i: int) -> dict:
    c = choice.scores.cols
    cfg = choice.config(int(i))
    return {"partition": str(c["partition"][i]), "nodes": cfg.nodes, "ranks_per_node": cfg.ranks_per_node, "threads": cfg.threads,
            "device": cfg.device, "precision": cfg.precision,
            "runtime_s": float(c["runtime_s"][i]), "runtime_lo": float(c["runtime_lo"][i]),
            "runtime_hi": float(c["runtime_hi"][i]), "energy_j": float(c["energy_j"][i]),
            "energy_lo": float(c["energy_lo"][i]), "energy_hi": float(c["energy_hi"][i]),
            "fail_prob": float(c["fail_prob"][i]), "mem_need_mb": float(c["mem_need_mb"][i])}


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, (np.floating, np.integer)):
        return _clean(value.item())
    return value


def to_dict(rec: Recommendation) -> dict:
    """The recommendation as plain JSON-able data (what ``--json`` prints)."""
    out = {
        "workload": rec.workload, "size": rec.size, "objective": rec.objective,
        "verdict": rec.verdict.as_dict(), "energy": rec.energy_label,
        "pick": None, "alternatives": [], "front": [], "partitions": [],
    }
    for pl in rec.places:
        entry = {"partition": pl.partition.name, "cluster": pl.cluster,
                 "status": "picked" if pl is rec.picked else "rejected", "reason": pl.rejected}
        if pl.choice is not None and pl.choice.index is not None:
            entry["best"] = _row(pl.choice, pl.choice.index)
        out["partitions"].append(entry)
    if rec.picked is not None:
        ch = rec.picked.choice
        out["pick"] = {"partition": rec.picked.partition.name, "cluster": rec.picked.cluster,
                       **_row(ch, ch.index), "confidence": ch.confidence,
                       "confidence_calibrated": ch.calibrated, "spread": ch.spread,
                       "margin": ch.margin}
        out["alternatives"] = [_row(ch, i) for i in ch.ranking[1:1 + TOP_ALTERNATIVES]]
        out["front"] = [{**_row(ch, i), "pick": bool(i == ch.index)} for i in ch.front]
    if rec.calibration_steps:
        out["calibration"] = [{"config": s.config.as_dict(), "label": s.config.label(),
                               "reason": s.reason} for s in rec.calibration_steps]
    return _clean(out)


def format_table(rec: Recommendation) -> str:
    """A readable report: the pick, intervals, confidence, verdict, alternatives, the front,
    and one line per rejected partition."""
    lines = [f"hpcds1mpi recommend: {rec.workload}, size {rec.size}, objective {rec.objective}"]
    v = rec.verdict
    energy_note = f"energy {rec.energy_label}"
    if rec.picked is not None:
        ch = rec.picked.choice
        r = _row(ch, ch.index)
        lines += [
            f"✓ {rec.picked.label}: {_config_text(ch.config())}",
            f"  runtime {_fmt_time(r['runtime_s'])} ({_fmt_time(r['runtime_lo'])}–"
            f"{_fmt_time(r['runtime_hi'])})   energy {_fmt_energy(r['energy_j'])} "
            f"({_fmt_energy(r['energy_lo'])}–{_fmt_energy(r['energy_hi'])}, {rec.energy_label})",
            f"  confidence {ch.confidence:.2f} ({'calibrated' if ch.calibrated else 'uncalibrated'})"
            f"   verdict {v.verdict}",
        ]
    else:
        lines.append(f"! verdict {v.verdict}: no settings guessed")
    for reason in v.reasons:
        lines.append(f"  - {reason}")
    for pl in rec.places:
        if pl is not rec.picked and pl.rejected:
            lines.append(f"✗ {pl.label}: {pl.rejected}")
    if rec.picked is not None:
        ch = rec.picked.choice
        many = len(set(ch.scores.cols["partition"])) > 1
        width = max([len(str(p)) for p in set(ch.scores.cols["partition"])] + [9]) if many else 0

        def table_line(mark: str, r: dict) -> str:
            part = f"{r['partition']:<{width}} " if many else ""
            return (f"  {mark:2}{part}{r['nodes']:>5} {r['ranks_per_node']:>5} {r['threads']:>4} "
                    f"{r['device']:>4} {r['precision']:>5} {_fmt_time(r['runtime_s']):>10} "
                    f"{_fmt_energy(r['energy_j']):>10}")

        header = (f"  {'':2}{'partition':<{width}} " if many else f"  {'':2}") + (
            f"{'nodes':>5} {'ranks':>5} {'thr':>4} {'dev':>4} {'prec':>5} "
            f"{'runtime':>10} {'energy':>10}")
        lines += ["", f"Top alternatives ({energy_note}):", header]
        for k, i in enumerate(ch.ranking[:1 + TOP_ALTERNATIVES]):
            lines.append(table_line("*" if k == 0 else "", _row(ch, i)))
        lines += ["", f"Runtime–energy front ({len(ch.front)} points, * = pick):", header]
        for i in ch.front:
            lines.append(table_line("*" if i == ch.index else "", _row(ch, i)))
    if rec.calibration_steps:
        lines += ["", "Calibration sweep (measure these, then hpcds1mpi learn):"]
        for s in rec.calibration_steps:
            lines.append(f"  {s.config.label():<28} {s.reason}")
    return "\n".join(lines)


def emit_script(rec: Recommendation, scheduler: str, program: str | None, *,
                job_name: str | None = None, output: str | None = None,
                exclusive: bool = False, telemetry: str = "calibration.h5") -> str:
    """The batch script for the pick, or the calibration sweep when escalated."""
    from hpcds1mpi.launch import scripts as batch

    name = job_name or f"hpcds1mpi-{rec.workload}"
    if rec.picked is None:
        if not rec.calibration_steps or rec.calibration_partition is None:
            raise ConfigError("nothing to run: no allowed partition can run this job; relax "
                              "the constraints or allow another partition")
        if scheduler != "slurm":
            raise ConfigError("calibration sweeps are written for Slurm only; use --emit slurm")
        return batch.render_calibration(
            rec.calibration_steps, rec.calibration_partition, rec.workload, rec.size,
            cluster=rec.calibration_cluster, program=program, telemetry=telemetry,
            job_name=name + "-calib", output=output,
            reason="; ".join(rec.verdict.reasons)[:300] or "escalated")
    ch = rec.picked.choice
    r = _row(ch, ch.index)
    if program is None:
        program = f"hpcds1mpi run {rec.workload} --size {rec.size} --threads {{threads}} " \
                  "--device {device} --precision {precision}"
    job = batch.BatchJob(
        config=ch.config(), partition=rec.picked.partition, program=program,
        time_limit_s=batch.time_limit_s(r["runtime_hi"]),
        cluster=rec.clusters.get(rec.picked.label), job_name=name, output=output,
        exclusive=exclusive, size=rec.size,
        summary=(f"recommended by hpcds1mpi: {_config_text(ch.config())}; predicted "
                 f"{_fmt_time(r['runtime_s'])} ({_fmt_time(r['runtime_lo'])}–"
                 f"{_fmt_time(r['runtime_hi'])}); confidence {ch.confidence:.2f}; verdict "
                 f"{rec.verdict.verdict}"))
    return batch.render(job, scheduler)
