"""Which lines of a program's output it wrote, and the message under an error title."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcds1mpi.measure.program_lines import kept_lines, message_under, raw_lines, with_message

#: Real program outputs (tests/data/program_outputs/README.md says how each was captured).
OUTPUTS = Path(__file__).parent.parent / "data" / "program_outputs"


def test_a_launchers_log_line_and_rank_tags_are_not_the_programs():
    """OpenFOAM under mpirun: its `[0]`-tagged error stays, Open MPI's ORTE_ERROR_LOG line and
    OpenFOAM's "FOAM parallel run exiting" trailer are blanked."""
    kept = kept_lines((OUTPUTS / "openfoam-processor-count-mismatch.stderr").read_text())
    assert [ln for ln in kept if ln] == [
        "FOAM FATAL ERROR:",
        "number of processor directories = 2 is not equal to the number of processors = 4"]


def test_a_title_takes_its_paragraph_up_to_where_the_source_raised_it():
    kept = kept_lines((OUTPUTS / "openfoam-missing-scheme.stderr").read_text())
    title = kept.index("FOAM FATAL IO ERROR:")
    said, last = with_message(kept, title)
    assert said == ("FOAM FATAL IO ERROR: Entry 'div(phi,U)' not found in dictionary "
                    "\"/tmp/FX2/io/system/fvSchemes.divSchemes\"") and last == title + 1


def test_slurmsteps_cancelled_banner_under_a_node_named_slurmstepd_is_not_the_programs():
    """s40 tester A6: MPI_Abort under srun was recorded as Slurm's "slurmstepd-n1: error: ***
    STEP ... CANCELLED" banner: only the name "slurmstepd:" was known, not a multiple-slurmd
    build's "slurmstepd-<node>:"."""
    from hpcds1mpi.measure.program_launch import reason_line

    stderr = (OUTPUTS / "openmpi5-abort-srun-pmix.stderr").read_text()
    assert reason_line("", stderr) == "hyb: rank 1 giving up: bad input"
    for name in ("slurmstepd", "slurmstepd-n1", "slurmstepd-node-07.cluster"):
        banner = f"{name}: error: *** JOB 5 ON n1 CANCELLED AT 2026-12-06T16:00:48 ***"
        assert kept_lines(f"solver: bad input\n{banner}\n") == ["solver: bad input", ""]


#: NEURON 8.2's hoc error at 1 rank and at 2 (each line tagged "0 " with its rank), on stderr.
NEURON_ERROR = ("nrniv: syntax error\n in ring_bad.hoc near line 12\n"
                " obj func connect2target() { localobj nc\n        ^\n")


@pytest.mark.parametrize("tag", ["", "0 "])
def test_a_hoc_errors_location_is_joined_to_it_without_its_rank_tag(tag):
    """s41 tester A4: the reasons were "nrniv: syntax error" and "0 nrniv: syntax error", the
    file and line under them dropped."""
    from hpcds1mpi.measure.program_launch import reason_line

    stderr = "".join(f"{tag}{line}\n" if not line.lstrip().startswith("^") else f"{line}\n"
                     for line in NEURON_ERROR.splitlines())
    assert reason_line("numprocs=2\n", stderr) == \
        "nrniv: syntax error in ring_bad.hoc near line 12"
    # a count that starts a line is no rank tag where no location follows it
    assert reason_line("", "2 errors found\n") == "2 errors found"


def test_a_hoc_location_is_joined_to_its_own_ranks_error_where_ranks_lines_interleave():
    """s41 review F4: with each rank writing its own stderr, rank 0's location came under rank 1's
    error; it was joined to that one and the reason kept a rank tag ("1 nrniv: ...")."""
    from hpcds1mpi.measure.program_launch import reason_line

    stderr = ("0 nrniv: syntax error\n1 nrniv: syntax error\n"
              "0  in ring_bad.hoc near line 12\n1  in ring_bad.hoc near line 12\n")
    assert reason_line("", stderr) == "nrniv: syntax error in ring_bad.hoc near line 12"


def test_a_parenthesised_remark_under_an_error_line_is_joined_to_it():
    """s43 tester G5: Elk's reason was "Error(readinput): error reading tasks", without the line
    under it that says the fix; a remark is joined to any error line, titled or not."""
    from hpcds1mpi.measure.program_launch import reason_line

    stdout = (OUTPUTS / "elk-tasks-blank-line.stdout").read_text()
    stderr = (OUTPUTS / "elk-tasks-blank-line.stderr").read_text()
    assert reason_line(stdout, stderr) == ("Error(readinput): error reading tasks (blank line "
                                           "required after tasks block)")
    kept = ["Error: bad input", "(see the manual, section 2)", "next"]
    assert with_message(kept, 0) == ("Error: bad input (see the manual, section 2)", 1)
    # a line that is not one remark stays apart, as does one after a blank line
    for other in (["Error: bad input", "(a) first (b) second"], ["Error: bad input", "",
                                                               "(see the manual)"],
                  ["Error: bad input", "(see) the manual"]):
        assert with_message(other, 0) == ("Error: bad input", 0)


@pytest.mark.parametrize("text, said, last", [
    # s48 tester O1: gretl's "Error: " with an empty message, then its ordinary output
    ("Error: \nwork done\nelapsed (max over 2 ranks): 0.2500 seconds\n", "Error:", 0),
    ("  Error in routine x (1):\n  step 2\n", "Error in routine x (1):", 0),
    # an empty title's continuation is its indented lines, up to the output at its indentation
    ("Error:\n  1.2e-10\n", "Error: 1.2e-10", 1),
    ("Error:\n\tcannot open in.dat\n\tunit 10\nelapsed 0.25 s\n",
     "Error: cannot open in.dat unit 10", 2),
    # a known format's title takes the paragraph under it, indented or not
    ("Fortran runtime error:\nCannot open file 'LU.dat'\n",
     "Fortran runtime error: Cannot open file 'LU.dat'", 1),
])
def test_an_empty_titles_message_is_its_continuation_not_the_later_output(text, said, last):
    kept = kept_lines(text)
    assert with_message(kept, 0, raw_lines(text)) == (said, last)


def test_without_the_raw_lines_a_title_takes_its_paragraph_as_before():
    """A failed launch's reason (its verdict made) still quotes the paragraph under a title."""
    kept = kept_lines("Error:\nwork done\n")
    assert with_message(kept, 0) == ("Error: work done", 1)


@pytest.mark.parametrize("text", [
    "[0] Error:\n[0]   cannot allocate 3 GB\n",
    "[0] Error: \n[0]   cannot allocate 3 GB\n",
    "0: Error:\n0:   cannot allocate 3 GB\n",
    "[1,0]<stderr>:Error:\n[1,0]<stderr>:  cannot allocate 3 GB\n",
])
def test_a_rank_tagged_titles_continuation_is_indented_after_the_tag(text):
    """Was (s48 review RY3): the raw line's rank tag read as the line's text, every tagged line
    0 deep, so the message indented under "[0] Error:" was not its continuation."""
    kept = kept_lines(text)
    assert with_message(kept, 0, raw_lines(text)) == ("Error: cannot allocate 3 GB", 1)
    assert with_message(kept_lines("[0] Error:\n[0] work done\n"), 0,
                        raw_lines("[0] Error:\n[0] work done\n")) == ("Error:", 0)


@pytest.mark.parametrize("text, said, last", [
    # s48 review RY3: a title with no continuation takes exactly its next line as a verdict reads
    ("FATAL ERROR:\ncannot open file x.dat\n", "FATAL ERROR: cannot open file x.dat", 1),
    ("ERROR:\nline one\nline two\n", "ERROR: line one", 1),
    ("Error:\n\tcannot open in.dat\nelapsed 0.25 s\n", "Error: cannot open in.dat", 1),
    # s48 tester O1: printed with an empty message (a blank after its colon): none
    ("Error: \nwork done\nelapsed (max over 2 ranks): 0.2500 seconds\n", "Error:", 0),
    ("Error:\n\nlater output\n", "Error:", 0),
    ("FOAM FATAL ERROR:\nFrom function f(x)\n", "FOAM FATAL ERROR:", 0),
])
def test_a_verdict_reads_an_empty_titles_message_as_its_next_line(text, said, last):
    assert message_under(kept_lines(text), 0, raw_lines(text)) == (said, last)
