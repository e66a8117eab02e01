"""The range grammar refuses slips instead of reading them as something else (tester S,
s27 #8): an empty item, a LOW..HIGH whose doubling misses HIGH."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.measure.ranges import parse_ints, parse_words

WORDS = (("cpu", "gpu"), ("available",))


@pytest.mark.parametrize("text", ["64,,128", "64,", ",64", "1, ,2"])
def test_an_empty_item_in_a_list_of_numbers_is_refused(text):
    with pytest.raises(ConfigError, match="has an empty item; remove the stray comma"):
        parse_ints(text, "sizes")


@pytest.mark.parametrize("text", ["cpu,,gpu", "cpu,"])
def test_an_empty_item_in_a_list_of_names_is_refused(text):
    with pytest.raises(ConfigError, match="devices: .* has an empty item"):
        parse_words(text, "devices", *WORDS)


def test_a_range_whose_doubling_misses_high_is_refused_naming_both_ends():
    with pytest.raises(ConfigError, match=r"'64\.\.1000' doubles from 64 and misses 1000 \(it "
                                          r"stops at 512\); end it at 512 or 1024"):
        parse_ints("64..1000", "sizes")


@pytest.mark.parametrize("text, values", [("64..1024", [64, 128, 256, 512, 1024]),
                                          ("3..12", [3, 6, 12]), ("5..5", [5]),
                                          ("64, 128", [64, 128])])
def test_ranges_that_reach_high_and_plain_lists_still_parse(text, values):
    assert parse_ints(text, "sizes") == values


def test_decimal_sizes_say_how_to_sweep_them():
    """GPAW's natural size is a grid spacing h = 0.25 A (s29 tester B6)."""
    with pytest.raises(ConfigError, match=r"not a comma-separated list of integers; sizes are "
                                          r"whole numbers: scale a decimal parameter"):
        parse_ints("0.3,0.25", "sizes")
    with pytest.raises(ConfigError) as caught:
        parse_ints("1.5", "ranks_per_node")
    assert "scale" not in str(caught.value)  # a count is no parameter to scale
    with pytest.raises(ConfigError) as caught:
        parse_ints("a,b", "sizes")
    assert "scale" not in str(caught.value)


def test_a_decimal_range_says_how_to_sweep_it_too():
    """s29 V1-5: `0.3..1` got no hint; `1e2` is no decimal parameter."""
    with pytest.raises(ConfigError, match=r"must be LOW..HIGH integers; sizes are whole "):
        parse_ints("0.3..1", "sizes")
    with pytest.raises(ConfigError) as caught:
        parse_ints("25,1e2", "sizes")
    assert "scale" not in str(caught.value)
