"""A calibration job's time limit follows the model's upper runtimes, or is the stated
default where the guard allows no prediction, and the script says how it was set (s31 tester
Q9)."""

from __future__ import annotations


def _calibration_script(tmp_path, capsys, *argv) -> str:
    from pathlib import Path

    from tests.badinput.harness import invoke

    lab = Path(__file__).parents[1] / "data" / "jobscripts" / "lab.toml"
    out = tmp_path / "cal.sbatch"
    res = invoke(capsys, ["recommend", *argv, "--cluster", str(lab), "--emit", "slurm",
                          "--output", str(out)])
    assert res.code == 0, res.err
    return out.read_text()


def test_a_calibration_time_limit_follows_the_predicted_runtimes_and_says_how(tmp_path,
                                                                               capsys):
    """s31 tester Q9: every calibration script got --time=01:00:00 whatever the size (a 35 s
    sweep and one 100x its work alike) and said nothing of why. The shipped bundle's gemm,
    escalated beyond its sizes, still has the model's upper runtime per step; escalated, it
    gets at least the default (s31 reviewer: 10 min at size 8, whose model is distrusted)."""
    import re

    from hpcds1mpi.decide.calibration_time import CALIBRATION_DEFAULT_S

    small = _calibration_script(tmp_path, capsys, "--workload", "gemm", "--size", "8")
    big = _calibration_script(tmp_path, capsys, "--workload", "gemm", "--size", "20000")
    limits = []
    for text in (small, big):
        h, m, s = map(int, re.search(r"#SBATCH --time=(\d+):(\d\d):(\d\d)", text).groups())
        limits.append(h * 3600 + m * 60 + s)
        note = next(line for line in text.splitlines() if "# note: time limit" in line)
        assert "the model's upper runtime per run" in note and "start-up" in note, note
    assert limits[0] == CALIBRATION_DEFAULT_S < limits[1], limits
    assert "the larger of the default 60 min (the guard escalated on the size range and the " \
        "learned check" in small and "the model's 10 min" in small, small


def test_a_calibration_of_a_workload_never_measured_says_its_limit_is_the_default(tmp_path,
                                                                                   capsys):
    from hpcds1mpi.decide.calibration_time import CALIBRATION_DEFAULT_S

    text = _calibration_script(tmp_path, capsys, "--workload", "mysolver", "--size", "100",
                               "--program", "./mysolver")
    assert f"#SBATCH --time={CALIBRATION_DEFAULT_S // 3600:02d}:00:00" in text
    assert "time limit 60 min, the default: the model never measured this workload" in text


def test_a_calibration_limit_beyond_the_measured_sizes_is_modelled_and_says_so():
    """s31 tester V7: beyond the sizes the growth rule's upper runtime sizes the limit, said as
    modelled there; on hardware never measured the default says that, not 'nothing measured'."""
    from hpcds1mpi.config import Configuration
    from hpcds1mpi.decide.calibration_time import CALIBRATION_DEFAULT_S, PredictedStep, \
        calibration_time_limit

    steps = [PredictedStep(Configuration(1, 1, 1), "widest", 400.0)] * 2
    limit, how = calibration_time_limit(steps, {"size_range": "escalate", "name": "pass"})
    assert limit > 2 * 2 * 400 and "outside the measured sizes" in how, how
    limit, how = calibration_time_limit(steps, {"size_range": "pass"})
    assert "beyond" not in how, how
    limit, how = calibration_time_limit(steps, {"hardware": "escalate"})
    assert limit == CALIBRATION_DEFAULT_S and "unlike the hardware the model measured" in how


def test_a_distrusted_model_sizes_a_calibration_no_shorter_than_the_default():
    """s31 reviewer: escalated on the learned or size-range check (the model distrusted), a
    job far beyond the measured sizes got the model's upper runtime x 6 runs, 10 min at
    least, however far below its real runtime; now at least the default. Where the guard
    allowed the prediction, the model's limit alone, 10 min at least."""
    from hpcds1mpi.config import Configuration
    from hpcds1mpi.decide.calibration_time import CALIBRATION_DEFAULT_S, CALIBRATION_FLOOR_S, \
        PredictedStep, calibration_time_limit

    quick = [PredictedStep(Configuration(1, 1, 1), "widest", 1.0)] * 2
    for checks in ({"learned": "escalate", "size_range": "pass"},
                   {"size_range": "escalate", "learned": "confirm"}):
        limit, how = calibration_time_limit(quick, {"name": "pass", **checks})
        assert limit == CALIBRATION_DEFAULT_S and "the larger of the default 60 min" in how \
            and "the model's 10 min" in how, how
    limit, how = calibration_time_limit(quick, {"name": "pass", "learned": "pass"})
    assert limit == CALIBRATION_FLOOR_S and "default" not in how, how
    slow = [PredictedStep(Configuration(1, 1, 1), "widest", 900.0)] * 2
    limit, how = calibration_time_limit(slow, {"learned": "escalate"})
    assert limit > CALIBRATION_DEFAULT_S and f"time limit {limit // 60} min" in how, how


def test_a_limit_outside_the_measured_sizes_says_each_sides_rule():
    """s31 reviewer: "grown along the steepest measured slope" was said below the sizes too,
    and of configurations never measured, whose upper runtime is the model's alone."""
    from hpcds1mpi.config import Configuration
    from hpcds1mpi.decide.calibration_time import PredictedStep, calibration_time_limit

    steps = [PredictedStep(Configuration(1, 1, 1), "widest", 1.0)]
    _, how = calibration_time_limit(steps, {"size_range": "confirm"})
    assert "grown along the steepest measured slope above them, shrunk along the least " \
        "below, and one never measured the model's alone" in how, how


def test_steps_beyond_the_least_go_while_the_job_would_outlast_its_budget():
    """s34 tester S5: a node's shape takes more than the 4 steps a model needs (each precision,
    the every-core-a-rank anchor, one GPU and every GPU); those beyond 4 stay only while the
    job fits the default hour, the least needed first, and the script says which went."""
    from hpcds1mpi.config import Configuration
    from hpcds1mpi.decide.calibration_time import PredictedStep, calibration_time_limit, \
        within_budget

    def steps(hi):
        return [PredictedStep(Configuration(1, r, 1), "why", hi) for r in (1, 2, 3, 4, 5, 6)]

    ranks = [0, 1, 0, 1, 0, 0]
    # a kernel's run of 180 s or 250 s: 1 warm-up + 1 repeat (0.2 s measured)
    kept = within_budget(steps(180.0), ranks, 4)  # 6 x (2 x 180 s + 30 s) x 1.5 < 1 h
    assert len(kept) == 6 and kept.left_out == ""
    kept = within_budget(steps(250.0), ranks, 4)  # 6 x 530 s x 1.5 > 1 h; 4 x 530 s: kept
    assert [s.config.ranks_per_node for s in kept] == [1, 3, 5, 6]
    assert kept.left_out == ("left out for time (all 6 need ~80 min by the model's upper "
                             "runtimes; the budget is 60 min): N1xR2xT1-cpu-fp64, "
                             "N1xR4xT1-cpu-fp64; sweep them in a job of their own")
    limit, how = calibration_time_limit(kept, {"hardware": "escalate"})
    assert how.endswith("; " + kept.left_out), how
    assert len(within_budget(steps(1e6), ranks, 4)) == 4  # the least, whatever they take
    unknown = within_budget(steps(float("nan")), ranks, 4)
    assert len(unknown) == 4 and "(a step has no predicted runtime;" in unknown.left_out


def test_a_step_predicted_to_run_long_gets_a_sweep_timeout_within_the_jobs_time():
    """s40 tester B1: a calibration at a size whose runs take hours budgeted the job for them
    (--time of days) while each step's sweep kept its default --timeout of 600 s, so every
    step was killed and recorded a timeout. A step's sweep now gets its share of the job's
    time as --timeout where that is longer than the default; a quick step keeps the default,
    for a kernel and for a program (whose steps are rebuilt at fp64 with their runtime kept)."""
    import re

    from hpcds1mpi.config import Configuration
    from hpcds1mpi.decide.calibration_time import PredictedStep, calibration_time_limit
    from hpcds1mpi.launch.calibration_script import render_calibration
    from tests.launch.test_scripts import CPU

    slow = [PredictedStep(Configuration(1, 1, 1), "widest", 5000.0),
            PredictedStep(Configuration(1, 2, 1, precision="fp32"), "ranks", 2000.0)]
    quick = [PredictedStep(Configuration(1, 1, 1), "widest", 1.0)]
    for program in (None, "./app {size}"):
        limit, _ = calibration_time_limit(slow, {})
        text = render_calibration(slow, CPU, "stencil" if program is None else "app", 64,
                                  program=program, time_limit=limit)
        timeouts = [float(t) for t in re.findall(r"--timeout (\d+)", text)]
        # each step's time holds its runs at the upper runtime (5000 s, 2000 s), not 600 s
        assert len(timeouts) == 2 and sorted(timeouts)[0] > 2 * 2000.0 and \
            sorted(timeouts)[1] > 2 * 5000.0, text
        assert sum(timeouts) <= limit, (timeouts, limit)
        text = render_calibration(quick, CPU, "stencil" if program is None else "app", 64,
                                  program=program, time_limit=600)
        assert "--timeout" not in text, text


def test_a_step_counts_the_runs_its_own_sweep_makes():
    """s40 tester D9: every step was counted as a kernel sweep's most (1 warm-up + 5
    repeats: "6 runs"), where a program's sweep (``--command``) launches it 3 to 10 times,
    until 1 s is measured: a 0.636 s program 3 times, a 0.05 s one 10 times; a kernel's
    repeats stop at 0.2 s measured too (a 60 s run: 1 warm-up + 1 repeat)."""
    import numpy as np

    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.decide.calibration_sweep import calibration_steps
    from hpcds1mpi.decide.calibration_time import calibration_time_limit
    from hpcds1mpi.decide.scores import Scores

    # A program of 10 min per launch, its steps as recommend picks them: 3 launches each.
    rows = [(1, 1, 1), (1, 1, 2), (1, 2, 1), (2, 1, 1)]
    n = len(rows)
    cols = {"partition": np.array(["debug"] * n), "device": np.array(["cpu"] * n),
            "nodes": np.array([r[0] for r in rows]),
            "ranks_per_node": np.array([r[1] for r in rows]),
            "threads": np.array([r[2] for r in rows]), "precision": np.array(["fp64"] * n),
            "runtime_s": np.full(n, 500.0), "runtime_lo": np.full(n, 400.0),
            "runtime_hi": np.full(n, 600.0), "reason": np.array([""] * n),
            "mem_need_mb": np.full(n, 100.0), "mem_limit_mb": np.full(n, 3000.0)}
    part = Partition(name="debug", cores_per_node=2, memory_gb=3.9, max_nodes=2)
    steps = calibration_steps(Scores(cols, "myapp", 16), part)
    limit, how = calibration_time_limit(steps, {"learned": "pass"})
    assert f"{len(steps)} steps x (3 runs" in how, how  # was "(6 runs x"
    assert limit == 60 * -(-(len(steps) * (3 * 600 + 30) * 1.5) // 60)

    from hpcds1mpi.config import Configuration
    from hpcds1mpi.decide.calibration_time import PredictedStep, measuring_for
    from hpcds1mpi.schemas.sweep_defaults import KERNEL, PROGRAM

    assert measuring_for("myapp") == PROGRAM and measuring_for("stencil") == KERNEL
    one = Configuration(1, 1, 1)
    slow = [PredictedStep(one, "widest", 0.636, PROGRAM)] * 2
    _, how = calibration_time_limit(slow, {"learned": "pass"})
    assert "2 steps x (3 runs (a program's sweep: 3 to 10 launches, until 1 s is measured) " \
        "x the model's upper runtime per run, up to 0.636 s, + 30 s start-up) = 64 s" in how, how
    quick = [PredictedStep(one, "widest", 0.05, PROGRAM), PredictedStep(one, "a", 0.4, PROGRAM)]
    _, how = calibration_time_limit(quick, {"learned": "pass"})
    assert "(3-10 runs (a program's sweep" in how and "= 62 s" in how, how  # 10 x 0.05 + 3 x 0.4
    kernel = [PredictedStep(one, "widest", 60.0), PredictedStep(one, "a", 0.01)]
    _, how = calibration_time_limit(kernel, {"learned": "pass"})
    assert "(2-6 runs (a kernel's sweep: 1 warm-up + 1 to 5 repeats, until 0.2 s is " \
        "measured)" in how, how
