"""CPU binding of a rank's threads to distinct cores, and its undoing."""

from __future__ import annotations

import os

from hpcds1mpi.runtime import binding


def test_bind_distinct_cpus_or_unbound_when_oversubscribed():
    cpus = binding.initial_cpus()
    try:
        if len(cpus) >= 2:
            assert binding.bind(1, 2, 1, cpus) == str(cpus[1])
            assert os.sched_getaffinity(0) == {cpus[1]}
        text = binding.bind(0, len(cpus) + 1, 1, cpus)
        assert text.startswith("unbound (oversubscribed")
        assert os.sched_getaffinity(0) == set(cpus)
    finally:
        binding.unbind(cpus)
    assert os.sched_getaffinity(0) == set(cpus)
