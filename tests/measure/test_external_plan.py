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
