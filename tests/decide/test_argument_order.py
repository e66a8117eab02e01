"""A command's options compared in any order, its positional words in theirs
(:mod:`hpcds1mpi.decide.argument_order`, s43 tester G2)."""

from __future__ import annotations

import pytest

from hpcds1mpi.decide.advise_launch import argument_note, other_arguments
from hpcds1mpi.decide.argument_order import (
    in_measured_order, may_be_flag, option_groups, related, same_words)
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
    # s43 tester J9: the last one wins, so these reorders change what is set
    ("app --mode fast --no-mode", "app --no-mode --mode fast"),
    ("app --mode=fast --no-mode", "app --no-mode --mode=fast"),
    ("app --mo fast -k 1 --mode slow", "app --mode slow -k 1 --mo fast"),
    ("app -d 1 -vq 2 -q 3", "app -q 3 -d 1 -vq 2"),
    ("app -x 1 -y 2 +x 3", "app -y 2 +x 3 -x 1"),
    # J9: -v and -q may be flags, so in.nml and out.h5 may be positionals that swap
    ("app -v in.nml -q out.h5", "app -q out.h5 -v in.nml"),
    ("app --verbose in.nml -q out.h5", "app -q out.h5 --verbose in.nml"),
    ("app -echo a.in -v b.out -echo", "app -v b.out -echo a.in -echo"),  # -echo shown a flag
    # s43 review R10: one option repeated in '=' form; flags whose positionals swap
    ("app --define=b --define=a", "app --define=a --define=b"),
    ("app -q b.dat -v a.dat", "app -v a.dat -q b.dat"),
    # one short option twice, its value attached: include order, the last -O wins
    ("app -Ibar -Ifoo", "app -Ifoo -Ibar"),
    ("app -O3 -n 4 -O2", "app -O2 -n 4 -O3"),
])
def test_words_that_may_not_move_are_said_in_another_order_never_left_out_and_added(
        ran, measured):
    said = other_arguments(ran.split(), measured)
    assert said == (f"the same arguments in another order: {ran.split(None, 1)[1]!r} where it "
                    f"has {measured.split(None, 1)[1]!r}")
    assert in_measured_order(ran.split()[1:], measured.split()[1:]) is None


def test_related_options_set_one_thing():
    assert related(["--mode", "fast"], ["--no-mode"])
    assert related(["-I", "a"], ["-I", "b"])
    assert related(["--mo", "a"], ["--mode", "b"])
    assert related(["-x", "1"], ["-y", "+x"])
    assert related(["-q"], ["-vq"])
    assert related(["-Ifoo"], ["-Ibar"]) and related(["--define=a"], ["--define=b"])
    assert not related(["-sf", "omp"], ["-screen", "none"])   # word options with values
    assert not related(["-in", "in.gran"], ["-var", "S", "14"])
    assert not related(["-log", "none"], ["-var", "N", "4000"])


def test_an_option_may_be_a_flag_unless_its_words_show_a_value():
    line = "-in in.gran -echo -log none".split()
    assert may_be_flag("-v", line) and may_be_flag("--mode", line)
    assert may_be_flag("-echo", line)             # shown without a value
    assert not may_be_flag("-in", line) and not may_be_flag("-log", line)


def test_lammps_word_options_that_share_a_first_letter_are_still_moved():
    measured = "lmp -sf omp -pk omp 4 -in in.lj -screen none -partition 2x4"
    ran = "lmp -screen none -in in.lj -partition 2x4 -pk omp 4 -sf omp"
    assert other_arguments(ran.split(), measured) is None


def test_groups_that_change_no_reading_are_still_moved():
    """A flag without values moves freely; a flag's group moves past a word option's."""
    assert other_arguments("app -v -q out.h5".split(), "app -q out.h5 -v") is None
    assert other_arguments("app -v in.nml -in x".split(), "app -in x -v in.nml") is None


def test_same_words_fits_placeholders_once_each():
    assert same_words(["-n", "30", "x"], ["x", "-n", "{size}"])
    assert not same_words(["-n", "30", "30"], ["-n", "{size}", "x"])


def test_advise_names_no_difference_for_a_reordered_liggghts_line():
    script = read_script("#SBATCH -N 1\nmpirun -np 2 liggghts -var S 14 -var N 4000 -log none "
                         "-in in.gran\n")
    assert argument_note(script.launch, LIGGGHTS) is None
