"""Bounded click types for the commands' numbers: sizes and counts positive and bounded, times
finite and positive. A bad value is a click usage error (one line, exit 2) naming the option,
the value and the valid range.

``hpcds1mpi/schemas/numbers.py`` (the validation layer) may supersede these; until then the
commands use them from here.
"""

from __future__ import annotations

import math

import click

#: Largest problem size accepted anywhere (2**40): far beyond any partition's memory, still exact
#: in an int64 and a float64, so nothing downstream overflows.
MAX_SIZE = 2**40
#: Largest count (nodes, ranks, threads, repeats, budgets) accepted.
MAX_COUNT = 1_000_000
#: Largest time in seconds accepted (a year).
MAX_SECONDS = 365 * 24 * 3600.0


class BoundedInt(click.ParamType):
    """An integer in ``[low, high]``; huge, negative and non-integer values are refused."""

    name = "integer"

    def __init__(self, low: int, high: int, what: str):
        self.low, self.high, self.what = low, high, what

    def convert(self, value, param, ctx):
        if isinstance(value, bool):
            self.fail(f"{value!r} is not a {self.what}", param, ctx)
        if isinstance(value, int):
            number = value
        else:
            text = str(value).strip()
            try:
                number = int(text, 10)
            except ValueError:
                self.fail(f"{text[:40]!r} is not a whole number; give a {self.what} in "
                          f"{self.low}..{self.high}", param, ctx)
        if not self.low <= number <= self.high:
            shown = str(number) if len(str(number)) <= 24 else f"{str(number)[:20]}..."
            self.fail(f"{shown} is out of range; give a {self.what} in {self.low}..{self.high}",
                      param, ctx)
        return number

    def __repr__(self) -> str:
        return f"BoundedInt({self.low}, {self.high})"


class PositiveSeconds(click.ParamType):
    """A finite time in seconds, > 0 (or >= 0 with ``zero_ok``), at most a year."""

    name = "seconds"

    def __init__(self, zero_ok: bool = False, high: float = MAX_SECONDS):
        self.zero_ok, self.high = zero_ok, high

    def convert(self, value, param, ctx):
        text = str(value).strip()
        try:
            number = float(text)
        except ValueError:
            self.fail(f"{text[:40]!r} is not a number of seconds", param, ctx)
        low_ok = number >= 0 if self.zero_ok else number > 0
        if not math.isfinite(number) or not low_ok or number > self.high:
            bound = ">= 0" if self.zero_ok else "> 0"
            self.fail(f"{text[:40]} is not a time in seconds {bound} and at most {self.high:g}",
                      param, ctx)
        return number


class BoundedFloat(click.ParamType):
    """A finite number in ``(low, high]`` (``[low, high]`` with ``low_open=False``)."""

    name = "number"

    def __init__(self, low: float, high: float, low_open: bool = True):
        self.low, self.high, self.low_open = low, high, low_open

    def convert(self, value, param, ctx):
        text = str(value).strip()
        try:
            number = float(text)
        except ValueError:
            self.fail(f"{text[:40]!r} is not a number", param, ctx)
        above = number > self.low if self.low_open else number >= self.low
        if not math.isfinite(number) or not above or number > self.high:
            interval = f"{'(' if self.low_open else '['}{self.low:g}, {self.high:g}]"
            self.fail(f"{text[:40]} is not a number in {interval}", param, ctx)
        return number


#: A problem size: 1..2**40.
SIZE = BoundedInt(1, MAX_SIZE, "positive problem size")
#: A count that must be at least one (threads, repeats, nodes).
COUNT = BoundedInt(1, MAX_COUNT, "count of at least 1")
#: A count that may be zero (rows to list).
COUNT0 = BoundedInt(0, MAX_COUNT, "count of at least 0")
#: A seed: a non-negative 32-bit integer (numpy's seeding range).
SEED = BoundedInt(0, 2**32 - 1, "seed")
#: A time in seconds, > 0.
SECONDS = PositiveSeconds()
#: A rate or fraction in (0, 1] (sampling rates).
RATE = BoundedFloat(0.0, 1.0)
#: A fraction in [0, 1] (noise floors).
FRACTION = BoundedFloat(0.0, 1.0, low_open=False)
