"""A hoc interpreter's error in a run that exited 0: NEURON's, said as a note."""

from __future__ import annotations

import pytest

from hpcds1mpi.measure.hoc_error import hoc_error
from tests.measure.test_ending_error import OUTPUTS


def test_neurons_misspelled_mechanism_is_its_last_hoc_error_with_its_place():
    """Was (s46 tester G2): nothing read it; the run, which computed without the mechanism, was
    stored ok with no word."""
    stdout = (OUTPUTS / "neuron-misspelled-mechanism.stdout").read_text()
    assert hoc_error(stdout, "") == ("nrniv: hhx is not a MECHANISM near line 1",
                                     "nrniv: hhx is not a MECHANISM")
    assert hoc_error("", stdout)[1] == "nrniv: hhx is not a MECHANISM"


@pytest.mark.parametrize("text, found", [
    ("0 nrniv: hhx is not a MECHANISM\n0  near line 1\n0  insert hhx\n          ^\nspikes=0\n",
     ("nrniv: hhx is not a MECHANISM near line 1", "nrniv: hhx is not a MECHANISM")),
    ("nrniv: run_undefined_proc undefined function\n in bad.hoc near line 7\n",
     ("nrniv: run_undefined_proc undefined function in bad.hoc near line 7",
      "nrniv: run_undefined_proc undefined function")),
    ("NEURON: syntax error\n near line 3\n x = = 1\n", ("NEURON: syntax error near line 3",
                                                        "NEURON: syntax error")),
])
def test_a_ranks_tag_a_joined_file_and_another_program_name_are_read(text, found):
    assert hoc_error(text, "") == found


@pytest.mark.parametrize("text", [
    "nrniv: hhx is not a MECHANISM\nspikes=0\n",  # no place: not hoc's shape
    "nrniv: Warning: deprecated call\n near line 2\n",
    "near line 1\nspikes=102\n", "Result: 3\nnear line 4 of the table: 0 errors\n",
])
def test_an_error_without_its_place_or_a_warning_is_none(text):
    assert hoc_error(text, "") == ("", "")


def test_interleaved_ranks_places_are_joined_before_the_error_is_read():
    """A place of a rank with no error of its own above (ranks' lines interleaved) is joined to
    the line above it by ``program_lines``: read by the joined place, not the line under (s47)."""
    text = ("0 nrniv: hhx is not a MECHANISM\n1 nrniv: hhy is not a MECHANISM\n"
            "2  near line 4\n")
    assert hoc_error(text, "") == ("nrniv: hhy is not a MECHANISM near line 4",
                                   "nrniv: hhy is not a MECHANISM")


def test_a_place_under_an_error_put_back_after_the_join_is_still_read():
    """Why :data:`~hpcds1mpi.measure.hoc_error.PLACE` stays (s47): an error section's one line,
    blank when the place under it was read ("MPI_Abort": a launcher's words), is put back as
    the section's message after, so the place is left on the line under its error."""
    text = ("[0]---------- Fatal error in hoc ----------\n[0]nrniv: error calling MPI_Abort\n"
            " near line 3\n")
    assert hoc_error(text, "") == ("nrniv: error calling MPI_Abort near line 3",
                                   "nrniv: error calling MPI_Abort")
