"""The plan of a program sweep: its label may not be a kernel's name (tester S, s27 #1: a
program labelled 'stencil' was stored, learnt and answered as the stencil kernel)."""

from __future__ import annotations

import pytest

from hpcds1mpi import kernels
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.measure.external_plan import build_external_plan


@pytest.mark.parametrize("label", kernels.BUILTIN_MODULES)
def test_a_kernels_name_as_label_is_refused(label):
    with pytest.raises(ConfigError, match=rf"--label '{label}' is the name of a kernel "
                                          r"\(`hpcds1mpi kernels` lists them\).*choose another"):
        build_external_plan("./app {size}", label, sizes="64")


@pytest.mark.parametrize("label", ["stencil+sweeps.100", "gemm+x.1", "stencil+"])
def test_a_kernels_option_deck_as_label_is_refused(label):
    """s41 tester D8: training read such a program's runs as the kernel's deck."""
    kernel = label.partition("+")[0]
    with pytest.raises(ConfigError, match=rf"--label '{label.replace('+', '[+]')}' is the label "
                                          rf"of kernel {kernel} run with options .*choose"):
        build_external_plan("./app {size}", label, sizes="64")


def test_another_label_builds_the_plan():
    plan = build_external_plan("./app {size}", "stencil-app", sizes="64,128")
    assert {r.workload for r in plan.runs} == {"stencil-app"} and len(plan.runs) == 2


def test_valid_only_leaving_out_every_configuration_says_why_with_counts():
    """s33 tester A10: "the ranges leave no configuration to run" said nothing of why."""
    from hpcds1mpi.cluster import Partition

    with pytest.raises(ConfigError, match=r"run: left out 2 for cores \(e\.g\. 4 ranks x 1 "
                                          r"thread = 4 cores per node, but partition 'p' has "
                                          r"2\); give ranges"):
        build_external_plan("prog {size}", "prog", sizes="1", ranks_per_node="4,8",
                            partition=Partition("p", 2, 4.0), valid_only=True)


def test_a_min_time_given_alone_is_measured_not_cut_at_ten_launches():
    """--min-time 30 without --max-repeats had stopped a 1-s program at 10 launches (s38
    tester B6); a --max-repeats given still caps it."""
    from hpcds1mpi.schemas.sweep_defaults import PROGRAM, UNCAPPED

    plan = build_external_plan("./app {size}", "app", sizes="1", min_time=30.0)
    assert plan.max_repeats == UNCAPPED and plan.min_time == 30.0
    assert "min_time 30 s given without --max-repeats" in plan.cap_note
    capped = build_external_plan("./app {size}", "app", sizes="1", min_time=30.0, max_repeats=4)
    assert capped.max_repeats == 4 and not capped.cap_note
    default = build_external_plan("./app {size}", "app", sizes="1")
    assert (default.min_time, default.min_repeats, default.max_repeats, default.warmup,
            default.timeout) == tuple(PROGRAM) and not default.cap_note
