"""A placeholder given as a ``name=value`` word (s32 tester U4)."""

from hpcds1mpi.launch.named_values import named_hits
from hpcds1mpi.launch.script_placeholders import word_pattern

DIGITS = "[0-9]+"


def _values(launched: str, recorded: str) -> list[tuple[int, str]]:
    return [(i, m.group(1)) for i, m in named_hits(launched.split(), recorded.split(), "size",
                                                   DIGITS, word_pattern)]


def test_libctl_value_read_with_other_words_added():
    # s32 tester U4: `meep res=18 T=20 wg.ctl` against the measured `meep res={size} wg.ctl`
    assert _values("res=18 T=20 wg.ctl", "res={size} wg.ctl") == [(0, "18")]
    assert _values("T=20 wg.ctl res=18", "res={size} wg.ctl") == [(2, "18")]


def test_name_given_twice_or_not_fitting_gives_nothing():
    assert _values("res=18 res=20 wg.ctl", "res={size} wg.ctl") == []
    assert _values("res=abc wg.ctl", "res={size} wg.ctl") == []
    assert _values("T=20 wg.ctl", "res={size} wg.ctl") == []


def test_options_are_not_names():
    assert _values("--n=18", "--n={size}") == []  # an option's value: read elsewhere
