"""advise's verdict about the layout it shows: the guard's reasons about System 1's overall
pick reworded for the recommended layout when that keeps the script's device and precision
(gain or loss against the asked layout: ``test_advise.py``)."""

from __future__ import annotations

import pytest

from hpcds1mpi.config import Configuration
from hpcds1mpi.decide.advise_answer import Advice, Side
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


class _Runs:
    """A stand-in bundle whose training rows are PhyML's sweep: 1 rank failed at every size,
    2 ranks ran (s39 tester A4)."""

    def __init__(self, one_rank_statuses):
        import numpy as np

        sizes = [4, 6, 8, 16, 24]
        self.cols = {"workload": np.array(["phyml"] * 10), "size": np.array(sizes * 2),
                     "nodes": np.ones(10, int), "threads": np.ones(10, int),
                     "ranks_per_node": np.array([1] * 5 + [2] * 5),
                     "device": np.array(["cpu"] * 10), "precision": np.array(["fp64"] * 10),
                     "partition": np.array(["local"] * 10),
                     "status": np.array(list(one_rank_statuses) + ["ok"] * 5)}

    def training_columns(self):
        return self.cols


def _failing(fail_prob=0.97):
    """The tester's advice: the asked 1 rank predicted to fail, its 'runtime' the 1.64 s its
    runs took to abort; the 2 ranks recommended, 2.67 s."""
    asked = Side(Configuration(1, 1, 1, "cpu", "fp64"), "local/local", 300, runtime_s=1.64,
                 runtime_lo=1.5, runtime_hi=1.68, energy_j=18.9, fail_prob=fail_prob,
                 problem="predicted to fail")
    shown = Side(Configuration(1, 2, 1, "cpu", "fp64"), "local/local", 60, runtime_s=2.67,
                 runtime_lo=1.5, runtime_hi=4.02, energy_j=28.7, fail_prob=0.01)
    return Advice("my-phyml.sbatch", "slurm", "phyml", "", 12, "", asked, shown,
                  {"verdict": "confirm", "reasons": ["System 1 confidence 0.64 is below 0.7"]})


def test_a_script_whose_layout_fails_is_never_kept_for_its_time_to_fail():
    """s39 tester A4: advise compared the 1.64 s PhyML's 1-rank runs took to abort with the
    2 ranks' 2.67 s, "63 % longer runtime ... keep the script"."""
    from hpcds1mpi.commands.advise import format_advice
    from hpcds1mpi.decide.advise_gain import judge_gain, predicted_worse

    got = _failing()
    assert predicted_worse(got.asked, got.recommended, "time") == ""
    judge_gain(got, _Runs(["failed"] * 5))
    first = got.verdict["reasons"][0]
    assert first.startswith("the asked layout is predicted to fail (its runs failed at every "
                            "one of the 5 sizes measured, 4-24), so it has no runtime to "
                            "compare with, only the time its runs took to fail")
    assert "predicted runtime" not in first  # s43 tester L2: none is shown
    assert "do not keep the script" in first
    assert not any("keep the script;" in r or "worse" in r for r in got.verdict["reasons"])
    assert got.runtime_change_pct is None and got.energy_saving_pct is None
    got.asked.failed_after_s = 1.64  # its own failed runs' time (s43 tester L2)
    text = format_advice(got)
    assert "longer runtime" not in text and "its runs failed after 1.64 s (measured: the launch's wall time" in text
    assert "=> the asked layout is predicted to fail, the recommended one to run" in text
    assert "predicted to fail" in got.summary() and "1.64 s" not in got.summary()


def test_a_layout_that_failed_at_some_sizes_or_none_says_so():
    from hpcds1mpi.decide.advise_gain import judge_gain

    some = _failing()
    judge_gain(some, _Runs(["failed", "failed", "ok", "ok", "oom"]))
    assert "(its runs failed at 3 of the 5 sizes measured (4, 6, 24))" in some.verdict["reasons"][0]
    never = _failing()
    judge_gain(never, _Runs(["unsupported"] * 5))
    assert "(failure probability 97 % (System 1's))" in never.verdict["reasons"][0]
    # A layout that runs is compared as before: predicted worse is no gain.
    runs = _failing()
    runs.asked.problem = ""
    judge_gain(runs, _Runs(["ok"] * 5))
    assert runs.verdict["reasons"][0].startswith("the recommended layout is predicted worse")


def test_the_failure_evidence_is_the_runs_system_1_already_read(monkeypatch):
    """The asked layout's runs come from ``measured_here.workload_runs``, kept per bundle when
    System 1 scored the question, not from the training rows filtered again."""
    from hpcds1mpi.decide import bundle_cache
    from hpcds1mpi.decide.advise_gain import judge_gain
    from hpcds1mpi.decide.measured_here import workload_runs

    bundle = _Runs(["failed"] * 5)
    assert workload_runs(bundle, "phyml")  # as System 1's scoring keeps them
    monkeypatch.setattr(bundle_cache, "training_columns",
                        lambda b: pytest.fail("the training rows were read again"))
    got = _failing()
    judge_gain(got, bundle)
    assert "its runs failed at every one of the 5 sizes measured, 4-24" in \
        got.verdict["reasons"][0]


def test_only_a_failing_asked_layout_against_a_running_recommendation_is_a_fix():
    """The one guard of fixes_failure and of advise's '=>' line (s39 tester A4)."""
    import dataclasses

    from hpcds1mpi.commands.advise import format_advice
    from hpcds1mpi.decide.advise_gain import fixes_failure, only_asked_fails

    fixed = _failing()
    both = dataclasses.replace(_failing(), recommended=dataclasses.replace(
        _failing().recommended, problem="predicted to fail"))
    running = dataclasses.replace(_failing(), asked=dataclasses.replace(
        _failing().asked, problem=""))
    nothing = dataclasses.replace(_failing(), recommended=None)
    for advice, fix in ((fixed, True), (both, False), (running, False), (nothing, False)):
        assert only_asked_fails(advice) is fix
        said = "the asked layout is predicted to fail, the recommended one to run"
        assert (said in format_advice(advice)) is fix
        assert fixes_failure(advice, _Runs(["failed"] * 5)) is fix


def _sides(recommended_config, runtime=(0.138, 0.138), energy=(2.11, 2.11)):
    from hpcds1mpi.decide.advise_answer import Side

    asked = Side(Configuration(2, 2, 1), "debug", runtime_s=runtime[0], energy_j=energy[0],
                 lines=[4, 5])
    shown = Side(recommended_config, "debug", runtime_s=runtime[1], energy_j=energy[1])
    return Advice("job", "slurm", "myapp2", "", 1800, "", asked, shown,
                  {"verdict": "confirm", "reasons": []})


def test_a_script_asking_the_recommended_layout_says_so_not_0_percent_less():
    """The asked layout recommended back read "=> 0 % less energy, 0 % shorter runtime
    (predicted)", as if a gain rounded away (s40 tester D8)."""
    from hpcds1mpi.commands.advise import format_advice

    a = _sides(Configuration(2, 2, 1))
    text = format_advice(a)
    assert "  => the script already asks the recommended layout; verdict confirm\n" in text
    assert "0 %" not in text and "0 %" not in a.summary()
    assert a.summary().endswith("predicted 138 ms, the layout the script already asks")
    assert (a.energy_saving_pct, a.runtime_change_pct) == (0.0, 0.0)  # --json keeps them


@pytest.mark.parametrize("runtime, energy, said", [
    ((0.100, 0.0996), (1.0, 1.004), "0.4 % more energy, 0.4 % shorter runtime"),
    ((0.100, 0.1), (1.0, 0.99999), "< 0.1 % less energy, the same runtime"),
    ((0.100, 0.150), (2.0, 1.0), "50 % less energy, 50 % longer runtime"),
])
def test_a_small_difference_is_given_with_a_decimal_not_as_0_percent(runtime, energy, said):
    """A 0.4 % loss in energy read "0 % more energy" (s40 tester D8)."""
    from hpcds1mpi.commands.advise import format_advice

    a = _sides(Configuration(1, 2, 1), runtime, energy)
    assert f"  => {said} (predicted); verdict confirm" in format_advice(a)
