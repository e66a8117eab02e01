"""A program's statement that options it was given were never used."""

from __future__ import annotations

from hpcds1mpi.measure.unused_options import option_names, unused_options
from tests.measure.test_program_launch import OUTPUTS


def test_petscs_options_left_are_named_each_once():
    """s29 tester C7: PETSc's real -options_left report (exit 0)."""
    line, words = unused_options((OUTPUTS / "petsc-options-left.stdout").read_text(), "")
    assert (line, words) == ("Option left: name:-ksp_typo value: cg; Option left: "
                             "name:-pc_typ value: jacobi", "Option left")
    assert option_names(line) == ["-ksp_typo", "-pc_typ"]


def test_another_programs_unused_option_and_runs_that_used_all_of_theirs():
    line, words = unused_options("", "warning: ignoring unknown argument -tol_abs 1e-8\n")
    assert (line, words) == ("warning: ignoring unknown argument -tol_abs 1e-8",
                             "ignoring unknown argument")
    assert option_names(line) == ["-tol_abs"]
    assert unused_options("unrecognized option '--tol' (skipped)\n", "")[1] == \
        "unrecognized option"
    for text in ("There are no unused options.\n", "-ksp_type cg\n#End of PETSc Option Table "
                 "entries\n", "unused memory: 3 GB\n", "Iterations 36 max|u| 0.138161\n"):
        assert unused_options(text, "") == ("", ""), text


def test_an_options_control_characters_are_escaped():
    """s29 tester H5: PETSc echoes a name as given; printed raw, it set the window title."""
    from tests.measure.test_printable import HOSTILE_OPTION

    line, words = unused_options(HOSTILE_OPTION + "\n", "")
    assert line == "Option left: name:-ksp\\x1b[31mRED\\x1b]0;TITLE\\x07\\x08\\x08 value: cg"
    assert words == "Option left" and option_names(line) == \
        ["-ksp\\x1b[31mRED\\x1b]0;TITLE\\x07\\x08\\x08"]
