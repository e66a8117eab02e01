"""The commands' number types: good values through, bad ones one line (exit 2) with the range."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcds1mpi.schemas import numbers
from hpcds1mpi.schemas.limits import MAX_SIZE


@click.command()
@click.option("--size", type=numbers.SIZE)
@click.option("--count", type=numbers.COUNT0)
@click.option("--timeout", type=numbers.SECONDS)
@click.option("--rate", type=numbers.FRACTION)
def _cmd(size, count, timeout, rate):
    click.echo(repr((size, count, timeout, rate)))


def _run(*args):
    return CliRunner().invoke(_cmd, list(args))


@pytest.mark.parametrize("args, value", [
    (["--size", "64"], (64, None, None, None)),
    (["--size", " +1099511627776 "], (MAX_SIZE, None, None, None)),
    (["--count", "0"], (None, 0, None, None)),
    (["--timeout", "0.5"], (None, None, 0.5, None)),
    (["--timeout", "1e3"], (None, None, 1000.0, None)),
    (["--rate", "1"], (None, None, None, 1.0)),
])
def test_good_values(args, value):
    result = _run(*args)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == repr(value)


@pytest.mark.parametrize("args, fragment", [
    (["--size", "99999999999999999999"], "out of range; give a problem size in 1..1099511627776"),
    (["--size", "9" * 10_000], "out of range"),
    (["--size", "-5"], "out of range"),
    (["--size", "0"], "out of range"),
    (["--size", "4.0"], "is not a whole number"),
    (["--size", "1e3"], "is not a whole number"),
    (["--size", "nan"], "is not a whole number"),
    (["--size", "١٢"], "is not a whole number"),  # int() would take Arabic-Indic digits
    (["--size", "1_0"], "is not a whole number"),
    (["--size", "; rm -rf /"], "is not a whole number"),
    (["--count", "-1"], "count of at least 0 in 0..1000000"),
    (["--timeout", "0"], "give a time in seconds > 0 and <= 3.1536e+07"),
    (["--timeout", "nan"], "is not a number"),
    (["--timeout", "inf"], "is not a number"),
    (["--timeout", "1e400"], "out of range"),
    (["--timeout", "-1"], "out of range"),
    (["--timeout", "0x10"], "is not a number"),
    (["--rate", "0"], "out of range; give a fraction > 0 and <= 1"),
    (["--rate", "1.5"], "out of range"),
])
def test_bad_values_are_usage_errors_naming_the_option_and_range(args, fragment):
    result = _run(*args)
    assert result.exit_code == 2
    assert fragment in result.output and f"'{args[0]}'" in result.output
    assert "9" * 100 not in result.output  # a huge value is not echoed back


def test_python_values_and_booleans():
    assert numbers.SIZE.convert(8, None, None) == 8
    assert numbers.SECONDS.convert(2, None, None) == 2.0
    for kind in (numbers.SIZE, numbers.SECONDS):
        with pytest.raises(click.BadParameter):
            kind.convert(True, None, None)
    assert numbers.BoundedInt(1, 4, "node count").convert("4", None, None) == 4
    with pytest.raises(click.BadParameter, match="node count in 1..4"):
        numbers.BoundedInt(1, 4, "node count").convert("5", None, None)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.text(max_size=30))
def test_any_text_is_a_number_in_range_or_a_usage_error(text):
    for kind in (numbers.SIZE, numbers.COUNT, numbers.SECONDS, numbers.FRACTION):
        try:
            value = kind.convert(text, None, None)
        except click.BadParameter as exc:
            assert "\n" not in exc.format_message()
            continue
        assert kind.low <= value <= kind.high


def test_floats_are_finite_even_without_an_upper_bound():
    import math

    unbounded = numbers.BoundedFloat(0.0, math.inf, "deadline in seconds", low_open=True)
    assert unbounded.convert("1e300", None, None) == 1e300
    for value in ("1e400", float("inf"), float("nan")):
        with pytest.raises(click.BadParameter, match="out of range"):
            unbounded.convert(value, None, None)


def test_a_decimal_problem_size_says_how_to_give_it():
    """s29 V1-5: `tune --size 0.25` (GPAW's grid spacing) got a bare "not a whole number"."""
    import click

    from hpcds1mpi.schemas.numbers import SIZE, BoundedInt

    with pytest.raises(click.BadParameter, match=r"is not a whole number; give a problem size "
                                                 r"in 1\.\.\d+; sizes are whole numbers: scale"):
        SIZE.convert("0.25", None, None)
    with pytest.raises(click.BadParameter) as caught:
        BoundedInt(1, 64, "node count").convert("1.5", None, None)
    assert "scale" not in str(caught.value)  # a count is no parameter to scale
