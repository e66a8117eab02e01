"""A campaign part whose shard file is damaged: status marks it and tells the other parts,
resubmit refuses naming the part, the file and the move; once moved aside the part starts
again."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import TelemetryError
from hpcds1mpi.measure.campaign_status import campaign_status, summary_lines
from hpcds1mpi.measure.campaign_submit import resubmit
from tests.measure.test_campaign_status import PLAN, _emit, _scheduler


@pytest.mark.parametrize("content", [b"", b"not hdf5 at all\n"])
def test_one_damaged_shard_is_that_parts_state_and_what_to_do(tmp_path, content):
    """s45 tester C8: an empty n1-0.h5 stopped status and resubmit for the whole campaign with
    "not an HDF5 file; give a telemetry file written by hpcds1mpi sweep", naming no part."""
    (tmp_path / "plan.toml").write_text(PLAN)
    folder = _emit(tmp_path, 2)
    shard = folder / "telemetry" / "n1-0.h5"
    shard.write_bytes(content)
    env, log = _scheduler(tmp_path)
    manifest, parts = campaign_status(folder, env)
    assert {p.name: p.state for p in parts} == {"n1-0": "damaged", "n1-1": "missing",
                                                "n2-0": "missing", "n2-1": "missing"}
    lines = summary_lines(folder, manifest, parts)
    said = "\n".join(lines)
    assert "n1-0     damaged      0/2 configurations; telemetry/n1-0.h5 is not an HDF5 " \
           "file (move it aside and resubmit)" in said
    assert lines[-1] == (f"1 part(s) with a damaged shard file (n1-0): move each aside (mv "
                         f"{shard} {shard}.damaged), then hpcds1mpi campaign resubmit "
                         f"{folder} starts them again")
    with pytest.raises(TelemetryError, match=rf"part n1-0: telemetry/n1-0.h5 is not an HDF5 "
                                             rf"file; .*move it aside \(mv {shard} "):
        resubmit(folder, env=env)
    assert not log.exists() and shard.read_bytes() == content  # nothing submitted or moved
    shard.rename(f"{shard}.damaged")
    assert resubmit(folder, env=env)["parts"] == {1: [0, 1], 2: [0, 1]}


def _cut_hdf5(path) -> bytes:
    """An HDF5 file cut to half its length at ``path`` (a job killed while writing it)."""
    import h5py

    with h5py.File(path, "w") as f:
        f["x"] = list(range(4096))
    data = path.read_bytes()[:path.stat().st_size // 2]
    path.write_bytes(data)
    return data


@pytest.mark.parametrize("damage", ["empty", "cut"])
def test_the_parts_own_sweep_resume_refuses_with_resubmits_line(tmp_path, damage):
    """Was (s45's left list): the part's job, ``sweep --launch ... --resume`` of a cut shard,
    failed with the HDF5 library's "Unable to synchronously open file (truncated file ...)",
    naming neither the part nor the move that mends it. Now resubmit's line, exit 2, the file
    left as it was."""
    import subprocess

    from tests.helpers import hpcds1mpi_exe

    (tmp_path / "plan.toml").write_text(PLAN)
    folder = _emit(tmp_path, 2)
    shard = folder / "telemetry" / "n1-0.h5"
    if damage == "empty":
        shard.write_bytes(content := b"")
        why = "telemetry/n1-0.h5 is not an HDF5 file"
    else:
        content = _cut_hdf5(shard)
        why = "telemetry/n1-0.h5 is damaged or cut short (unreadable HDF5: "
    proc = subprocess.run(
        [hpcds1mpi_exe(), "sweep", "--launch", "1", "--cluster", str(tmp_path / "cluster.toml"),
         "--partition", "debug", "--resume", "--no-progress", "--plan", "plans/n1-0.toml",
         "--out", "telemetry/n1-0.h5"], cwd=folder, capture_output=True, text=True, timeout=120)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"hpcds1mpi: error: {folder}: part n1-0: {why}")
    assert lines[0].endswith(f"a sweep cannot resume such a file: move it aside (mv {shard} "
                             f"{shard}.damaged) and resubmit, so the part starts again")
    assert shard.read_bytes() == content and not (folder / "parts" / "n1-0.exit").exists()


def test_a_resume_of_a_file_that_is_no_campaign_shard_keeps_its_own_reading(tmp_path):
    from hpcds1mpi.measure.campaign_damaged import check_resumable

    (tmp_path / "plan.toml").write_text(PLAN)
    folder = _emit(tmp_path, 2)
    lone = tmp_path / "telemetry" / "lone.h5"  # beside no campaign.json
    lone.parent.mkdir()
    lone.write_bytes(b"")
    check_resumable(lone)  # the sweep's own reader refuses it, as before
    other = folder / "telemetry" / "other.h5"  # in the campaign, no part's shard
    other.write_bytes(b"")
    check_resumable(other)
    check_resumable(folder / "telemetry" / "n1-1.h5")  # no file yet: the part starts
