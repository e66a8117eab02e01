"""Durations, energies and memory sizes as the answers print them (s40 tester D4)."""

from __future__ import annotations

import pytest

from hpcds1mpi.decide.quantity_text import format_energy, format_memory, format_time


@pytest.mark.parametrize("seconds, said", [(0.0123, "12.3 ms"), (0.9996, "1 s"), (119.96, "2 min"),
                                           (7199.0, "2 h"), (3.6e6, "1000 h"),
                                           (float("nan"), "?")])
def test_a_duration_is_written_in_the_unit_of_its_rounded_value(seconds, said):
    assert format_time(seconds) == said


@pytest.mark.parametrize("joules, said", [(3.71, "3.71 J"), (999.6, "1 kJ"), (999_999.5, "1 MJ"),
                                          (float("inf"), "?")])
def test_an_energy_is_written_in_the_unit_of_its_rounded_value(joules, said):
    assert format_energy(joules) == said


def test_a_memory_size_is_written_in_gb():
    assert format_memory(2048.0) == "2.0 GB" and format_memory(4e30) == "4e+27 GB"
