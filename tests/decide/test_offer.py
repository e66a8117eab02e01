"""A user's program is offered only what it was measured with: ``recommend`` (library and
CLI, table and JSON), ``mobo``'s candidates and ``tune``'s space, each saying what was left out
and why; ranks per node beyond the measured maximum only where the guard accepts them. The
bundle is trained for real on hand-made rows (a closed-form runtime, never reported)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from hpcds1mpi.cluster import Partition
from hpcds1mpi.decide import offer as offer_mod
from hpcds1mpi.decide import recommend as rec_mod
from hpcds1mpi.decide.guard import GuardCalibration, reference
from hpcds1mpi.decide.recommendation import format_table, to_dict
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.surrogates.bundle import load_bundle, train_bundle
from hpcds1mpi.surrogates.levels import LEVELS_FILE, bundle_levels
from tests.fake_bundle import isolate_user_files

PART = Partition("cpu", cores_per_node=8, memory_gb=16.0, max_nodes=2)


def make_runs() -> pd.DataFrame:
    """A kernel (stencil: every precision) and a program measured at fp32, CPU, threads 1-2,
    ranks per node 1, 2, 4 only."""
    rng = np.random.default_rng(0)
    rows = []
    for w, kind, precisions in (("stencil", "kernel", ("fp64", "fp32")),
                                ("myapp", "external", ("fp32",))):
        for size in (32, 48, 64, 96):
            for nodes in (1, 2):
                for rpn in (1, 2, 4):
                    for threads in (1, 2):
                        for prec in precisions:
                            ranks = nodes * rpn
                            runtime = size ** 3 * 1e-7 / (ranks * threads ** 0.8) * \
                                np.exp(rng.normal(0, 0.05)) * (0.6 if prec != "fp64" else 1)
                            power = nodes * 6.0 + 7.0 * rpn * threads
                            rows.append(dict(
                                run_id=f"{w}-{size}-{nodes}-{rpn}-{threads}-{prec}",
                                machine_id="m0", workload=w, kind=kind, size=size, nodes=nodes,
                                ranks_per_node=rpn, ranks=ranks, threads=threads, device="cpu",
                                precision=prec, status="ok", error="", runtime_s=runtime,
                                peak_rss_mb=50.0, energy_j=runtime * power, avg_power_w=power,
                                energy_source="modelled", partition="cpu", cores_per_node=8,
                                memory_gb=16.0, gpus_per_node=0))
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    bundle = train_bundle(make_runs(), seed=1, n_members=2, use_embedding=False, threads=1)
    path = tmp_path_factory.mktemp("offer") / "model"
    bundle.save(path)
    return path


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    isolate_user_files(monkeypatch, tmp_path)


def _rows(rec):
    ch = rec.picked.choice
    return [ch.scores.row(i) for i in ch.ranking]


def test_the_bundle_stores_each_programs_measured_levels(model_dir):
    assert (model_dir / LEVELS_FILE).is_file()
    bundle = load_bundle(model_dir)
    levels = bundle_levels(bundle, "myapp")
    assert levels.precisions == ("fp32",) and levels.devices == ("cpu",)
    assert levels.threads == (1, 2) and levels.ranks_per_node == (1, 2, 4)
    assert bundle_levels(bundle, "stencil") is None  # a kernel keeps its declared knobs


def test_recommend_offers_a_program_only_what_was_measured(model_dir):
    bundle = load_bundle(model_dir)
    rec = rec_mod.recommend(bundle, "myapp", 64, [(None, PART)], model_dir=model_dir)
    assert rec.picked is not None, format_table(rec)
    rows = _rows(rec)
    assert {r["precision"] for r in rows} == {"fp32"}
    assert {r["threads"] for r in rows} <= {1, 2} and {r["device"] for r in rows} == {"cpu"}
    cap = max(r["ranks_per_node"] for r in rows)
    assert cap <= 8
    assert "bf16: never measured for this program" in rec.left_out
    assert "fp64: never measured for this program" in rec.left_out
    assert any(t.startswith("threads 3-8: never measured") for t in rec.left_out)
    assert any(t.startswith("ranks per node") for t in rec.left_out)
    text = format_table(rec)
    assert "left out:" in text and "  - bf16: never measured for this program" in text
    assert "bf16: never measured for this program" in to_dict(rec)["left_out"]
    # The kernel in the same bundle still gets everything it declares.
    kernel = rec_mod.recommend(bundle, "stencil", 64, [(None, PART)], model_dir=model_dir)
    from hpcds1mpi.kernels import support

    assert {r["precision"] for r in _rows(kernel)} == set(support("stencil")[1])
    assert kernel.left_out == []


def test_ranks_per_node_beyond_the_measured_maximum_only_where_the_guard_accepts(model_dir):
    bundle = load_bundle(model_dir)
    ref = reference(bundle)
    offer = offer_mod.offer_for(bundle, "myapp", [PART])
    assert offer.max_ranks_per_node == 4
    strict = offer_mod.extend_ranks_per_node(offer_mod.offer_for(bundle, "myapp", [PART]),
                                             bundle, "myapp", 64, [PART], ref,
                                             GuardCalibration(0.0, 0.0))
    assert strict.max_ranks_per_node == 4
    assert any("ranks per node above 4" in t and "unfamiliar" in t for t in strict.left_out)
    lenient = offer_mod.extend_ranks_per_node(offer_mod.offer_for(bundle, "myapp", [PART]),
                                              bundle, "myapp", 64, [PART], ref,
                                              GuardCalibration(1e9, 1e9))
    assert lenient.max_ranks_per_node == 8
    assert any(t.startswith("ranks per node 5-8: beyond the measured maximum 4")
               for t in lenient.left_out)


def test_a_device_never_measured_is_refused_in_one_line(model_dir):
    bundle = load_bundle(model_dir)
    gpu = Partition("cpu", cores_per_node=8, memory_gb=16.0, max_nodes=2, gpus_per_node=2)
    with pytest.raises(ConfigError, match="never measured on gpu"):
        rec_mod.recommend(bundle, "myapp", 64, [(None, gpu)], device="gpu", model_dir=model_dir)


def test_cli_recommend_json_says_what_was_left_out(model_dir, tmp_path):
    from hpcds1mpi.commands.recommend import command

    cluster = tmp_path / "c.toml"
    cluster.write_text('[cluster]\nname = "lab"\n[partitions.cpu]\n'
                       'cores_per_node = 8\nmemory_gb = 16\nmax_nodes = 2\n')
    result = CliRunner().invoke(command, ["--model", str(model_dir), "--cluster", str(cluster),
                                          "--workload", "myapp", "--size", "64", "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["pick"]["precision"] == "fp32"
    assert "bf16: never measured for this program" in data["left_out"]


def test_mobo_candidates_and_tune_space_hold_only_measured_levels(model_dir):
    from hpcds1mpi.commands.mobo import _measured_offer
    from hpcds1mpi.decide.tune_space import workload_space
    from hpcds1mpi.surrogates.mobo import build_candidates

    bundle = load_bundle(model_dir)
    offer = _measured_offer(bundle, "myapp", PART)
    cands = build_candidates(PART, "myapp", 64, "full", offer=offer)
    assert set(cands["precision"]) == {"fp32"} and set(cands["threads"]) <= {1, 2}
    assert cands["ranks_per_node"].max() == 4
    nodes_only = build_candidates(PART, "myapp", 64, "nodes", offer=offer)
    assert set(nodes_only["precision"]) == {"fp32"} and set(nodes_only["ranks_per_node"]) == {4}
    everything = build_candidates(PART, "myapp", 64, "full")
    assert "bf16" in set(everything["precision"])  # without the offer: the old behaviour
    space = workload_space(PART, None, max_nodes=2, offer=offer_mod.offer_for(bundle, "myapp",
                                                                              [PART]))
    assert {c.precision for c in space.configs} == {"fp32"}
    assert max(c.ranks_per_node for c in space.configs) == 4


def test_a_programs_runtime_source_is_said_end_to_end(tmp_path):
    """sweep --command (--time-regex / without) -> train -> the bundle says per program which
    runtime it learned; tune and recommend's callers get the line from runtime_note."""
    from tests.helpers import run_cli

    app = tmp_path / "app.sh"
    app.write_text("#!/bin/sh\necho \"own time: 0.0$1 s\"\n")
    app.chmod(0o755)
    common = ["--sizes", "1,2,3", "--threads", "1,2", "--min-repeats", "1", "--max-repeats",
              "1", "--min-time", "0", "--no-progress"]
    for label, extra, out in (("own", ["--time-regex", r"own time: ([0-9.]+) s"], "own.h5"),
                              ("wall", [], "wall.h5")):
        res = run_cli(["sweep", "--command", f"{app} {{size}}", "--label", label, *common,
                       *extra, "--out", out], cwd=tmp_path)
        assert res.returncode == 0, res.stderr
    res = run_cli(["train", "--telemetry", "own.h5", "--telemetry", "wall.h5", "--out", "model",
                   "--members", "2", "--no-embedding"], cwd=tmp_path, timeout=240)
    assert res.returncode == 0, res.stderr[-2000:]
    stored = json.loads((tmp_path / "model" / LEVELS_FILE).read_text())
    assert stored["own"]["runtime"] == "program's own time (--time-regex own time: ([0-9.]+) s)"
    assert stored["wall"]["runtime"] == "launch wall time (s)"
    bundle = load_bundle(tmp_path / "model")
    own = offer_mod.runtime_note(bundle, "own")
    assert own["line"] == "runtime: the program's own reported time (--time-regex " \
                          "'own time: ([0-9.]+) s')"
    assert offer_mod.runtime_note(bundle, "wall")["line"].startswith(
        "runtime: the launch's wall time")


def test_an_older_bundle_says_its_programs_runtime_is_unknown(model_dir, tmp_path):
    """Rows without runtime_source, a levels file without ``runtime``, no levels file at all:
    the bundle loads, the program's runtime is unknown, a kernel gets no line."""
    import shutil

    assert offer_mod.runtime_note(load_bundle(model_dir), "myapp")["source"] == "unknown"
    assert offer_mod.runtime_note(load_bundle(model_dir), "stencil") is None
    old = tmp_path / "old"
    shutil.copytree(model_dir, old)
    manifest = json.loads((old / "manifest.json").read_text())
    manifest.pop("files", None)  # an older bundle: written before manifests held file hashes
    (old / "manifest.json").write_text(json.dumps(manifest))
    doc = json.loads((old / LEVELS_FILE).read_text())
    for entry in doc.values():
        entry.pop("runtime", None)
    (old / LEVELS_FILE).write_text(json.dumps(doc))
    note = offer_mod.runtime_note(load_bundle(old), "myapp")
    assert note["source"] == "unknown" and note["line"].startswith("runtime: unknown")
    (old / LEVELS_FILE).unlink()
    assert offer_mod.runtime_note(load_bundle(old), "myapp")["source"] == "unknown"


def test_a_partition_named_otherwise_is_judged_as_the_trained_one_it_matches(model_dir):
    """The partition name is a feature of the guard's design: the same hardware under a name
    the bundle never saw was further from the training data, so a threshold that accepts
    ranks per node 5-8 on the trained partition refused them on the renamed one."""
    import dataclasses

    from hpcds1mpi.decide import guard as guard_mod
    from hpcds1mpi.decide.system1_candidates import Constraints, candidate_columns

    bundle = load_bundle(model_dir)
    ref = reference(bundle)
    offer = offer_mod.offer_for(bundle, "myapp", [PART])
    rows = candidate_columns("myapp", 64, [PART],  # the rows extend_ranks_per_node judges
                             Constraints(max_nodes=1, devices=offer.devices,
                                         precisions=offer.precisions, threads=offer.threads),
                             uses_threads=offer.uses_threads)
    rows = rows[np.asarray(rows["ranks_per_node"] > 4)]
    dist = guard_mod.rows_distance(bundle, ref, rows)
    rpn = np.asarray(rows["ranks_per_node"])
    threshold = max(guard_mod.median(dist[rpn == r]) for r in np.unique(rpn))
    for part in (PART, dataclasses.replace(PART, name="bigmem")):
        offer = offer_mod.extend_ranks_per_node(offer_mod.offer_for(bundle, "myapp", [part]),
                                                bundle, "myapp", 64, [part], ref,
                                                GuardCalibration(threshold, threshold))
        assert offer.max_ranks_per_node == 8, part.name


def test_tune_is_offered_the_ranks_per_node_recommend_offers(model_dir, monkeypatch):
    """s48 tester Q6: recommend offered (and put on its front) ranks per node beyond the
    measured maximum the guard found familiar; tune never asked the guard, left them out
    ("beyond the measured maximum") and refused a start there. Both take one decision: an
    extension the guard accepts is in tune's space, one it refuses stays out of both."""
    from hpcds1mpi.decide import guard as guard_mod
    from hpcds1mpi.decide.tune_space import workload_space

    bundle = load_bundle(model_dir)
    for calibration, most in ((GuardCalibration(1e9, 1e9), 8), (GuardCalibration(0.0, 0.0), 4)):
        monkeypatch.setattr(guard_mod, "load_calibration", lambda *a, c=calibration, **k: c)
        rec = rec_mod.recommend(bundle, "myapp", 64, [(None, PART)], model_dir=model_dir)
        assert max(r["ranks_per_node"] for r in _rows(rec)) == most
        offer = offer_mod.tune_offer(bundle, "myapp", 64, PART, model_dir)
        assert offer.max_ranks_per_node == most
        assert [t for t in offer.left_out if "ranks per node" in t] == \
            [t for t in rec.left_out if "ranks per node" in t]
        space = workload_space(PART, None, max_nodes=1, offer=offer)
        assert max(c.ranks_per_node for c in space.configs) == most
        # tune says the line as offered, not as "left out" (:func:`guard_offered`)
        assert any(offer_mod.guard_offered(t) for t in offer.left_out) == (most == 8)


#: Why the program's ranks cannot be one job, as its sweep records it (s39 tester A2).
WITHOUT_MPI = ("the program solo links no MPI library (ldd resolves every library it needs), "
               "so its ranks would run as independent copies, each doing the whole job")


@pytest.fixture(scope="module")
def solo_dir(tmp_path_factory):
    """A program measured at 1 rank (threads 1, 2) whose sweep recorded that it links no MPI."""
    rows = make_runs()
    rows = rows[(rows["workload"] == "myapp") & (rows["ranks_per_node"] == 1)
                & (rows["nodes"] == 1)].copy()
    rows["workload"] = "solo"
    rows["run_id"] = "solo-" + rows["run_id"]
    rows["launched_with"] = json.dumps({"launcher": "mpiexec", "command": "/usr/bin/mpiexec",
                                        "flavour": "HydraMpiexec", "args": [], "mpi": "",
                                        "one_rank_only": WITHOUT_MPI}, sort_keys=True)
    bundle = train_bundle(pd.concat([make_runs(), rows], ignore_index=True), seed=1,
                          n_members=2, use_embedding=False, threads=1)
    path = tmp_path_factory.mktemp("solo") / "model"
    bundle.save(path)
    return path


def test_a_program_without_mpi_is_offered_no_rank_count_it_was_not_measured_at(
        solo_dir, monkeypatch):
    """s39 tester A2: RAxML (no MPI; its sweep refuses 2 ranks) was offered 2 ranks x 1
    thread from its 1-rank sweep, the guard finding them familiar, alone on the front."""
    from hpcds1mpi.decide import guard as guard_mod

    bundle = load_bundle(solo_dir)
    lenient = GuardCalibration(1e9, 1e9)  # the guard would accept any ranks per node
    offer = offer_mod.extend_ranks_per_node(offer_mod.offer_for(bundle, "solo", [PART]),
                                            bundle, "solo", 64, [PART], reference(bundle),
                                            lenient)
    assert offer.max_ranks_per_node == 1 and offer.max_nodes == 1
    (line,) = [t for t in offer.left_out if "rank" in t or t.startswith("nodes")]
    assert line.startswith("more than 1 rank (ranks per node above 1, nodes above 1): "
                           + WITHOUT_MPI) and "refuses more than one rank" in line
    monkeypatch.setattr(guard_mod, "load_calibration", lambda *a, **k: lenient)
    rec = rec_mod.recommend(bundle, "solo", 64, [(None, PART)], model_dir=solo_dir)
    assert rec.picked is not None, format_table(rec)
    assert {(r["nodes"], r["ranks_per_node"]) for r in _rows(rec)} == {(1, 1)}
    text = format_table(rec)
    assert "Offered only what was measured; left out:" in text and WITHOUT_MPI in text
    # A program whose sweep recorded nothing of the kind is offered the guard's extension,
    # under a heading that says so (it read "Offered only what was measured").
    extended = rec_mod.recommend(bundle, "myapp", 64, [(None, PART)], model_dir=solo_dir)
    assert max(r["ranks_per_node"] for r in _rows(extended)) == 8
    assert "Offered what was measured, and ranks per node the guard finds familiar" in \
        format_table(extended)


def test_a_program_whose_runs_ignored_their_threads_is_offered_one_thread(tmp_path):
    """s41 tester A3: MPQC ignores OMP_NUM_THREADS; its sweep's CPU time showed one core busy
    per rank at 2 threads, yet recommend picked 1 rank x 2 threads on load noise and its
    script asked 2 CPUs per rank. Now recommend and tune offer 1 thread, saying why."""
    from hpcds1mpi.decide.tune_space import workload_space

    rows = make_runs()
    rows = rows[rows["workload"] == "myapp"].copy()
    rows["workload"], rows["run_id"] = "idle", "idle-" + rows["run_id"]
    # one computation at either thread count: 2 threads 3 % faster by noise alone
    rows["runtime_s"] = rows["size"] ** 3 * 1e-7 / rows["ranks"] * np.where(
        rows["threads"] == 2, 0.97, 1.0)
    rows["measured_s"] = rows["runtime_s"] * 3
    rows["cpu_s"] = 0.9 * rows["measured_s"] * rows["ranks"]  # 0.9 cores busy per rank
    bundle = train_bundle(pd.concat([make_runs(), rows], ignore_index=True), seed=1,
                          n_members=2, use_embedding=False, threads=1)
    bundle.save(tmp_path / "model")
    bundle = load_bundle(tmp_path / "model")
    rec = rec_mod.recommend(bundle, "idle", 64, [(None, PART)], model_dir=tmp_path / "model")
    assert rec.picked is not None, format_table(rec)
    assert {r["threads"] for r in _rows(rec)} == {1}
    assert any(t.startswith("threads = 1 only: idle's runs at 2 threads kept 0.90 cores busy "
                            "per rank, 1.00 x its runs at 1 thread") for t in rec.left_out)
    space = workload_space(PART, None, max_nodes=2,
                           offer=offer_mod.offer_for(bundle, "idle", [PART]))
    assert {c.threads for c in space.configs} == {1}  # tune's space too
    assert {r["threads"] for r in _rows(rec_mod.recommend(
        bundle, "myapp", 64, [(None, PART)], model_dir=tmp_path / "model"))} == {1, 2}


def test_a_kernels_option_deck_is_offered_only_the_levels_it_measured(tmp_path):
    """s47 tester N2: ``stencil+sweeps.1500``, measured at fp64, 2 ranks per node, 1 thread,
    was offered every level stencil declares and picked at fp32 x 1 rank on the default deck's
    68 ms; the job ran 1.39 s and failed fp32's tolerance. README: such a workload "is offered
    the levels it measured"; the plain kernel in the same bundle keeps its declared knobs."""
    from hpcds1mpi.kernels import support

    rows = make_runs()
    rows = rows[(rows["workload"] == "stencil") & (rows["precision"] == "fp64")
                & (rows["ranks_per_node"] == 2) & (rows["threads"] == 1)].copy()
    rows["workload"], rows["run_id"] = "stencil+sweeps.1500", "deck-" + rows["run_id"]
    rows["runtime_s"] *= 150  # 1,500 sweeps, not 10
    bundle = train_bundle(pd.concat([make_runs(), rows], ignore_index=True), seed=1,
                          n_members=2, use_embedding=False, threads=1)
    bundle.save(tmp_path / "model")
    bundle = load_bundle(tmp_path / "model")
    gpu = Partition("cpu", cores_per_node=8, memory_gb=16.0, max_nodes=2, gpus_per_node=2)
    offer = offer_mod.offer_for(bundle, "stencil+sweeps.1500", [gpu])
    assert offer.precisions == ["fp64"] and offer.devices == ["cpu"]
    assert offer.threads == [1] and offer.max_ranks_per_node == 2
    assert "fp32: never measured for this workload" in offer.left_out
    assert "gpu: never measured for this workload" in offer.left_out
    assert not any("bf16" in t for t in offer.left_out)  # stencil declares no bf16
    with pytest.raises(ConfigError, match="never measured on gpu"):
        offer_mod.offer_for(bundle, "stencil+sweeps.1500", [gpu], device="gpu")
    rec = rec_mod.recommend(bundle, "stencil+sweeps.1500", 64, [(None, PART)],
                            model_dir=tmp_path / "model")
    assert rec.picked is not None, format_table(rec)
    rows = _rows(rec)
    assert {r["precision"] for r in rows} == {"fp64"} and {r["threads"] for r in rows} == {1}
    assert max(r["ranks_per_node"] for r in rows) == 2
    assert "fp32: never measured for this workload" in format_table(rec)
    plain = offer_mod.offer_for(bundle, "stencil", [gpu])
    assert plain.precisions == support("stencil")[1] and plain.left_out == []
    assert plain.threads is None and plain.max_ranks_per_node is None
