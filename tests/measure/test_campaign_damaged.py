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
