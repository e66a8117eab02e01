"""The ``mobo`` command: outputs, every node count, one-line errors."""

import json
import re

import pytest

from hpcds1mpi.errors import ModelError
from hpcds1mpi.surrogates import mobo
from tests.helpers import run_cli
from tests.test_atomic import small_disk  # noqa: F401 (fixture)
from tests.surrogates.mobo import PART
from tests.surrogates.test_objectives import TinyBundle


CLUSTER_TOML = """
[clusters.t]
[clusters.t.partitions.small]
cores_per_node = 4
memory_gb = 64
max_nodes = 8
gpus_per_node = 1
gpu_memory_gb = 16
"""


@pytest.fixture
def cluster_file(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(CLUSTER_TOML)
    return path


def test_cli_random_writes_table_csv_json_and_plot(tmp_path, cluster_file):
    out = tmp_path / "out"
    res = run_cli(["mobo", "--analytic", "--cluster", str(cluster_file), "--partition", "small",
                   "--workload", "stencil", "--size", "256", "--space", "nodes", "--method", "random",
                   "--budget", "6", "--out", str(out), "--seed", "1"], timeout=240)
    assert res.returncode == 0, res.stderr
    assert "runtime_s" in res.stdout and "reference point" in res.stdout
    doc = json.loads((out / "mobo.json").read_text())
    assert doc["method"] == "random" and doc["evaluations"] == 6 and len(doc["ref_point"]) == 2
    assert doc["objective_source"] == "modelled"
    assert (out / "pareto.csv").stat().st_size > 0 and (out / "pareto.png").stat().st_size > 1000
    assert doc["hv_ratio_to_exact"] <= 1.0 + 1e-9


def test_cli_full_space_with_every_node_count(tmp_path, cluster_file):
    out = tmp_path / "out"
    res = run_cli(["mobo", "--analytic", "--cluster", str(cluster_file), "--partition", "small",
                   "--workload", "stencil", "--size", "256", "--space", "full", "--node-counts", "all",
                   "--method", "random", "--budget", "6", "--out", str(out)], timeout=240)
    assert res.returncode == 0, res.stderr
    doc = json.loads((out / "mobo.json").read_text())
    every = mobo.build_candidates(PART, "stencil", 256, "full", nodes=list(range(1, 9)))
    assert doc["candidates"] == len(every) and doc["node_counts"] == "all"


@pytest.mark.parametrize("args, message", [
    (["--objectives", "runtime"], "two objectives"),
    (["--method", "mobo", "--budget", "2"], "initial design"),
    (["--workload", "nosuch"], "workload"),
    (["--partition", "nosuch"], "partition"),
])
def test_cli_bad_input_is_one_line(tmp_path, cluster_file, args, message):
    base = {"--cluster": str(cluster_file), "--partition": "small", "--workload": "stencil",
            "--size": "256", "--out": str(tmp_path / "o")}
    for i in range(0, len(args), 2):
        base[args[i]] = args[i + 1]
    argv = ["mobo", "--analytic"] + [x for kv in base.items() for x in kv]
    res = run_cli(argv, timeout=120)
    assert res.returncode != 0
    assert message in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_cli_model_without_energy(tmp_path):
    res = run_cli(["mobo", "--model", str(tmp_path / "missing"), "--workload", "stencil",
                   "--size", "256"], timeout=120)
    assert res.returncode != 0 and "Traceback" not in res.stderr


def test_cli_bundle_without_energy_target_is_one_line_error(monkeypatch, tmp_path, cluster_file):
    from click.testing import CliRunner

    import hpcds1mpi.surrogates.bundle as bundle_module
    from hpcds1mpi.commands.mobo import command

    monkeypatch.setattr(bundle_module, "load_bundle", lambda path: TinyBundle(targets=("runtime_s", "failed")))
    res = CliRunner().invoke(command, ["--model", str(tmp_path), "--workload", "stencil", "--size", "256",
                                       "--cluster", str(cluster_file), "--partition", "small"])
    assert isinstance(res.exception, ModelError)
    assert "no energy target" in str(res.exception) and "\n" not in str(res.exception)
    # Runtime and power need energy or power too; runtime-only would be one objective.
    monkeypatch.setattr(bundle_module, "load_bundle", lambda path: TinyBundle())
    res = CliRunner().invoke(command, ["--model", str(tmp_path), "--workload", "fft", "--size", "256",
                                       "--cluster", str(cluster_file), "--partition", "small"])
    assert isinstance(res.exception, ModelError) and "workload" in str(res.exception)


def test_cli_bundle_of_a_job_table_is_refused_in_one_line(monkeypatch, tmp_path, cluster_file):
    """A ``train --jobs`` bundle models logged jobs: mobo said "no energy target"."""
    from click.testing import CliRunner

    import hpcds1mpi.surrogates.bundle as bundle_module
    from hpcds1mpi.commands.mobo import command

    jobs = TinyBundle()
    jobs.manifest = {"feature_spec": {"request_columns": ["time_limit_s", "mem_req_gb"]}}
    monkeypatch.setattr(bundle_module, "load_bundle", lambda path: jobs)
    res = CliRunner().invoke(command, ["--model", str(tmp_path), "--workload", "stencil",
                                       "--size", "256", "--cluster", str(cluster_file),
                                       "--partition", "small"])
    assert isinstance(res.exception, ModelError) and "train --jobs" in str(res.exception)
    assert "\n" not in str(res.exception)


# -- outputs whole or not at all; unusable --out is one line before the work (#14) -------------

ANALYTIC = ["mobo", "--analytic", "--partition", "small", "--workload", "stencil", "--size",
            "256", "--method", "random", "--budget", "6", "--seed", "1"]


def test_cli_out_that_is_a_file_is_one_usage_line(tmp_path, cluster_file):
    from tests.test_atomic import digests

    (tmp_path / "results").write_text("the user's file")
    before = digests(tmp_path)
    res = run_cli([*ANALYTIC, "--cluster", str(cluster_file), "--out", str(tmp_path / "results")],
                  timeout=120)
    assert res.returncode == 2 and "is a file, not a folder" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and digests(tmp_path) == before


def _earlier_run(out, cluster_file):
    res = run_cli([*ANALYTIC, "--cluster", str(cluster_file), "--out", str(out)], timeout=240)
    assert res.returncode == 0, res.stderr


def test_outputs_no_mobo_run_wrote_and_bad_options_are_refused_before_anything_is_written(
        tmp_path, cluster_file):
    """A user's pareto.csv in --out was replaced; --out '' wrote into the working folder; three
    objectives crashed (ValueError traceback) after pareto.csv was written."""
    from tests.badinput.harness import snapshot

    out = tmp_path / "results"
    out.mkdir()
    (out / "pareto.csv").write_text("my,data\n")
    before = snapshot(tmp_path)
    for extra, code, fragment in (([], 2, "holds pareto.csv that no mobo run wrote"),
                                  (["--objectives", "runtime,energy,power"], 2,
                                   "give exactly two")):
        res = run_cli([*ANALYTIC, "--cluster", str(cluster_file), "--out", str(out), *extra],
                      timeout=240)
        assert res.returncode == code and fragment in res.stderr, res.stderr
        assert res.stderr.count("\n") == 1 and snapshot(tmp_path) == before
    res = run_cli([*ANALYTIC, "--cluster", str(cluster_file), "--out", ""], timeout=240)
    assert res.returncode == 2 and "--out is empty" in res.stderr, res.stderr
    assert snapshot(tmp_path) == before


def test_cli_outputs_replaced_whole_without_temporaries(tmp_path, cluster_file):
    from tests.test_atomic import temporaries

    out = tmp_path / "out"
    _earlier_run(out, cluster_file)
    (out / "pareto.csv").write_text("stale")
    (out / "notes.txt").write_text("the user's notes stay")
    res = run_cli([*ANALYTIC, "--cluster", str(cluster_file), "--out", str(out)], timeout=240)
    assert res.returncode == 0, res.stderr
    assert (out / "pareto.csv").read_text() != "stale" and temporaries(tmp_path) == []
    assert (out / "notes.txt").read_text() == "the user's notes stay"
    assert sorted(p.name for p in out.iterdir()) == ["mobo.json", "notes.txt", "pareto.csv",
                                                      "pareto.png"]


def test_cli_full_disk_is_exit_1_and_leaves_no_partial_file(tmp_path, cluster_file, small_disk):
    from tests.test_atomic import digests, fill, temporaries

    out = small_disk / "out"
    out.mkdir()
    (out / "mobo.json").write_text('{"old": true, "objectives": [], "exact_hv": 1, "methods": {}}')
    fill(small_disk, 0)
    before = digests(small_disk)
    res = run_cli([*ANALYTIC, "--cluster", str(cluster_file), "--out", str(out)], timeout=240)
    assert res.returncode == 1 and "disk is full" in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    assert digests(small_disk) == before and temporaries(small_disk) == []


def test_a_plot_that_dies_half_way_keeps_the_old_plot(tmp_path, cluster_file, monkeypatch):
    from click.testing import CliRunner

    from hpcds1mpi.analysis import pareto_plot
    from hpcds1mpi.commands.mobo import command
    from hpcds1mpi.errors import WriteError
    from tests.test_atomic import temporaries

    out = tmp_path / "out"
    _earlier_run(out, cluster_file)
    (out / "pareto.png").write_bytes(b"the old plot")

    def dies(path, *args, **kwargs):
        with open(path, "wb") as fh:
            fh.write(b"\x89PNG half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pareto_plot, "plot_fronts", dies)
    with pytest.raises(WriteError, match="disk is full"):
        CliRunner().invoke(command, [*ANALYTIC[1:], "--cluster", str(cluster_file), "--out",
                                     str(out)], catch_exceptions=False)
    assert (out / "pareto.png").read_bytes() == b"the old plot" and temporaries(tmp_path) == []


def test_cli_space_within_the_budget_is_scored_exactly(tmp_path, cluster_file):
    out = tmp_path / "out"
    res = run_cli(["mobo", "--analytic", "--cluster", str(cluster_file), "--partition", "small",
                   "--workload", "stencil", "--size", "256", "--space", "nodes",
                   "--method", "mobo", "--budget", "300", "--out", str(out)], timeout=240)
    assert res.returncode == 0, res.stderr
    assert "8 candidates <= budget 300: every candidate scored exactly" in res.stdout
    doc = json.loads((out / "mobo.json").read_text())
    assert doc["scored_exactly"] and doc["method"] == "exact" and doc["requested_method"] == "mobo"
    assert doc["evaluations"] == 8 and abs(doc["hv_ratio_to_exact"] - 1.0) < 1e-12
    # A budget below the space still searches.
    res = run_cli(["mobo", "--analytic", "--cluster", str(cluster_file), "--partition", "small",
                   "--workload", "stencil", "--size", "256", "--space", "nodes",
                   "--method", "random", "--budget", "5", "--out", str(out)], timeout=240)
    assert res.returncode == 0 and "scored exactly" not in res.stdout
    assert not json.loads((out / "mobo.json").read_text())["scored_exactly"]


def test_the_search_runs_with_numpys_blas_on_the_torch_thread_count(tmp_path, cluster_file,
                                                                    monkeypatch):
    """numpy's and SciPy's BLAS pools are limited to ``--threads`` while BO runs (they spun
    both cores of a busy machine beside one torch thread)."""
    from click.testing import CliRunner
    from threadpoolctl import threadpool_info

    from hpcds1mpi.commands.mobo import command

    if not [p for p in threadpool_info() if p["user_api"] == "blas"]:
        pytest.skip("no BLAS thread pool to limit")
    seen = []
    real_run = mobo.run

    def run(problem, method, *args, **kwargs):
        seen.append({p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"})
        return real_run(problem, method, *args, **kwargs)

    monkeypatch.setattr(mobo, "run", run)
    res = CliRunner().invoke(command, ["--analytic", "--cluster", str(cluster_file),
                                       "--partition", "small", "--workload", "stencil", "--size",
                                       "256", "--space", "full", "--method", "mobo", "--budget",
                                       "9", "--out", str(tmp_path / "o")], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert seen == [{1}]


# -- a partition with a trained partition's hardware; a size beyond the measured ones ---------

RENAMED_TOML = CLUSTER_TOML.replace("partitions.small", "partitions.renamed") + """
[clusters.t.partitions.other]
cores_per_node = 64
memory_gb = 256
max_nodes = 8
"""


class MeasuredBundle(TinyBundle):
    """TinyBundle that measured stencil at sizes 64..512 only."""

    size_range = {"stencil": (64.0, 512.0)}


def _bundle_run(monkeypatch, tmp_path, *args):
    from click.testing import CliRunner

    import hpcds1mpi.surrogates.bundle as bundle_module
    from hpcds1mpi.commands.mobo import command

    monkeypatch.setattr(bundle_module, "load_bundle", lambda path: MeasuredBundle())
    path = tmp_path / "renamed.toml"
    path.write_text(RENAMED_TOML)
    return CliRunner().invoke(command, ["--model", str(tmp_path), "--workload", "stencil",
                                        "--cluster", str(path), "--method", "random",
                                        "--budget", "4", "--out", str(tmp_path / "out"),
                                        *args])


def test_a_partition_with_a_trained_partitions_hardware_is_predicted_under_its_name(
        monkeypatch, tmp_path):
    """recommend accepted partition 'renamed' (the hardware of trained 'small'), mobo refused
    it; now mobo predicts it as 'small' and says so, and hardware no partition was trained on
    is refused naming --model-partition."""
    res = _bundle_run(monkeypatch, tmp_path, "--partition", "renamed", "--size", "256")
    assert res.exit_code == 0, res.output
    assert "note: partition 'renamed' has the hardware of trained partition 'small': " \
           "predicted as 'small'" in res.stdout
    res = _bundle_run(monkeypatch, tmp_path, "--partition", "other", "--size", "256")
    assert isinstance(res.exception, ModelError) and "\n" not in str(res.exception)
    assert "not trained for partition 'other' nor for its hardware" in str(res.exception)
    assert "it knows small: pass --model-partition NAME" in str(res.exception)


@pytest.mark.parametrize("size, outside", [(256, False), (10**9, True), (8, True)])
def test_a_size_beyond_the_measured_range_is_warned_and_the_front_labelled(
        monkeypatch, tmp_path, size, outside):
    """A front at 1.4e25 s came with no word that the size is far outside the measured ones."""
    res = _bundle_run(monkeypatch, tmp_path, "--partition", "renamed", "--size", str(size))
    assert res.exit_code == 0, res.output
    warned = [line for line in res.stderr.splitlines() if "outside the measured range" in line]
    doc = json.loads((tmp_path / "out" / "mobo.json").read_text())
    if outside:
        assert warned == [f"warning: size {size} is outside the measured range 64-512 of "
                          "stencil (the model extrapolates): the front is predicted, not "
                          "measured"]
        assert "predicted, extrapolated beyond the measured sizes 64-512):" in res.stdout
        assert doc["extrapolated_beyond_sizes"] == [64.0, 512.0]
    else:
        assert not warned and re.search(r"\d+ points?, predicted\):", res.stdout)
        assert doc["extrapolated_beyond_sizes"] is None
