"""``$`` expansion and ``$(( ))`` arithmetic of a script's words: bash's results where they are
read, unknown (None) past the bounds that keep a hostile script cheap."""

from __future__ import annotations

import time

import pytest

from hpcds1mpi.launch.script_expansion import (
    MAX_ARITH_CHARS, MAX_EXPANDED_CHARS, ExpansionBudget, expand)

SCOPE = {"a": "3", "b": "-2", "N": "4", "EMPTY": "", "PBS_NODEFILE_LINES": "8"}


@pytest.mark.parametrize("value, expanded", [
    ("$((a*b))", "-6"), ("$(( (a+1)*N ))", "16"), ("$(( ((a+1)*N) / (N-2) ))", "8"), ("$[N+1]", "5"), ("${a}x", "3x"),
    ("$N-$a", "4-3"), ("${z:-5}", "5"), ("${EMPTY:-9}", "9"), ("${EMPTY-9}", ""),
    ("$(wc -l < $PBS_NODEFILE)", "8"), ("`wc -l $PBS_NODEFILE`", "8"), ("plain", "plain"),
    ("$((-7/2))", "-3"), ("$((-7%2))", "-1"),  # bash truncates toward zero (Python floors)
    ("${z:-$a}", "3"),  # a default's variables are expanded (was the literal '$a')
    ("$((9223372036854775807))", "9223372036854775807"),
    # unknown: not bash arithmetic, beyond 64 bits, nested deeper than read, unclosed
    ("$((2**3))", None), ("$((0x10))", None), ("$((1_0))", None), ("$((1.5))", None),
    ("$((9223372036854775807+1))", None), ("$((a*99999999999999999999))", None),
    ("$(( (((1))) ))", None), ("${z:-${a}}", None), ("$((1+1", None), ("$(date)", None),
    ("$missing", None),
])
def test_expansion_as_bash_or_unknown(value, expanded):
    assert expand(value, SCOPE) == expanded


@pytest.mark.parametrize("expression", [
    "+".join(["1"] * 5000),  # was a RecursionError: one nested BinOp per '+'
    "-" * 3000 + "1", "(" * 150 + "1" + ")" * 150, "a*" * 10_000 + "a",
])
def test_long_arithmetic_is_unknown_not_a_recursion_error(expression):
    assert len(expression) > MAX_ARITH_CHARS
    assert expand(f"$(({expression}))", SCOPE) is None


def test_arithmetic_up_to_the_bound_is_evaluated():
    expression = "+".join(["1"] * (MAX_ARITH_CHARS // 2))  # 128 terms, 255 characters
    assert expand(f"$(({expression}))", SCOPE) == str(MAX_ARITH_CHARS // 2)
    assert expand("$((" + "-" * 200 + "1))", SCOPE) == "1"


def test_a_value_that_would_grow_past_the_cap_is_unknown():
    """a1=$a0$a0 doubled line after line asked for 2^59 characters (15 GB in the server)."""
    scope = {"a0": "1"}
    for i in range(1, 60):
        value = expand(f"$a{i - 1}$a{i - 1}", scope)
        if value is None:
            scope.pop(f"a{i}", None)
        else:
            scope[f"a{i}"] = value
    assert len(scope["a12"]) == MAX_EXPANDED_CHARS and "a13" not in scope and "a59" not in scope


def test_the_budget_bounds_what_all_expansions_cost_together():
    budget = ExpansionBudget(10_000)
    scope = {"x": "y" * 1000}
    results = [expand("$x$x", scope, budget) for _ in range(10)]
    assert results[0] == "y" * 2000 and results[-1] is None and budget.spent
    assert expand("$x", scope, budget) is None  # spent for good
    assert expand("literal", scope, budget) == "literal"  # nothing to expand: no cost


@pytest.mark.parametrize("opening", ["$((", "$(", "${a:-", "`a", "$[", "${a:-$b", "$((1+("])
def test_unclosed_expressions_are_read_in_linear_time(opening):
    """A lazy '.*?' rescanned the rest of the value at every unclosed "$((" (minutes for one
    256 kB word)."""
    value = opening * (60_000 // len(opening))
    start = time.perf_counter()
    assert expand(value, SCOPE) is None
    assert time.perf_counter() - start < 1.0
