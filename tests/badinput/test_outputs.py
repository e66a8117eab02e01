"""Output paths that cannot work: a missing directory, a directory where a file goes, a file
where a folder goes, a folder of the user's that is not ours, a read-only directory. Each is
refused (exit 2, one line) before any work, and nothing in the sandbox changes."""

from __future__ import annotations

import os
import subprocess

import pytest


TRAIN = ["train", "--telemetry", "{tel}", "--no-embedding", "--members", "1", "--member-trees",
         "1", "--out"]
LEARN = ["learn", "--model", "{bundle}", "--telemetry", "{tel}", "--out"]
EMIT = ["recommend", "--workload", "stencil", "--size", "1024", "--emit", "slurm", "-o"]
MOBO = ["mobo", "--analytic", "--workload", "stencil", "--size", "1000", "--cluster",
        "{cluster}", "--partition", "small", "--budget", "6", "--out"]
TUNE = ["tune", "--kernel", "gemm", "--size", "64", "--cluster", "{cluster}", "--partition",
        "small", "--launcher", "mpiexec", "--out"]
SWEEP = ["sweep", "--kernel", "stencil", "--sizes", "40", "--ranks-per-node", "1", "--threads",
         "1", "--precisions", "fp64", "--out"]
#: (id, argv ending in the output option, what goes there). "{dirfile}" is a missing folder.
CASES = [
    ("export-missing-dir", ["telemetry", "export", "{tel}", "--out"], "{missing}/runs.csv"),
    ("export-a-folder", ["telemetry", "export", "{tel}", "--out"], "{folder}"),
    ("export-under-a-file", ["telemetry", "export", "{tel}", "--out"], "{tel}/runs.csv"),
    ("merge-missing-dir", ["telemetry", "merge", "{tel}", "--out"], "{missing}/m.h5"),
    ("merge-a-folder", ["telemetry", "merge", "{tel}", "--out"], "{folder}"),
    ("ingest-a-folder", ["ingest", "{sacct}", "--out"], "{folder}"),
    ("ingest-under-a-file", ["ingest", "{sacct}", "--out"], "{tel}/jobs.parquet"),
    ("train-users-folder", TRAIN, "{folder}"),
    ("train-a-file", TRAIN, "{tel}"),
    ("learn-users-folder", LEARN, "{folder}"),
    ("learn-a-file", LEARN, "{tel}"),
    ("recommend-missing-dir", EMIT, "{missing}/job.sbatch"),
    ("recommend-a-folder", EMIT, "{folder}"),
    ("mobo-a-file", MOBO, "{tel}"),
    ("tune-missing-dir", TUNE, "{missing}/tune.h5"),
    ("tune-a-folder", TUNE, "{folder}"),
    ("sweep-missing-dir", SWEEP, "{missing}/t.h5"),
    ("sweep-a-folder", SWEEP, "{folder}"),
    ("quickstart-users-folder", ["quickstart", "--out"], "{folder}"),
    ("quickstart-a-file", ["quickstart", "--out"], "{tel}"),
]
NOT_YET: dict[str, str] = {}


@pytest.mark.parametrize(("argv", "target"), [
    pytest.param(argv, target, id=cid,
                 marks=[pytest.mark.xfail(strict=True, reason=NOT_YET[cid])] if cid in NOT_YET
                 else [])
    for cid, argv, target in CASES])
def test_unusable_output_is_refused_before_work(box, capsys, argv, target):
    box.refused(capsys, [*argv, target], 2)


READ_ONLY = [
    ("export", ["telemetry", "export", "{tel}", "--out"], "ro/runs.csv"),
    ("ingest", ["ingest", "{sacct}", "--out"], "ro/jobs.parquet"),
    ("train", TRAIN, "ro/model"),
    ("recommend", EMIT, "ro/job.sbatch"),
    ("mobo", MOBO, "ro/mobo_out"),
]


@pytest.mark.parametrize(("argv", "target"), [pytest.param(a, t, id=i) for i, a, t in READ_ONLY])
def test_read_only_directory_is_refused(box, capsys, argv, target):
    ro = box.root / "ro"
    ro.mkdir()
    if os.geteuid() == 0:
        # Root ignores mode bits: a read-only mount is what stops it.
        from tests.test_atomic import _mount

        _mount(ro, "size=1m,ro")
        try:
            box.refused(capsys, [*argv, target], 2, "writable")
        finally:
            subprocess.run(["umount", "-l", str(ro)], capture_output=True, timeout=30)
        return
    ro.chmod(0o555)
    try:
        box.refused(capsys, [*argv, target], 2, "writable")
    finally:
        ro.chmod(0o755)
