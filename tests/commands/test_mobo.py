"""The ``mobo`` command: outputs, every node count, one-line errors."""

import json
import re
from pathlib import Path

import pytest

from hpcds1mpi.errors import ConfigError, ModelError
from hpcds1mpi.surrogates import mobo
from tests.helpers import run_cli
from tests.test_atomic import small_disk  # noqa: F401 (fixture)
from tests.surrogates.mobo import PART
from tests.surrogates.test_objectives import MemoryBundle, TinyBundle


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


def test_a_model_bundle_or_quickstart_folder_is_refused_as_out(tmp_path, cluster_file, capsys):
    """`mobo --out MODEL` wrote pareto.* into the bundle, and train and learn then called it
    "not a hpcds1mpi bundle"; a quickstart folder is kept whole by its command too."""
    from hpcds1mpi.cli import main
    from hpcds1mpi.surrogates.bundle_files import is_bundle
    from tests.badinput.harness import snapshot

    bundle, quick = tmp_path / "model_b", tmp_path / "qs"
    bundle.mkdir()
    quick.mkdir()
    (bundle / "manifest.json").write_text(json.dumps(
        {"format_version": 1, "targets": ["runtime_s"], "feature_spec": {}}))
    (bundle / "README.txt").write_text("hpcds1mpi model bundle\n")
    (quick / ".hpcds1mpi-quickstart").write_text("written by hpcds1mpi quickstart\n")
    before = snapshot(tmp_path)
    for out, owner in ((bundle, "a model bundle"), (quick, "a quickstart folder")):
        with pytest.raises(SystemExit) as exit_info:
            main([*ANALYTIC, "--cluster", str(cluster_file), "--out", str(out)])
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and err.count("\n") == 1, err
        assert (f"--out {out} is {owner}, which must hold only its own files; choose another "
                "--out") in err
    assert snapshot(tmp_path) == before and is_bundle(bundle)


def test_an_out_inside_another_bundle_is_refused(tmp_path, cluster_file, capsys):
    """s48 review RX2: `mobo --out OTHER_MODEL/front` wrote into that bundle (only the bundle
    itself and --model's were refused), which learn then refused as "not a hpcds1mpi bundle"."""
    from hpcds1mpi.cli import main
    from tests.badinput.harness import snapshot

    bundle = tmp_path / "other_model"
    bundle.mkdir()
    (bundle / "manifest.json").write_text(json.dumps(
        {"format_version": 1, "targets": ["runtime_s"], "feature_spec": {}}))
    before = snapshot(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main([*ANALYTIC, "--cluster", str(cluster_file), "--out", str(bundle / "front")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1, err
    assert "model bundle" in err and str(bundle) in err, err
    assert snapshot(tmp_path) == before


def test_the_out_check_reads_the_bundle_keys_of_output_paths(tmp_path, monkeypatch):
    """mobo's own --out check tells a bundle by output_paths.BUNDLE_KEYS, the one set that
    ingest, telemetry and sweep read (it had a copy of its own, s48 left by fixer C): a
    changed set changes what mobo refuses too."""
    from hpcds1mpi import output_paths
    from hpcds1mpi.commands.mobo import _check_own_outputs
    from hpcds1mpi.errors import OutputError

    (tmp_path / "manifest.json").write_text(json.dumps({"format_version": 9}))
    _check_own_outputs(str(tmp_path))  # another tool's manifest: no bundle
    monkeypatch.setattr(output_paths, "BUNDLE_KEYS", frozenset({"format_version"}))
    with pytest.raises(OutputError, match="is a model bundle, which must hold only its own"):
        _check_own_outputs(str(tmp_path))


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


def test_a_full_disk_at_the_plot_keeps_the_whole_old_set_and_says_so(tmp_path, cluster_file,
                                                                      monkeypatch):
    """The csv and json of a new problem had been written before the plot failed on a full
    disk, left beside the old problem's png, while the message said nothing was changed."""
    from click.testing import CliRunner

    from hpcds1mpi.analysis import pareto_plot
    from hpcds1mpi.commands.mobo import command
    from hpcds1mpi.errors import WriteError
    from tests.test_atomic import digests, temporaries

    out = tmp_path / "out"
    _earlier_run(out, cluster_file)
    before = digests(out)

    def full(path, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pareto_plot, "plot_fronts", full)
    argv = [*ANALYTIC[1:], "--cluster", str(cluster_file), "--out", str(out)]
    argv[argv.index("256")] = "96"  # another problem
    with pytest.raises(WriteError, match="nothing already there was changed"):
        CliRunner().invoke(command, argv, catch_exceptions=False)
    assert digests(out) == before and temporaries(tmp_path) == []


def test_an_interrupt_while_the_plot_is_drawn_keeps_the_whole_old_set(tmp_path, cluster_file,
                                                                     monkeypatch):
    """SIGTERM (a walltime) or Ctrl-C while the plot is drawn: the old three files stay."""
    from click.testing import CliRunner

    from hpcds1mpi.analysis import pareto_plot
    from hpcds1mpi.commands.mobo import command
    from tests.test_atomic import digests, temporaries

    out = tmp_path / "out"
    _earlier_run(out, cluster_file)
    before = digests(out)

    def interrupted(path, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pareto_plot, "plot_fronts", interrupted)
    argv = [*ANALYTIC[1:], "--cluster", str(cluster_file), "--out", str(out), "--size", "96"]
    res = CliRunner().invoke(command, argv, catch_exceptions=False)  # click: "Aborted!"
    assert res.exit_code != 0 and digests(out) == before and temporaries(tmp_path) == []


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


def _bundle_run(monkeypatch, tmp_path, *args, bundle=MeasuredBundle, method="random"):
    from click.testing import CliRunner

    import hpcds1mpi.surrogates.bundle as bundle_module
    from hpcds1mpi.commands.mobo import command

    monkeypatch.setattr(bundle_module, "load_bundle", lambda path: bundle())
    path = tmp_path / "renamed.toml"
    path.write_text(RENAMED_TOML)
    model = tmp_path / "model"  # beside --out: an output inside --model is refused (M11)
    model.mkdir(exist_ok=True)
    return CliRunner().invoke(command, ["--model", str(model), "--workload", "stencil",
                                        "--cluster", str(path), "--method", method,
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
           "predicted as 'small'" in res.stderr
    res = _bundle_run(monkeypatch, tmp_path, "--partition", "other", "--size", "256")
    assert isinstance(res.exception, ModelError) and "\n" not in str(res.exception)
    assert "not trained for partition 'other' nor for its hardware" in str(res.exception)
    assert "it knows small: pass --model-partition NAME" in str(res.exception)


@pytest.mark.parametrize("size, outside", [(256, False), (1000, True), (8, True)])
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


def test_a_configuration_that_does_not_fit_in_memory_is_never_searched_nor_on_the_front(
        monkeypatch, tmp_path):
    """mobo's front held configurations recommend rejects for memory (exit 0): they are now
    left out before the search, said in one line and counted in mobo.json."""
    res = _bundle_run(monkeypatch, tmp_path, "--partition", "renamed", "--size", "256",
                      method="exact", bundle=MemoryBundle)  # an option given once
    assert res.exit_code == 0, res.output
    # 80 GB over one node's 4 ranks; 57.6 GB of its 64 usable
    assert "left out: 1 of 8 configurations need more memory than partition 'renamed' gives " \
           "(usable 57.6 GB per node): not searched" in res.stdout
    doc = json.loads((tmp_path / "out" / "mobo.json").read_text())
    assert doc["memory_left_out"] == 1 and doc["candidates"] == 7
    assert {row["nodes"] for row in doc["front"] + doc["exact_front"]} <= set(range(2, 9))


@pytest.mark.parametrize("space", ["nodes", "full"])
def test_no_configuration_that_fits_in_memory_is_one_line_and_writes_nothing(
        monkeypatch, tmp_path, space):
    res = _bundle_run(monkeypatch, tmp_path, "--partition", "renamed", "--size", str(10**6),
                      "--space", space, bundle=MemoryBundle)
    assert isinstance(res.exception, ConfigError) and "\n" not in str(res.exception)
    text = str(res.exception)
    assert text.startswith("no configuration of stencil size 1000000 fits in memory on "
                           "partition 'renamed': the smallest needs ~")
    assert "57.6 GB per node" in text and "try a smaller --size" in text
    assert ("usable 14.4 GB per GPU, 57.6 GB per node" in text) == (space == "full")
    assert ("--space full" in text) == (space == "nodes")
    assert not (tmp_path / "out").exists()


def test_the_shipped_bundle_refuses_a_job_recommend_rejects_for_memory(tmp_path):
    """The tester's job: stencil 3000 on the lab cluster (recommend: needs ~81.3 GB per node,
    22.8 GB usable) was a front at exit 0."""
    lab = tmp_path / "lab.toml"
    lab.write_text((Path(__file__).parents[1] / "data" / "jobscripts" / "lab.toml").read_text())
    res = run_cli(["mobo", "--workload", "stencil", "--size", "3000", "--cluster", str(lab),
                   "--space", "full", "--out", str(tmp_path / "m"), "--method", "exact"],
                  timeout=240)
    assert res.returncode == 2, res.stdout
    errors = [line for line in res.stderr.splitlines() if "error" in line]
    assert errors == ["hpcds1mpi: error: no configuration of stencil size 3000 fits in memory "
                      "on partition 'standard': the smallest needs ~77.6 GB per node; usable "
                      "22.8 GB per node; try a smaller --size, or a partition with more memory "
                      "or more nodes"]
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("size", [256, 2000])  # within the measured sizes, and beyond them
def test_the_objective_judges_memory_by_recommends_limits(size):
    """The command's judge is decide/memory_limits.py: the learned need, a kernel's declared
    working set beyond the measured sizes, the nominal limit of a bundle without failures."""
    import numpy as np

    from hpcds1mpi.commands.mobo import memory_judge
    from hpcds1mpi.decide.memory_limits import (MemoryLimit, declared_need_mb,
                                                memory_need_and_limit)
    from hpcds1mpi.surrogates.objectives import BundleObjective

    bundle = MemoryBundle()
    cands = mobo.build_candidates(PART, "stencil", size, "full")
    out = BundleObjective(bundle, PART, memory=memory_judge(bundle, PART))(cands)
    ranks = (cands["nodes"] * cands["ranks_per_node"]).to_numpy()
    cols = {"device": cands["device"].to_numpy(str), "partition": np.full(len(cands), "small"),
            "ranks_per_node": cands["ranks_per_node"].to_numpy(), "peak_rss_mb": 80_000.0 / ranks}
    declared = declared_need_mb("stencil", size, ranks, cands["precision"].to_numpy(str),
                                (64.0, 512.0))
    assert (declared is None) == (size == 256)
    need, limit = memory_need_and_limit(cols, [PART], {"small": MemoryLimit.nominal(PART)},
                                        declared)
    too_big = need > limit
    assert too_big.any() and not too_big.all()
    np.testing.assert_allclose(out["mem_need_mb"], need)
    np.testing.assert_allclose(out["mem_limit_mb"], limit)
    assert (out["status"] == "oom").tolist() == too_big.tolist()


def test_the_objective_and_predict_judge_memory_alike_on_the_shipped_bundle():
    """The same need and verdict as System 1 (what recommend and /v1/predict judge by), on
    the shipped bundle: its learned limits, a lab partition predicted under the trained name,
    and stencil's declared need beyond the measured sizes."""
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.commands.mobo import memory_judge
    from hpcds1mpi.config import Configuration
    from hpcds1mpi.decide.model_bundle import load_model
    from hpcds1mpi.decide.predict_configs import predict_configs
    from hpcds1mpi.surrogates.objectives import BundleObjective

    bundle = load_model(None)
    lab = Partition(name="standard", cores_per_node=2, memory_gb=25.3, max_nodes=4)
    cands = mobo.build_candidates(lab, "stencil", 1000, "full")
    out = BundleObjective(bundle, lab, model_partition="local",
                          memory=memory_judge(bundle, lab))(cands)
    rows = predict_configs(bundle, "stencil", 1000, lab, [
        Configuration(int(c.nodes), int(c.ranks_per_node), int(c.threads), str(c.device),
                      str(c.precision)) for c in cands.itertuples()])
    assert out["mem_need_mb"].tolist() == pytest.approx([r["mem_need_mb"] for r in rows])
    memory = [r["reason"] == "memory" for r in rows]
    assert any(memory) and not all(memory)
    assert (out["status"] == "oom").tolist() == memory


def test_the_command_writes_the_front_as_recommend_reads_it(tmp_path):
    """The same through the CLI: the exact front's runtime of stencil 256 is the one
    predict_configs gives that layout (its measured run), not the model's own."""
    import csv

    from hpcds1mpi.config import Configuration
    from hpcds1mpi.decide.model_bundle import load_model
    from hpcds1mpi.decide.predict_configs import predict_configs
    from hpcds1mpi.surrogates.objectives import partition_for_bundle

    res = run_cli(["mobo", "--workload", "stencil", "--size", "256", "--space", "full",
                   "--method", "exact", "--out", str(tmp_path / "m")], timeout=240)
    assert res.returncode == 0, res.stderr
    front = list(csv.DictReader((tmp_path / "m" / "pareto.csv").open()))
    bundle = load_model(None)
    for row in front:
        config = Configuration(int(row["nodes"]), int(row["ranks_per_node"]),
                               int(row["threads"]), row["device"], row["precision"])
        want = predict_configs(bundle, "stencil", 256, partition_for_bundle(bundle, None),
                               [config])[0]
        assert float(row["runtime_s"]) == pytest.approx(want["runtime_s"])


@pytest.mark.parametrize("budget, header_end", [
    ("300", "budget 300, 8 evaluations"),  # the space within the budget: every candidate
    ("6", "budget 6"),
])
def test_the_header_gives_one_budget_the_asked_one(tmp_path, cluster_file, budget, header_end):
    """s47 tester N6: the header's "budget" was the evaluations run (8) and the next line's the
    asked --budget (300); both now say --budget, the evaluations named as such."""
    from click.testing import CliRunner

    from hpcds1mpi.commands.mobo import command

    argv = [*ANALYTIC[1:], "--cluster", str(cluster_file), "--out", str(tmp_path / "out"),
            "--space", "nodes"]
    argv[argv.index("--budget") + 1] = budget
    res = CliRunner().invoke(command, argv, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].endswith(f"objective modelled, {header_end}"), lines[0]
    budgets = {m for line in lines for m in re.findall(r"budget (\d+)", line)}
    assert budgets == {budget}


def test_an_out_inside_the_model_bundle_is_refused_before_the_search(tmp_path, capsys):
    """mobo --out MODEL/front wrote a folder into the bundle, which learn then refused
    (s47 tester M11)."""
    from tests.badinput.harness import assert_usage, invoke

    model = tmp_path / "bm"
    model.mkdir()
    res = invoke(capsys, ["mobo", "--model", model, "--workload", "stencil", "--size", "28",
                          "--out", model / "front"])
    assert_usage(res, "is inside the --model bundle", "choose a path outside it")
    assert not any(model.iterdir())
