"""Durations, energies and memory sizes as the answers print them (s40 tester D4)."""

from __future__ import annotations

import pytest

from hpcds1mpi.decide.quantity_text import format_energy, format_memory, format_ratio, format_time


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


@pytest.mark.parametrize("ratio, said", [
    (1.5, "1.5x"), (1.94, "1.9x"), (1.96, "1.96x"), (2.0, "2.0x"), (2.04, "2.04x"),
    (2.06, "2.1x"), (1.999, "just under 2x"), (2.001, "just over 2x"), (4.0, "4.0x")])
def test_a_ratio_that_one_decimal_rounds_onto_the_edge_says_its_side(ratio, said):
    """"2.0x" had read alike for 1.96 and 2.04, on either side of the guard's 2x edge."""
    assert format_ratio(ratio, 2.0) == said
