"""A launched command's words lined up with its measured command's, options set aside.

``poisson.py 320 --ksp cg --pc gamg`` and ``poisson.py --pc gamg 320`` are ``poisson.py
{size}`` with options added (s30 tester K2: advise found no size in either). Which words an
option takes cannot be known without the program's parser: ``--pc gamg`` may be an option and
its value, or a flag and a positional word. So each option word followed by a word that is no
option is read both ways (``--name=value`` is one word either way); a reading's positional
words must line up one for one with the measured command's, read alike. The caller takes a
placeholder's value only where every reading that lines up gives it at the same word
(:func:`lined_up_aside`), that word could be no option's value (:func:`could_be_value`),
and the measured command's word is positional in every reading (``-var x {size}`` is not:
``-var`` may take two values).
"""

from __future__ import annotations

import itertools
import re
from typing import Callable

#: Option words that may take the next word, per command, past which no reading is tried
#: (each doubles the readings).
MOST_TAKERS = 8
#: A number, negative too: a value, never an option.
_NUMBER = re.compile(r"^-?[0-9][0-9.eE+-]*$")


def is_option(word: str) -> bool:
    """Whether ``word`` is an option (``-x``, ``--name``, ``--name=value``), not a value."""
    return word.startswith("-") and word != "-" and not _NUMBER.match(word)


def _takers(words: list[str]) -> list[int]:
    """The indices of option words that may take the next word as their value."""
    return [k for k, word in enumerate(words[:-1])
            if is_option(word) and "=" not in word and not is_option(words[k + 1])]


def could_be_value(words: list[str], at: int) -> bool:
    """Whether ``words[at]`` may be the value of the option word before it."""
    return at > 0 and (at - 1) in _takers(words)


def _settled(words: list[str], at: int) -> bool:
    """Whether ``words[at]`` is positional wherever the options take their values: first,
    or after an ``--name=value`` word or a word that is no option and no option's value
    (``-var x {size}``: a second value of ``-var``, maybe, so not)."""
    if at == 0:
        return True
    before = words[at - 1]
    return "=" in before if is_option(before) else not could_be_value(words, at - 1)


def readings(words: list[str]) -> list[tuple[int, ...]] | None:
    """The indices of ``words``' positional words in each reading of its options, distinct;
    None past :data:`MOST_TAKERS`."""
    takers = _takers(words)
    if len(takers) > MOST_TAKERS:
        return None
    found = set()
    for taken in itertools.product((False, True), repeat=len(takers)):
        values = {k + 1 for k, took in zip(takers, taken) if took}
        found.add(tuple(k for k, word in enumerate(words)
                        if not is_option(word) and k not in values))
    return sorted(found)


def lined_up_aside(launched: list[str], recorded: list[str],
                   fits: Callable[[int, int], bool]) -> list[list[tuple[int, int]]]:
    """Every pairing of the positional words of ``recorded`` (the measured command's words
    after its program) with those of ``launched`` (the launched command's), as (recorded
    index, launched index), one per pair of readings (:func:`readings`) that line up one for
    one with ``fits(j, i)`` true for every pair; [] where either has too many readings."""
    measured, given = readings(recorded), readings(launched)
    if measured is None or given is None:
        return []
    out = []
    for theirs, ours in itertools.product(measured, given):
        pairs = list(zip(theirs, ours))
        if len(theirs) == len(ours) and all(fits(j, i) for j, i in pairs):
            out.append(pairs)
    return out


def aside_hits(launched: list[str], recorded: list[str], key: str, value: str,
               word_pattern: Callable[..., str]) -> list[tuple[int, re.Match]]:
    """(index in ``launched``, its match with ``value`` as group 1) of each word that gives
    ``{key}`` where ``launched`` (the words after the program) lines up with ``recorded``
    (the measured command's) options set aside; [] where the readings that line up differ in
    where or what it is, or the word could be an option's value (``app -v 320``).
    ``word_pattern(token, key="", group="")``: a recorded word as a regex
    (:func:`~hpcds1mpi.launch.script_placeholders.word_pattern`)."""
    found = set()
    for pairs in lined_up_aside(launched, recorded, lambda j, i: re.fullmatch(
            word_pattern(recorded[j]), launched[i]) is not None):
        hits = tuple((j, i) for j, i in pairs if "{" + key + "}" in recorded[j])
        if hits and all(re.fullmatch(word_pattern(recorded[j], key, f"({value})"),
                                     launched[i]) for j, i in hits):
            found.add(hits)
    if len(found) != 1 or any(could_be_value(launched, i) or not _settled(recorded, j)
                              for j, i in next(iter(found))):
        return []
    return [(i, re.fullmatch(word_pattern(recorded[j], key, f"({value})"), launched[i]))
            for j, i in next(iter(found))]
