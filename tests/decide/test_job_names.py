"""The default job name is valid for any workload label (s39 tester D1: `sweep --label é日本`
was accepted, then every `recommend --emit` of it refused its default job name
'hpcds1mpi-é日本' without naming --job-name)."""

from __future__ import annotations

import pytest

from hpcds1mpi.decide.job_names import default_job_name, default_job_name_note
from hpcds1mpi.launch.directives import check_job_name


@pytest.mark.parametrize("label, name", [("stencil", "hpcds1mpi-stencil"),
                                         ("é日本", "hpcds1mpi-e__"),
                                         ("Straße", "hpcds1mpi-Stra_e"),
                                         ("ﬁle", "hpcds1mpi-file"),
                                         ("x" * 300, "hpcds1mpi-" + "x" * 118)])
def test_the_default_name_is_one_a_batch_script_takes(label, name):
    assert default_job_name(label) == name
    assert check_job_name(default_job_name(label)) == name


def test_a_name_spelled_otherwise_is_said_with_the_option_to_choose():
    assert default_job_name_note("stencil") == ""
    assert default_job_name_note("é日本") == (
        "the job is named 'hpcds1mpi-e__': the label 'é日本' has characters a batch script's "
        "job name cannot hold (give --job-name to choose another)")
