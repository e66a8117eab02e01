"""Words of a line read only where the line does not deny them (s45 tester F6)."""

from __future__ import annotations

import re

import pytest

from hpcds1mpi.measure.negation import CANNOT, DENIED, NOT_POSSIBLE, Unnegated

GOES_ON = Unnegated(re.compile(r"\bfrom scratch\b|\bfall ?back\b|\bcontinu\w*", re.IGNORECASE),
                    CANNOT, NOT_POSSIBLE)


@pytest.mark.parametrize("line", [
    "cannot start from scratch in restart mode", "unable to start from scratch",
    "no fallback", "will not simply start from scratch", "does not fall back",
    "fall back not possible", "fallback is impossible", "not starting from scratch"])
def test_a_phrase_its_clause_denies_is_not_found(line):
    assert GOES_ON.search(line) is None


@pytest.mark.parametrize("line", [
    "chk.h5 not found, starting from scratch", "input not found - continuing",
    "cannot open chk.h5 starting from scratch", "cannot read tune.dat; fall back to defaults",
    "No checkpoint found starting from scratch"])
def test_a_phrase_after_another_clauses_denial_is_found(line):
    assert GOES_ON.search(line) is not None


@pytest.mark.parametrize("line", [
    "chk.h5 not found; set restart=no to start from scratch",
    "remove -cpi to start from scratch", "or you can pass --new to start from scratch",
    "(see the manual for the fallback)", "rerun with --continue", "fallback disabled",
    "fall back is not enabled", "fall back only with -d"])
def test_advice_or_a_phrase_said_to_be_off_is_not_found(line):
    """s46 review RV5: a refusal's advice to the user is no program that went on."""
    assert GOES_ON.search(line) is None


@pytest.mark.parametrize("line", [
    "value out of range; set to 4 and continuing", "chk.h5 missing: going to start from scratch",
    "will start from scratch", "trying to continue"])
def test_a_program_saying_what_it_does_is_no_advice(line):
    assert GOES_ON.search(line) is not None


def test_a_later_match_not_denied_is_found():
    match = GOES_ON.search("cannot continue with rank 3; continuing with the rest")
    assert match is not None and match.group() == "continuing"


def test_a_denied_word_needs_the_denial_right_before_it():
    exceeds = Unnegated(re.compile(r"\bexceed|\bfail", re.IGNORECASE), DENIED)
    assert exceeds.search("which does not exceed the 64 GB") is None
    assert exceeds.search("to avoid failure at checkpoint") is None
    assert exceeds.search("which exceeds the 64 GB") is not None
    assert exceeds.search("not enough memory: would fail") is not None
