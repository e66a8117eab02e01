"""The program rule: placeholders filled one way (unknown braces stay literal), one environment."""

from __future__ import annotations

import pytest

from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch import program


def test_placeholders_are_replaced_and_other_braces_stay_literal():
    values = program.placeholder_values(Configuration(2, 3, 4, "gpu", "bf16"), 42)
    tokens = program.program_tokens(
        "app --n {size} -t {threads} -r {ranks} {nodes}x{ranks_per_node} {device} {precision} "
        "awk '{print $1}' {nope} {}", values)
    assert tokens == ["app", "--n", "42", "-t", "4", "-r", "6", "2x3", "gpu", "bf16", "awk",
                      "{print $1}", "{nope}", "{}"]
    # Without a size (a recommended script for an unknown size) {size} stays as written.
    assert program.program_tokens(["a", "{size}"], program.placeholder_values(
        Configuration())) == ["a", "{size}"]


@pytest.mark.parametrize("bad", ["", "   ", "a 'open", "a\nb"])
def test_bad_programs_are_refused(bad):
    with pytest.raises(ConfigError):
        program.program_tokens(bad)


def test_environment_threads_blas_and_binding_only_where_ranks_are_bound():
    config = Configuration(1, 2, 3, "cpu", "fp32")
    unbound = program.environment(config, binds_cores=False)
    assert unbound == {"OMP_NUM_THREADS": "3", "OPENBLAS_NUM_THREADS": "3",
                       "MKL_NUM_THREADS": "3", "HPCDS1MPI_THREADS": "3",
                       "HPCDS1MPI_PRECISION": "fp32", "HPCDS1MPI_DEVICE": "cpu"}
    bound = program.environment(config, binds_cores=True, extra={"X": "1"})
    assert bound == {**unbound, "OMP_PLACES": "cores", "OMP_PROC_BIND": "close", "X": "1"}
    with pytest.raises(ConfigError):
        program.environment(config, binds_cores=True, extra={"A=B": "1"})
    with pytest.raises(ConfigError):
        program.environment(config, binds_cores=True, extra={"A": "1\n2"})
