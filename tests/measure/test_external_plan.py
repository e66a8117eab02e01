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
