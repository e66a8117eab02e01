"""A small analytic stand-in for the model bundle, for unit tests of System 1, guard, recommend
(and the fake bundle's partitions as ``recommend`` places and as a cluster file).

It implements the bundle interface (``targets``, ``workloads``, ``size_range``,
``machine_ids``, ``partitions``, ``predict``, ``embed``, ``training_matrix``,
``training_frame``) with a closed-form runtime / energy / memory model, so tests can assert
exact properties (the pick is the predicted minimum, a learned memory limit excludes what the
nominal one would allow). It is a test double: no number from it is ever reported.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

WORK = {"stencil": 1.0, "gemm": 4.0, "fft": 2.0}
PRECISION_SPEED = {"fp64": 1.0, "fp32": 0.7, "bf16": 0.5}
PRECISION_BYTES = {"fp64": 8.0, "fp32": 4.0, "bf16": 2.0}

PARTITIONS = {
    "cpu": {"cores_per_node": 16, "memory_gb": 64.0, "gpus_per_node": 0, "gpu_memory_gb": 0.0,
            "max_nodes": 4},
    "gpu-small": {"cores_per_node": 8, "memory_gb": 32.0, "gpus_per_node": 1,
                  "gpu_memory_gb": 6.0, "max_nodes": 1},
    "gpu-big": {"cores_per_node": 8, "memory_gb": 64.0, "gpus_per_node": 2,
                "gpu_memory_gb": 32.0, "max_nodes": 2},
}
#: Sizes measured up to 16384, so size 13000 is familiar and only memory decides.
WIDE_SIZES = (256, 1024, 4096, 16384)
# What really fits (the test's ground truth): gpu-small's 6 GB card fails above 3 GB.
TRUE_GPU_LIMIT_MB = {"gpu-small": 3000.0, "gpu-big": 30000.0}
TRUE_NODE_LIMIT_MB = {"cpu": 60000.0, "gpu-small": 30000.0, "gpu-big": 60000.0}


class FakeBundle:
    targets = ("runtime", "energy", "failure", "peak_rss")
    machine_ids = ("fake-machine",)

    def __init__(self, workloads=("stencil", "gemm", "fft"), sizes=(256, 512, 1024, 2048),
                 spread: float = 0.1, partitions=None):
        self.workloads = list(workloads)
        self.sizes = list(sizes)
        self.size_range = {w: (min(sizes), max(sizes)) for w in self.workloads}
        self.partitions = dict(partitions or PARTITIONS)
        self.spread = spread
        self._frame = None

    # ---- model ------------------------------------------------------------------------------
    def _need_mb(self, df: pd.DataFrame) -> np.ndarray:
        size = df["size"].to_numpy(float)
        ranks = (df["nodes"] * df["ranks_per_node"]).to_numpy(float)
        nbytes = df["precision"].map(PRECISION_BYTES).to_numpy(float)
        return size * size * nbytes * 3.0 / 1e6 / ranks * 4.0 + 50.0

    def predict(self, df: pd.DataFrame) -> pd.DataFrame:
        work = df["workload"].map(WORK).fillna(1.5).to_numpy(float)
        size = df["size"].to_numpy(float)
        nodes = df["nodes"].to_numpy(float)
        rpn = df["ranks_per_node"].to_numpy(float)
        threads = df["threads"].to_numpy(float)
        gpu = (df["device"] == "gpu").to_numpy()
        speed = df["precision"].map(PRECISION_SPEED).to_numpy(float)
        flops = work * size ** 2 * 1e3
        rate = np.where(gpu, 2e10 * nodes * rpn, 1e9 * (nodes * rpn * threads) ** 0.9)
        ranks = nodes * rpn
        comm = 1e-3 * np.log2(ranks + 1) * nodes + 2e-4 * threads
        runtime = flops / rate * speed + comm + 0.01
        power = nodes * (50.0 + 8.0 * rpn * threads) + np.where(gpu, 250.0 * nodes * rpn, 0.0)
        energy = runtime * power
        fail = np.where((df["workload"] == "fft").to_numpy() & (df["precision"] == "bf16")
                        .to_numpy(), 0.9, 0.01)
        s = self.spread
        return pd.DataFrame({
            "runtime_s": runtime, "runtime_lo": runtime * (1 - s), "runtime_hi": runtime * (1 + s),
            "runtime_spread": runtime * 2 * s,
            "energy_j": energy, "energy_lo": energy * (1 - s), "energy_hi": energy * (1 + s),
            "fail_prob": fail, "fail_prob_max": np.minimum(fail * 1.05, 1.0),
            "peak_rss_mb": self._need_mb(df),
        }, index=df.index)

    # ---- training data ----------------------------------------------------------------------
    def training_frame(self) -> pd.DataFrame:
        if self._frame is not None:
            return self._frame
        rows = []
        for pname, hw in self.partitions.items():
            for w in self.workloads:
                for size in self.sizes + [4096, 8192]:
                    for nodes in sorted({1, hw["max_nodes"]}):
                        for rpn in sorted({1, hw["cores_per_node"] // 2}):
                            for threads in (1, 2):
                                for device in (["cpu", "gpu"] if hw["gpus_per_node"] else ["cpu"]):
                                    if device == "gpu" and rpn > hw["gpus_per_node"]:
                                        continue
                                    for precision in ("fp64", "fp32"):
                                        rows.append(dict(workload=w, size=size, nodes=nodes,
                                                         ranks_per_node=rpn, threads=threads,
                                                         device=device, precision=precision,
                                                         partition=pname))
        frame = pd.DataFrame(rows)
        for col in ("cores_per_node", "memory_gb", "gpus_per_node"):
            frame[col] = frame["partition"].map(lambda p, c=col: self.partitions[p][c])
        need = self._need_mb(frame)
        gpu = (frame["device"] == "gpu").to_numpy()
        per = np.where(gpu, need, need * frame["ranks_per_node"].to_numpy(float))
        limit = np.where(gpu, frame["partition"].map(TRUE_GPU_LIMIT_MB).fillna(0).to_numpy(),
                         frame["partition"].map(TRUE_NODE_LIMIT_MB).to_numpy())
        oom = per > limit
        frame["status"] = np.where(oom, "oom", "ok")
        frame["peak_rss_mb"] = np.where(oom, np.nan, need)
        frame["runtime_s"] = np.where(oom, np.nan, self.predict(frame)["runtime_s"])
        self._frame = frame
        return frame

    # ---- embedding --------------------------------------------------------------------------
    def embed(self, df: pd.DataFrame) -> np.ndarray:
        onehot = np.stack([(df["workload"] == w).to_numpy(float) * 3.0 for w in self.workloads],
                          axis=1)
        knobs = np.column_stack([
            np.log2(df["size"].to_numpy(float)) / 2.0,
            np.log2(df["nodes"].to_numpy(float)),
            np.log2(df["ranks_per_node"].to_numpy(float)) / 2.0,
            np.log2(df["threads"].to_numpy(float)) / 2.0,
            (df["device"] == "gpu").to_numpy(float),
            df["precision"].map(PRECISION_BYTES).to_numpy(float) / 8.0,
        ])
        return np.hstack([onehot, knobs])

    def training_matrix(self) -> np.ndarray:
        return self.embed(self.training_frame())


def fake_partitions():
    """The fake bundle's partitions as :class:`~hpcds1mpi.cluster.Partition` objects."""
    from hpcds1mpi.cluster import Partition

    return {name: Partition(name=name, **hw) for name, hw in PARTITIONS.items()}


def fake_places(*names: str, cluster: str = "lab") -> list:
    """(cluster, partition) pairs of the fake partitions ``names``, as ``recommend`` takes them."""
    from hpcds1mpi.cluster import Cluster

    parts = fake_partitions()
    owner = Cluster(cluster, {n: parts[n] for n in names})
    return [(owner, parts[n]) for n in names]


def cluster_toml(*names: str, cluster: str = "lab") -> str:
    """A cluster file holding the fake partitions ``names`` (with an account, a module and
    ``--gres`` GPU syntax, so scripts written for it carry each kind of line)."""
    lines = [f"[clusters.{cluster}]", 'account = "proj42"', 'modules = ["openmpi/4.1"]',
             'gres_syntax = "gres"']
    for name in names:
        lines += ["", f"[clusters.{cluster}.partitions.{name}]"]
        lines += [f"{key} = {value}" for key, value in PARTITIONS[name].items()]
    return "\n".join(lines) + "\n"


def isolate_user_files(monkeypatch, tmp_path) -> None:
    """Point the guard's calibration cache and the failure history into ``tmp_path``."""
    monkeypatch.setenv("HPCDS1MPI_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HPCDS1MPI_HISTORY", str(tmp_path / "cache" / "failures.json"))


def set_prediction(out, runtime, energy=None, *, runtime_band=(0.9, 1.3),
                   energy_band=(0.9, 1.3)) -> None:
    """Write a fixed prediction into ``out`` (a :meth:`FakeBundle.predict` frame): ``runtime``
    with its interval at ``runtime_band`` times it, ``energy`` (10 x the runtime when None)
    likewise, nothing failing, 100 MB peak: what a test's hand-set bundle predicts."""
    energy = runtime * 10.0 if energy is None else energy
    for value, band, names in ((runtime, runtime_band, ("runtime_s", "runtime_lo", "runtime_hi")),
                               (energy, energy_band, ("energy_j", "energy_lo", "energy_hi"))):
        for col, k in zip(names, (1.0, *band)):
            out[col] = value * k
    out["fail_prob"] = out["fail_prob_max"] = 0.0
    out["peak_rss_mb"] = 100.0
