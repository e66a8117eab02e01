"""Durations, energies and memory sizes as the answers print them: three significant digits
in the unit that fits the rounded value (0.9996 s is "1 s", not "1e+03 ms": s40 tester D4);
ratios with one decimal, more where one would hide which side of a rule's edge they are on."""

from __future__ import annotations

import math


def _three_digits(x: float) -> float:  # as printed: the unit fits it (0.9996 s is "1 s")
    return float(f"{x:.3g}")


def _digits(x: float) -> str:
    """Three significant digits, no exponent below a million (only the largest unit gets there)."""
    rounded = _three_digits(x)
    return f"{rounded:.0f}" if 1000 <= abs(rounded) < 1e6 else f"{x:.3g}"


def format_time(s: float) -> str:
    """A duration in s as ms, s, min or h, three significant digits (``?`` when unknown)."""
    if not math.isfinite(s):
        return "?"
    for unit, scale, below in (("ms", 1e-3, 1), ("s", 1, 120), ("min", 60, 7200)):
        if _three_digits(s) < below:
            return f"{_digits(s / scale)} {unit}"
    return f"{_digits(s / 3600)} h"


def format_energy(j: float) -> str:
    """An energy in J as J, kJ or MJ, three significant digits (``?`` when unknown)."""
    if not math.isfinite(j):
        return "?"
    for unit, scale in (("MJ", 1e6), ("kJ", 1e3)):
        if _three_digits(j) >= scale:
            return f"{_digits(j / scale)} {unit}"
    return f"{_digits(j)} J"


def format_memory(mb: float) -> str:
    """A memory size in MB as GB, one decimal (a size far out in three digits: 4e+27 GB)."""
    gb = mb / 1000.0
    return f"{gb:.1f} GB" if gb < 1e6 else f"{gb:.3g} GB"


def format_ratio(ratio: float, edge: float) -> str:
    """``ratio`` as "1.5x", one decimal, unless that rounds it onto ``edge`` (the value a rule
    decides at: the guard confirms up to 2x beyond the measured sizes and escalates past it):
    then two ("1.96x", "2.04x" had both read "2.0x"), or "just under" / "just over" the edge
    where two still round onto it. The edge itself is "2.0x"."""
    text = f"{ratio:.1f}"
    if ratio == edge or float(text) != edge:
        return f"{text}x"
    if float(f"{ratio:.2f}") != edge:
        return f"{ratio:.2f}x"
    return f"just {'under' if ratio < edge else 'over'} {edge:g}x"
