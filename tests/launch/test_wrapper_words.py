"""A shell wrapper's line split into words as sh splits it."""

from __future__ import annotations

from hpcds1mpi.launch.wrapper_words import Op, tokens


def test_words_quotes_and_operators():
    said = tokens('A=1 ./app "$(dirname "$0")" \'x y\' && echo ok 2>&1')
    assert said == ["A=1", "./app", "$(dirname $0)", "x y", "&&", "echo", "ok", "2>&1"]
    assert isinstance(said[4], Op) and not isinstance(said[3], Op)
    assert tokens('echo "open') is None


def test_an_array_subscripts_parentheses_are_part_of_its_word():
    """s46 tester H8: ff-mpirun's `a[((j++))]=x` was split at its parentheses, and the
    wrapper's reading stopped before the eval that starts its mpiexec."""
    said = tokens('test -n "$o" && a[((j++))]="$o"')
    assert said == ["test", "-n", "$o", "&&", "a[((j++))]=$o"]
    assert [isinstance(t, Op) for t in tokens("(cd x)")] == [True, False, False, True]
