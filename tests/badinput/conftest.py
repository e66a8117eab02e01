"""Fixtures of the bad-input suite: a sandbox folder of good and bad inputs, hashed before a
case runs and compared after it, and tripwires that stop a bad input reaching real work."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.badinput.harness import (SHIPPED_BUNDLE, Launched, assert_refused, assert_unchanged,
                                    invoke, snapshot)
from tests.helpers import REPO

SACCT = REPO / "tests" / "data" / "sacct-energy-gpu.txt"
#: A cluster file with a two-node partition (mobo's and tune's cases) and a GPU partition.
CLUSTER_TOML = """\
[clusters.lab.partitions.small]
cores_per_node = 4
memory_gb = 16
max_nodes = 16

[clusters.lab.partitions.gpu]
cores_per_node = 8
memory_gb = 64
max_nodes = 2
gpus_per_node = 2
gpu_memory_gb = 16
"""
#: 10,000 characters (a name or a value) and a file name too long for any file system.
LONG = "x" * 10_000


@pytest.fixture(scope="session")
def good_inputs(tmp_path_factory) -> Path:
    """Valid inputs made once: a telemetry file (20 runs of the shipped bundle's data)."""
    import pandas as pd

    from hpcds1mpi.records import telemetry

    root = tmp_path_factory.mktemp("good")
    data = pd.read_parquet(SHIPPED_BUNDLE / "training_data.parquet").drop(columns=["kept"])
    telemetry.append(root / "t.h5", data.head(20).to_dict("records"))
    return root


class Box:
    """The sandbox (the test's cwd): inputs good and bad, hashed before each command."""

    def __init__(self, root: Path, good: Path):
        self.root = root
        self.tel = root / "t.h5"
        shutil.copy(good / "t.h5", self.tel)
        self.sacct = root / "sacct.txt"
        shutil.copy(SACCT, self.sacct)
        self.cluster = root / "lab.toml"
        self.cluster.write_text(CLUSTER_TOML)
        self.empty = root / "empty.toml"
        self.empty.write_bytes(b"")
        self.binary = root / "binary.bin"
        self.binary.write_bytes(bytes(range(256)) * 8)
        self.folder = root / "a_folder"
        self.folder.mkdir()
        (self.folder / "keep.txt").write_text("the user's\n")
        self.garbage = root / "garbage.txt"
        self.garbage.write_text("this is [not {any format\n\x7f\n")
        self.missing = root / "no_such_file"
        self.unicode_missing = root / "données_ü_日本.toml"
        self.long_missing = root / LONG  # ENAMETOOLONG
        self._bundle: Path | None = None
        self.before: dict[str, str] | None = None

    def kinds(self) -> dict[str, Path]:
        """The bad files, by kind."""
        return {"missing": self.missing, "empty": self.empty, "binary": self.binary,
                "directory": self.folder, "garbage": self.garbage,
                "unicode-missing": self.unicode_missing, "10k-name": self.long_missing}

    @property
    def bundle(self) -> Path:
        """A private copy of the shipped bundle (to tamper with)."""
        if self._bundle is None:
            self._bundle = self.root / "bundle"
            shutil.copytree(SHIPPED_BUNDLE, self._bundle)
        return self._bundle

    def fill(self, text: str) -> str:
        """Put the sandbox's paths into an argv word: {tel} {cluster} {bundle} {root} ..."""
        names = {"tel": self.tel, "sacct": self.sacct, "cluster": self.cluster,
                 "root": self.root, "folder": self.folder, "missing": self.missing}
        if "{bundle}" in text:
            names["bundle"] = self.bundle
        for key, value in names.items():
            text = text.replace("{" + key + "}", str(value))
        return text

    def freeze(self) -> None:
        self.before = snapshot(self.root)

    def refused(self, capsys, argv: list[str], code: int, *fragments: str) -> str:
        """Run ARGV against the frozen sandbox: refused with ``code``, nothing changed."""
        argv = [self.fill(a) if isinstance(a, str) else str(a) for a in argv]
        if self.before is None:
            self.freeze()
        res = invoke(capsys, argv)
        line = assert_refused(res, code, *fragments)
        assert_unchanged(self.before, snapshot(self.root))
        return line


@pytest.fixture
def box(tmp_path, good_inputs, monkeypatch, tmp_path_factory) -> Box:
    """The sandbox as cwd, the user's caches elsewhere, and the tripwires armed."""
    sandbox = tmp_path / "box"
    sandbox.mkdir()
    monkeypatch.chdir(sandbox)
    cache = tmp_path / "cache"
    monkeypatch.setenv("HPCDS1MPI_CACHE", str(cache))
    monkeypatch.setenv("HPCDS1MPI_HISTORY", str(cache / "failures.json"))
    for key in ("SLURM_JOB_ID", "SLURM_JOBID", "PBS_JOBID"):
        monkeypatch.delenv(key, raising=False)
    _arm_tripwires(monkeypatch)
    return Box(sandbox, good_inputs)


def _arm_tripwires(monkeypatch) -> None:
    """A bad input must be refused before anything is launched: these raise instead."""
    def tripped(*args, **kwargs):
        raise Launched("a bad input reached a launch (it should have been refused before)")

    import hpcds1mpi.commands.quickstart as quickstart
    import hpcds1mpi.launch.launcher_discovery as launcher_discovery

    monkeypatch.setattr(quickstart, "_run", tripped)
    monkeypatch.setattr(launcher_discovery, "mpiexec_path", tripped)
