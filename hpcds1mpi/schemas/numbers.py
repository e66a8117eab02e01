"""The commands' numbers: click parameter types for sizes, counts, seeds, times and fractions.

A bad value is a click usage error (one line, exit 2) that names the option, shows the value
(cut to 40 characters: a 10,000-digit number is not echoed back) and gives the valid range.
Only ASCII digits are numbers here (``int()`` would take ``"١٢"`` and ``"1_0"``), a count is
never ``"4.0"`` or ``"1e3"``, and a float is finite (``nan``, ``inf`` and ``1e400`` refused).
No pydantic: these are parsed when a command's options are, on every path.

Usage::

    @click.option("--size", type=numbers.SIZE)
    @click.option("--timeout", type=numbers.SECONDS)
    @click.option("--nodes", type=numbers.BoundedInt(1, partition_max, "node count"))
"""

from __future__ import annotations

import math
import re

import click

from .limits import MAX_COUNT, MAX_JOULES, MAX_SECONDS, MAX_SEED, MAX_SIZE

__all__ = ["BoundedFloat", "BoundedInt", "COUNT", "COUNT0", "FRACTION", "PositiveSeconds",
           "SECONDS", "SECONDS0", "SEED", "SIZE"]

_INTEGER = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def _shown(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:37]}..."


def _article(noun: str) -> str:
    """``a`` or ``an`` before ``noun`` (by its first letter: "an answer count")."""
    return "an" if noun[:1].lower() in "aeiou" else "a"


def decimal_size_hint(text: str) -> str:
    """How to give a decimal parameter (a grid spacing h = 0.25 A, a resolution) as problem
    sizes, which are whole numbers: scaled, and divided back where the program reads it (s29
    tester B6: GPAW); "" unless ``text`` holds such numbers (``0.25``, ``0.3..1``)."""
    words = [w for w in text.replace("..", ",").split(",") if w.strip()]
    try:
        [float(w) for w in words]
    except ValueError:
        return ""
    if not words or not any("." in w for w in words):
        return ""
    return ("; sizes are whole numbers: scale a decimal parameter to one (--sizes 25,30 for "
            "0.25, 0.30) and divide it back where your program or its wrapper reads {size}")


class BoundedInt(click.ParamType):
    """A whole number in ``[low, high]``: huge, negative, fractional, non-ASCII refused.

    Args:
        low, high: the range, both included.
        what: what the number is, for the message (``"problem size"``).
    """

    name = "integer"

    def __init__(self, low: int, high: int, what: str):
        self.low, self.high, self.what = low, high, what
        self.a_what = f"{_article(what)} {what}"  # "an answer count"

    def convert(self, value, param, ctx):
        if isinstance(value, bool):
            self.fail(f"{value!r} is not a {self.what}; give a whole number in "
                      f"{self.low}..{self.high}", param, ctx)
        if isinstance(value, int):
            number = value
        else:
            text = str(value).strip()
            if not _INTEGER.fullmatch(text):
                hint = decimal_size_hint(text) if self.what == "problem size" else ""
                self.fail(f"{_shown(text)!r} is not a whole number; give {self.a_what} in "
                          f"{self.low}..{self.high}{hint}", param, ctx)
            if len(text.lstrip("+-")) > 30:  # far out of any range; int() of it may refuse
                self.fail(f"{_shown(text)} is out of range; give {self.a_what} in "
                          f"{self.low}..{self.high}", param, ctx)
            number = int(text)
        if not self.low <= number <= self.high:
            self.fail(f"{_shown(str(number))} is out of range; give {self.a_what} in "
                      f"{self.low}..{self.high}", param, ctx)
        return number

    def __repr__(self) -> str:
        return f"BoundedInt({self.low}, {self.high})"


class BoundedFloat(click.ParamType):
    """A finite number in ``[low, high]`` (``(low, high]`` with ``low_open``).

    Args:
        low, high: the range.
        what: what the number is, for the message (``"time in seconds"``).
        low_open: ``low`` itself is refused (``> 0`` rather than ``>= 0``).
    """

    name = "number"

    def __init__(self, low: float, high: float, what: str, low_open: bool = False):
        self.low, self.high, self.what, self.low_open = low, high, what, low_open
        self.a_what = f"{_article(what)} {what}"

    def _range(self) -> str:
        return f"{'>' if self.low_open else '>='} {self.low:g} and <= {self.high:g}"

    def convert(self, value, param, ctx):
        if isinstance(value, bool):
            self.fail(f"{value!r} is not a {self.what}", param, ctx)
        if isinstance(value, (int, float)):
            number = float(value)
        else:
            text = str(value).strip()
            if not _FLOAT.fullmatch(text):
                self.fail(f"{_shown(text)!r} is not a number; give {self.a_what} "
                          f"{self._range()}", param, ctx)
            number = float(text)
        low_ok = number > self.low if self.low_open else number >= self.low
        if not math.isfinite(number) or not low_ok or number > self.high:
            self.fail(f"{_shown(str(value).strip())} is out of range; give {self.a_what} "
                      f"{self._range()}", param, ctx)
        return number

    def __repr__(self) -> str:
        return f"BoundedFloat({self.low}, {self.high})"


class PositiveSeconds(BoundedFloat):
    """A finite time in seconds, > 0 (or >= 0 with ``zero_ok``), at most ``high`` (a year)."""

    name = "seconds"

    def __init__(self, zero_ok: bool = False, high: float = MAX_SECONDS):
        super().__init__(0.0, high, "time in seconds", low_open=not zero_ok)
        self.zero_ok = zero_ok


#: A problem size: 1..2**40.
SIZE = BoundedInt(1, MAX_SIZE, "problem size")
#: A count of at least one (nodes, ranks, threads, repeats, budgets): 1..10**6.
COUNT = BoundedInt(1, MAX_COUNT, "count of at least 1")
#: A count that may be zero (warm-up repeats, rows to list).
COUNT0 = BoundedInt(0, MAX_COUNT, "count of at least 0")
#: A seed: 0..2**63-1 (stored as an int64).
SEED = BoundedInt(0, MAX_SEED, "seed")
#: A time in seconds, > 0 and at most a year.
SECONDS = PositiveSeconds()
#: A time in seconds, >= 0 and at most a year (a minimum measuring time, a snapshot interval).
SECONDS0 = PositiveSeconds(zero_ok=True)
#: An energy in joules, > 0 (an energy budget).
JOULES = BoundedFloat(0.0, MAX_JOULES, "value in joules", low_open=True)
#: A fraction in (0, 1] (a sampling rate).
FRACTION = BoundedFloat(0.0, 1.0, "fraction", low_open=True)
