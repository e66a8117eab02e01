"""advise's verdict about the layout it shows: the guard's reasons about System 1's overall
pick reworded for the recommended layout when that keeps the script's device and precision
(gain or loss against the asked layout: ``test_advise.py``)."""

from __future__ import annotations

from hpcds1mpi.config import Configuration
from hpcds1mpi.decide.advise import Advice, Side
from hpcds1mpi.decide.advise_gain import reasons_for_shown

OVERALL = "8 nodes x 1 rank x 3 threads, gpu, bf16"


def advice(unmeasured, verdict="confirm", reasons=None):
    shown = Side(Configuration(8, 1, 2, "gpu", "fp32"), "hpcx/a100", unmeasured=unmeasured)
    reasons = reasons if reasons is not None else [
        "System 1 confidence 0.65 is below 0.7",
        "the pick is beyond what gemm was measured at, its predictions extrapolated: nodes 8 "
        "above the most measured (1); threads 3 never measured (measured: 1, 2); precision "
        "bf16 never measured (measured: fp32, fp64)"]
    return Advice("job", "slurm", "gemm", "", 1024, "", None, shown,
                  {"verdict": verdict, "reasons": reasons,
                   "checks": {"measured_levels": "confirm", "confidence": "confirm"}})


def test_the_reasons_speak_of_the_layout_shown_not_the_overall_pick():
    """The tester's a_gres: the reasons named threads 3 and bf16, the overall pick's, under a
    recommendation of 2 threads fp32 (both measured)."""
    a = advice(["nodes 8 above the most measured (1)"])
    reasons_for_shown(a, OVERALL)
    assert a.verdict["reasons"] == [
        f"System 1 confidence 0.65 is below 0.7, for its overall pick ({OVERALL}); the "
        "recommended layout keeps the script's device and precision and has no confidence of "
        "its own",
        "the recommended layout is beyond what gemm was measured at, its predictions "
        "extrapolated: nodes 8 above the most measured (1)"]
    assert a.verdict["verdict"] == "confirm"


def test_a_measured_layout_shown_keeps_the_verdict_with_a_reason():
    a = advice([], reasons=["the pick is beyond what gemm was measured at, its predictions "
                            "extrapolated: precision bf16 never measured (measured: fp32)"])
    reasons_for_shown(a, OVERALL)
    assert a.verdict["verdict"] == "confirm"  # never lowered: the layout has no confidence
    assert a.verdict["checks"]["measured_levels"] == "pass"
    assert a.verdict["reasons"] == [
        f"the recommended layout keeps the script's device and precision, not System 1's "
        f"overall pick ({OVERALL}), so it has no confidence of its own"]


def test_an_auto_verdict_is_held_at_confirm_when_the_shown_layout_extrapolates():
    a = advice(["threads 16 never measured (measured: 1, 2)"], verdict="auto", reasons=[])
    reasons_for_shown(a, OVERALL)
    assert a.verdict["verdict"] == "confirm"
    assert a.verdict["reasons"][0].endswith("threads 16 never measured (measured: 1, 2)")


def test_a_script_asking_thousands_of_nodes_from_one_measured_is_not_kept(tmp_path, monkeypatch):
    """s34 tester S1: advise kept a4096.sbatch's 4096 nodes (the shipped bundle ran on one);
    now it recommends a layout within reach and says not to keep the script."""
    from hpcds1mpi import cluster as cluster_mod
    from hpcds1mpi.decide.advise import advise
    from hpcds1mpi.decide.model_bundle import load_model

    monkeypatch.setenv("HPCDS1MPI_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HPCDS1MPI_HISTORY", str(tmp_path / "cache" / "failures.json"))
    toml = tmp_path / "lab4096.toml"
    toml.write_text('[clusters.lab]\naccount = "demo"\n[clusters.lab.partitions.standard]\n'
                    "cores_per_node = 2\nmemory_gb = 25.3\nmax_nodes = 4096\n")
    clusters = cluster_mod.load_clusters(toml)
    places = [(c, p) for c in clusters.values() for p in c.partitions.values()]
    text = ("#!/bin/bash\n#SBATCH --partition=standard\n#SBATCH --nodes=4096\n"
            "#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=2\n#SBATCH --time=00:30:00\n"
            "export OMP_NUM_THREADS=2\nsrun hpcds1mpi run --threads 2 stencil --size 128 "
            "--precision fp64\n")
    got = advise(text, load_model(None), places)
    assert got.verdict["verdict"] != "auto"
    assert got.recommended is None or got.recommended.config.nodes <= 2
    if got.recommended is not None:
        assert any("do not keep the script: its 4096 nodes" in r
                   for r in got.verdict["reasons"])
        assert not any("keep the script if you trust" in r for r in got.verdict["reasons"])


def test_a_predicted_recommendation_is_never_called_measured():
    """s35 tester R6: "the recommendation is only the best measured layout" was said of 2
    nodes, never measured. A recommended layout that is unmeasured (its whole interval below
    the measured ones') is said to be extrapolated too."""
    from hpcds1mpi.decide.advise_gain import not_a_gain

    asked = Side(Configuration(64, 1, 2, "cpu", "fp64"), "lab/standard", runtime_s=0.00268,
                 energy_j=1.0, unmeasured=["nodes 64 above the most measured (1)"])
    for unmeasured, says in ((["nodes 2 above the most measured (1)"], False), ([], True)):
        shown = Side(Configuration(2, 2, 1, "cpu", "fp64"), "lab/standard", runtime_s=0.0654,
                     energy_j=1.3, unmeasured=unmeasured)
        a = Advice("job", "slurm", "stencil", "", 256, "", asked, shown,
                   {"verdict": "confirm", "reasons": []})
        not_a_gain(a, "2339 % longer runtime")
        reason = a.verdict["reasons"][0]
        assert ("only the best measured layout" in reason) is says
        assert ("switch to the measured layout" in reason) is says
        if not says:
            assert "and so is the recommended one's (nodes 2 above the most measured (1))" \
                in reason
