"""One external run's measured columns."""

from __future__ import annotations

import math

import pytest

from hpcds1mpi.config import Configuration
from hpcds1mpi.measure.external_rows import cpu_for_power, row_values


def _m(**kw) -> dict:
    return {"status": "ok", "error": "", "exit_code": 0, "walls": [1.0, 3.0, 2.0],
            "times": [1.0, 3.0, 2.0], "foms": [5.0, float("nan"), 7.0], "cpu_s": 6.0,
            "rss_mb": 10.0, "rss_source": "ranks", **kw}


def test_an_ok_run_is_the_median_of_its_repeats_and_a_failed_one_its_last_launch():
    row = row_values(_m())
    assert row["runtime_s"] == 2.0 and row["measured_s"] == 6.0 and row["fom"] == 6.0
    failed = row_values(_m(status="failed", walls=[1.0, 4.0]))
    assert failed["runtime_s"] == 4.0 and failed["repeats"] == 2 and math.isnan(failed["noise"])


def test_a_launch_the_launcher_refused_has_no_runtime():
    # s35 tester I: srun's refusal was stored as runtime_s 0.013 beside runs of 0.029 s
    refused = row_values(_m(status="unsupported", walls=[0.013]))
    assert "runtime_s" not in refused and refused["elapsed_s"] == 0.013


def test_unmeasured_cpu_time_counts_every_rank_thread_busy():
    config = Configuration(1, 2, 2, "cpu", "fp64")
    assert cpu_for_power(_m(), config, 2.0) == (2.0, "")
    cpu, note = cpu_for_power(_m(cpu_s=float("nan")), config, 2.0)
    assert cpu == 8.0 and "counted busy" in note


def test_a_coarse_timers_repeats_store_their_tick_as_noise_not_zero():
    # s37 tester G1: NWChem's 0.1-s timer stored noise 0.0 at every configuration
    row = row_values(_m(times=[0.1, 0.1, 0.1], time_texts=["0.1", "0.1", "0.1"]))
    assert row["runtime_s"] == 0.1 and row["noise"] == pytest.approx(1.0)
    fine = row_values(_m(times=[1.000123, 1.000123], time_texts=["1.000123", "1.000123"]))
    assert fine["noise"] == pytest.approx(1e-6 / 1.000123)  # one tick: agreed to 1 us, not 0
    spread = row_values(_m(times=[1.000123, 1.000125], time_texts=["1.000123", "1.000125"]))
    assert spread["noise"] == pytest.approx(2e-6 / 1.000124)  # a fine timer's spread: measured


def test_repeats_that_print_one_value_of_a_fine_timer_store_one_tick_not_zero():
    # s45 tester B3: MrBayes's 0.23 s (0.01-s timer, 4 %: not coarse), three times, noise 0.0
    row = row_values(_m(times=[0.23] * 3, time_texts=["0.23"] * 3))
    assert row["noise"] == pytest.approx(0.01 / 0.23)
    one = row_values(_m(walls=[0.3], times=[0.23], time_texts=["0.23"]))
    assert math.isnan(one["noise"])  # one repeat: no spread known
    walls = row_values(_m(times=[0.5, 0.5]))  # the launch's wall time: nothing printed
    assert walls["noise"] == 0.0
