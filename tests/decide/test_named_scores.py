"""One configuration, one answer: a configuration the caller names (``Model.predict``,
``/v1/predict``, an advised layout off the grid) is scored as the job's recommendation scores
it, whatever else is named with it (s35 tester R9: stencil 256 on 2 nodes x 2 ranks fp64 read
65.4 ms (36.1-111 ms) in recommend and advise, 68.97 ms (44.9-186 ms) from predict beside the
measured 1-node layout, 65.4 ms (51.0-78.1 ms) alone)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import hpcds1mpi
from hpcds1mpi import cluster as cluster_mod
from hpcds1mpi.config import Configuration

ENDS = ("runtime_s", "runtime_lo", "runtime_hi", "energy_j", "energy_lo", "energy_hi")
#: The tester's reach.toml: the test machine's partition with room for 4096 nodes.
REACH = ('[clusters.lab]\naccount = "demo"\n[clusters.lab.partitions.standard]\n'
         "cores_per_node = 2\nmemory_gb = 25.3\nmax_nodes = 4096\n")
#: The tester's s64.sbatch: 64 nodes of stencil 256, fp64.
S64 = ("#!/bin/bash\n#SBATCH --job-name=stencil\n#SBATCH --partition=standard\n"
       "#SBATCH --nodes=64\n#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=2\n"
       "#SBATCH --time=00:30:00\nexport OMP_NUM_THREADS=2\n"
       "srun hpcds1mpi run --threads 2 stencil --size 256 --precision fp64\n")


@pytest.fixture(autouse=True)
def user_files(tmp_path, monkeypatch):
    monkeypatch.setenv("HPCDS1MPI_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HPCDS1MPI_HISTORY", str(tmp_path / "cache" / "failures.json"))


@pytest.fixture
def reach(tmp_path):
    path = tmp_path / "reach.toml"
    path.write_text(REACH)
    return path


@pytest.fixture(scope="module")
def model():
    return hpcds1mpi.load_model()


def _grid(model, reach):
    """The recommendation's scored grid and its configurations."""
    cols = model.recommend("stencil", 256, cluster=str(reach)).raw.picked.choice.scores.cols
    configs = [Configuration(int(cols["nodes"][i]), int(cols["ranks_per_node"][i]),
                             int(cols["threads"][i]), str(cols["device"][i]),
                             str(cols["precision"][i])) for i in range(len(cols["nodes"]))]
    return cols, configs


def test_predict_answers_every_grid_row_as_the_recommendation_does(model, reach):
    """Alone, beside a measured layout or in the whole grid: the same numbers."""
    cols, configs = _grid(model, reach)
    whole = model.predict(configs, "stencil", 256, cluster=str(reach))
    for i, got in enumerate(whole):
        assert [getattr(got, k) for k in ENDS] == pytest.approx(
            [cols[k][i] for k in ENDS], rel=1e-12), configs[i]
    target = configs.index(Configuration(2, 2, 1, "cpu", "fp64"))
    measured = Configuration(1, 2, 1, "cpu", "fp64")
    for batch in ([configs[target]], [configs[target], measured], [measured, configs[target]]):
        got = model.predict(batch, "stencil", 256, cluster=str(reach))[
            batch.index(configs[target])]
        assert [getattr(got, k) for k in ENDS] == pytest.approx(
            [cols[k][target] for k in ENDS], rel=1e-12), batch


def test_a_named_measured_level_off_the_grid_moves_no_other_row(model, reach):
    """3 nodes is not a grid candidate; beside the measured levels it would have been one of
    the references an unmeasured row is floored and widened from."""
    two = Configuration(2, 2, 1, "cpu", "fp64")
    alone = model.predict([two], "stencil", 256, cluster=str(reach))[0]
    for other in (Configuration(3, 1, 1, "cpu", "fp64"), Configuration(1, 1, 1, "cpu", "fp64")):
        beside = model.predict([other, two], "stencil", 256, cluster=str(reach))[1]
        assert [getattr(beside, k) for k in ENDS] == [getattr(alone, k) for k in ENDS]


def test_recommend_advise_and_predict_side_by_side(model, reach, capsys):
    """The tester's three paths on one bundle and cluster file: the CLI's recommend listing,
    advise's recommended line (the script's 64 nodes too) and the API's predict."""
    from hpcds1mpi.cli import main

    with pytest.raises(SystemExit) as done:
        main(["recommend", "--workload", "stencil", "--size", "256", "--cluster", str(reach),
              "--json"])
    assert done.value.code in (0, None)
    answer = json.loads(capsys.readouterr().out)
    listed = {(r["nodes"], r["ranks_per_node"], r["threads"], r["precision"]): r
              for r in [answer["pick"], *answer["alternatives"]]}
    advice = model.advise(S64, cluster=str(reach))
    shown, asked = advice.recommended, advice.asked
    cols, configs = _grid(model, reach)
    named = [shown.config, asked.config, *(Configuration(n, r, t, "cpu", p)
                                           for n, r, t, p in listed)]
    predicted = model.predict(named, "stencil", 256, cluster=str(reach))
    for side, got in zip((shown, asked), predicted):
        assert [getattr(got, k) for k in ENDS] == pytest.approx(
            [getattr(side, k) for k in ENDS], rel=1e-12), side.config
    for row, got in zip(listed.values(), predicted[2:]):
        assert [getattr(got, k) for k in ENDS] == pytest.approx(
            [row[k] for k in ENDS], rel=1e-12), row


def test_an_advised_layout_off_the_grid_reads_as_predict_reads_it(model, reach):
    """advise scores a layout its grid lacks (3 nodes) as predict does: beside the measured."""
    from hpcds1mpi.decide.advise_answer import Side
    from hpcds1mpi.decide.advise_side import predict_side

    part = next(iter(cluster_mod.load_clusters(reach).values())).partitions["standard"]
    three = Configuration(3, 2, 1, "cpu", "fp64")
    side = predict_side(model.bundle, "stencil", 256, part, three, Side(three, "lab/standard"))
    got = model.predict([three], "stencil", 256, cluster=str(reach))[0]
    assert [getattr(side, k) for k in ENDS] == [getattr(got, k) for k in ENDS]
    assert np.isfinite(side.runtime_s)
