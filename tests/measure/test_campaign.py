"""The campaign's split: every configuration in exactly one shard, deterministically; a part's
plan, written as TOML and read back by the sweep's own plan builder, holds exactly its runs."""

from __future__ import annotations

import os
import shutil
import tempfile
import tomllib
from collections import Counter
from pathlib import Path

import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.measure import campaign as cm
from hpcds1mpi.measure.campaign_scripts import allocation
from hpcds1mpi.measure.plan import build_plan

PART = Partition(name="debug", cores_per_node=4, memory_gb=8.0, max_nodes=4)
DOC = {"sweep": {"min_time": 0.01, "seed": 3, "nodes": [1, 2, 4], "ranks_per_node": [1, 2, 4],
                 "threads": [1, 2], "valid_only": True},
       "kernel": [{"name": "gemm", "sizes": [32, 64, 96], "precisions": ["fp64", "fp32"]},
                  {"name": "stencil", "sizes": [16, 24], "nodes": [1, 2],
                   "extra": {"sweeps": 3}}]}  # a key stencil reads (others are refused)


def _plan():
    return build_plan(DOC, PART)


@pytest.mark.parametrize("shards", [1, 2, 3, 7, 1000])
def test_every_configuration_is_in_exactly_one_part(shards):
    plan = _plan()
    parts = cm.split(plan, shards)
    ids = Counter(r for p in parts for r in p.run_ids)
    assert set(ids) == {r.run_id for r in plan.runs}
    assert set(ids.values()) == {1}
    for nodes in {r.config.nodes for r in plan.runs}:
        mine = [p for p in parts if p.nodes == nodes]
        assert all(r.config.nodes == nodes for p in mine for r in p.runs)
        assert [p.index for p in mine] == list(range(len(mine)))
        assert len(mine) == min(shards, sum(r.config.nodes == nodes for r in plan.runs))
        sizes = [len(p.runs) for p in mine]
        assert max(sizes) - min(sizes) <= 1 and min(sizes) >= 1  # balanced, none empty


def test_the_split_is_deterministic_and_names_parts_by_node_count_and_index():
    first = cm.split(_plan(), 3)
    again = cm.split(_plan(), 3)
    assert [(p.name, p.run_ids) for p in first] == [(p.name, p.run_ids) for p in again]
    assert [p.name for p in first][:3] == ["n1-0", "n1-1", "n1-2"]


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "2"])
def test_shards_below_one_or_not_a_whole_number_are_refused(bad):
    with pytest.raises(ConfigError, match="--shards"):
        cm.split(_plan(), bad)


def test_a_parts_plan_read_back_by_build_plan_holds_exactly_its_runs():
    plan = _plan()
    for part in cm.split(plan, 2):
        text = cm.toml_text(cm.part_doc(part, plan))
        doc = tomllib.loads(text)  # what sweep --plan reads
        built = build_plan(doc, PART)
        assert sorted(r.run_id for r in built.runs) == sorted(part.run_ids)
        assert built.min_time == 0.01 and doc["sweep"]["seed"] == 3
        assert doc["sweep"]["valid_only"] is False
        cm.check_part_doc(doc, part, PART)  # the emit-time guard agrees


def test_the_guard_catches_a_part_plan_that_lost_or_gained_a_configuration():
    plan = _plan()
    part = cm.split(plan, 2)[0]
    doc = cm.part_doc(part, plan)
    doc["kernel"][0]["sizes"] = doc["kernel"][0]["sizes"][1:] or [999]
    with pytest.raises(ConfigError, match="does not hold exactly"):
        cm.check_part_doc(doc, part, PART)


def test_toml_text_refuses_what_toml_cannot_hold():
    with pytest.raises(ConfigError, match="not finite"):
        cm.toml_text({"sweep": {"min_time": float("inf")}, "kernel": [{"name": "gemm"}]})


def test_the_allocation_holds_the_widest_configuration_of_its_node_count():
    parts = [p for p in cm.split(_plan(), 2) if p.nodes == 2]
    config = allocation(parts, PART)
    assert (config.nodes, config.ranks_per_node, config.threads) == (2, 4, 1)
    narrow = build_plan({"sweep": {"nodes": [1], "ranks_per_node": [1, 2], "threads": [1, 2]},
                         "kernel": [{"name": "gemm", "sizes": [32]}]}, PART)
    config = allocation(cm.split(narrow, 1), PART)
    assert (config.ranks_per_node, config.threads) == (2, 2)  # 2 ranks x 2 threads fit on 4


@pytest.mark.skipif(os.geteuid() != 0, reason="gives up root in a child to be another user")
def test_a_manifest_another_user_may_not_read_is_said_to_be_a_permission_problem(tmp_path):
    """s34 tester U5: an unreadable campaign.json was "not a readable campaign manifest
    (PermissionError); restore it or emit the campaign again", and a folder closed to the user
    "not a campaign (no campaign.json)": both are permissions, said with what to do."""
    import grp  # noqa: F401 - what the child's one line needs, imported while root
    import pwd  # noqa: F401
    import stat  # noqa: F401

    import hpcds1mpi.runtime.denied_access  # noqa: F401
    from tests.measure.test_campaign_submit import _slurm_campaign_of_root, as_nobody

    shared = Path(tempfile.mkdtemp(prefix="hpcds1mpi-fu3-", dir="/tmp"))
    try:
        shared.chmod(0o755)
        camp = _slurm_campaign_of_root(shared)[0]
        assert as_nobody(cm.read_manifest, camp)[0] == "ok"
        (camp / cm.MANIFEST).chmod(0o600)
        kind, line = as_nobody(cm.read_manifest, camp)
        assert kind == "ConfigError" and "restore it" not in line
        assert line.startswith(f"campaign manifest {camp / cm.MANIFEST}: permission denied "
                               "(you may not read it: owner root")
        assert f"chmod o+r {camp / cm.MANIFEST}" in line
        camp.chmod(0o700)
        kind, line = as_nobody(cm.read_manifest, camp)
        assert kind == "ConfigError" and "not a campaign" not in line
        assert f"permission denied (you cannot enter the folder {camp}" in line
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_a_plan_file_given_for_a_campaign_folder_is_said_to_be_a_file(tmp_path):
    """s39 tester H5: `campaign status plan.toml` said "no such campaign folder" of a file."""
    from hpcds1mpi.measure.campaign import read_manifest

    (tmp_path / "plan.toml").write_text("[sweep]\n")
    with pytest.raises(ConfigError, match=r"plan.toml is a file, not a campaign folder; give "):
        read_manifest(tmp_path / "plan.toml")


def test_a_part_scripts_sbatch_value_is_read_back(tmp_path):
    """One reader for the job name, time limit and partition status reads back from the part
    scripts (was written three times)."""
    from hpcds1mpi.measure.campaign import sbatch_value

    script = tmp_path / "n1.sbatch"
    script.write_text("#!/bin/bash\n#SBATCH --job-name=hpcds1mpi-n1\n#SBATCH -t 0:10:00\n"
                      "#SBATCH --partition debug\nsrun x\n")
    assert sbatch_value(script, "job-name", "J") == "hpcds1mpi-n1"
    assert sbatch_value(script, "time", "t") == "0:10:00"
    assert sbatch_value(script, "partition", "p") == "debug"
    assert sbatch_value(script, "output", "o") == ""  # no such line
    assert sbatch_value(tmp_path / "gone.sbatch", "time", "t") is None  # cannot be read
