"""A command's options compared in any order, its positional words in theirs
(:mod:`hpcds1mpi.decide.argument_order`, s43 tester G2)."""

from __future__ import annotations

import pytest

from hpcds1mpi.decide.advise_launch import argument_note, other_arguments
from hpcds1mpi.decide.argument_order import in_measured_order, option_groups, same_words
from hpcds1mpi.launch.script_reading import read_script

LIGGGHTS = "liggghts -in in.gran -var S {size} -var N 4000 -log none"


def test_options_are_grouped_with_their_values_after_the_positional_head():
    assert option_groups("a.inp -in f -var x 1 -shift -1.5 --n=2".split()) == (
        ["a.inp"], [["-in", "f"], ["-var", "x", "1"], ["-shift", "-1.5"], ["--n=2"]])
    assert option_groups("-a -- -b".split()) is None


@pytest.mark.parametrize("ran", [
    "liggghts -var S 14 -var N 4000 -log none -in in.gran",
    "liggghts -log none -in in.gran -var S 14 -var N 4000",
])
def test_the_same_options_in_another_order_are_the_measured_command(ran):
    """Was: "leaves out '-in in.gran'; adds '-in in.gran'", the verdict lowered and the
    script's time limit kept for a LIGGGHTS line whose options were only reordered."""
    assert other_arguments(ran.split(), LIGGGHTS) is None


def test_what_differs_besides_the_order_is_named_alone():
    ran = "liggghts -var S 14 -var N 4000 -log none -in in.gran -echo screen".split()
    assert other_arguments(ran, LIGGGHTS) == "adds '-echo screen'"
    ran = "liggghts -log none -in other.gran -var S 14 -var N 4000".split()
    assert other_arguments(ran, LIGGGHTS) == "'-in other.gran' where it has '-in in.gran'"


@pytest.mark.parametrize("ran, measured", [
    ("prog b.out a.inp", "prog a.inp b.out"),            # positional: order counts
    ("prog -v a.inp -x", "prog a.inp -v -x"),            # -v a flag or taking a.inp: unknown
    ("prog -I b -I a", "prog -I a -I b"),                # one option's repeats: may count
    ("prog -b 1 -- a -x", "prog -- a -x -b 1"),          # past --: no options
])
def test_words_that_may_not_move_are_said_in_another_order_never_left_out_and_added(
        ran, measured):
    said = other_arguments(ran.split(), measured)
    assert said == (f"the same arguments in another order: {ran.split(None, 1)[1]!r} where it "
                    f"has {measured.split(None, 1)[1]!r}")
    assert in_measured_order(ran.split()[1:], measured.split()[1:]) is None


def test_same_words_fits_placeholders_once_each():
    assert same_words(["-n", "30", "x"], ["x", "-n", "{size}"])
    assert not same_words(["-n", "30", "30"], ["-n", "{size}", "x"])


def test_advise_names_no_difference_for_a_reordered_liggghts_line():
    script = read_script("#SBATCH -N 1\nmpirun -np 2 liggghts -var S 14 -var N 4000 -log none "
                         "-in in.gran\n")
    assert argument_note(script.launch, LIGGGHTS) is None
