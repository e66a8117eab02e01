"""An exit 0 after the program said a file of its command line was missing or already there
(s38 tester A7, A2): failed where the folder confirms it."""

from __future__ import annotations

from hpcds1mpi.measure.argument_files import (argument_problem, existing_arguments,
                                              file_arguments)

#: Ray 2.3.1 given a missing -s file, under Open MPI's mpirun: exit 0.
RAY_MISSING = """\
Ray: cannot access 'reads_7777.fasta': No such file or directory
Rank 0 Error: reads_7777.fasta failed to load properly...
Rank 0: Assembler panic: no k-mers found in reads.
Rank 0: Perhaps reads are shorter than the k-mer length (change -k).
"""
#: Ray given an -o folder that is there: exit 0, memory lines after its error.
RAY_EXISTS = """\
Error, rayout_5000/ already exists, change the -o parameter to another value.

Rank 0: assembler memory usage: 41768 KiB
Rank 0: assembler memory usage: 107584 KiB
"""
RAY_ARGS = ["-k", "31", "-s", "reads_7777.fasta", "-o", "rayout_5000"]


def test_a_missing_input_of_the_command_line_is_a_failure(tmp_path):
    why = argument_problem(RAY_MISSING, "", RAY_ARGS, str(tmp_path), set())
    assert why.startswith("exit 0, but the program said: Ray: cannot access 'reads_7777.fasta'")
    assert f"reads_7777.fasta, of its command line, is not in {tmp_path}" in why
    (tmp_path / "reads_7777.fasta").write_text(">r\nACGT\n")  # there after all: its own words
    assert argument_problem(RAY_MISSING, "", RAY_ARGS, str(tmp_path), set()) == ""


def test_an_output_there_before_the_launch_is_a_failure_one_it_made_is_not(tmp_path):
    (tmp_path / "rayout_5000").mkdir()
    existed = existing_arguments(RAY_ARGS, str(tmp_path))
    assert existed == {"rayout_5000"}
    why = argument_problem(RAY_EXISTS, "", RAY_ARGS, str(tmp_path), existed)
    assert "Error, rayout_5000/ already exists" in why and "before it started" in why
    assert argument_problem(RAY_EXISTS, "", RAY_ARGS, str(tmp_path), set()) == ""


def test_lines_that_are_no_such_failure_leave_the_run_ok(tmp_path):
    args = ["in.dat", "--tuning=tuning.dat", "out"]
    for text in ("warning: tuning.dat not found, using built-in defaults\n",  # went on
                 "note: out already exists, overwriting\n",  # no error word
                 "cannot open file extra.dat\n",  # not of its command line
                 "in.dat.bak: No such file or directory\n"):  # another name
        assert argument_problem(text, "", args, str(tmp_path), {"out"}) == "", text
    assert file_arguments(["-n", "4", "se=reads.fa", "--o=out/", "12"]) == ["reads.fa", "out"]


def test_a_program_that_goes_on_without_an_optional_file_is_not_failed(tmp_path):
    # s38 review 2a, 2c: these programs went on and did their work; with no error signalled
    # they are not failed, whatever their lines say of a file of the command line.
    from hpcds1mpi.measure.argument_files import argument_problem

    (tmp_path / "out").mkdir()
    cases = [
        ("Cannot open restart file ckpt.dat; starting from scratch\ndone 1.2 s", ["ckpt.dat"]),
        ("checkpoint state.cpt not found, starting a new run\nstep 100", ["-c", "state.cpt"]),
        ("mkdir: cannot create directory 'out': File exists\nwrote out/a.txt", ["out"]),
    ]
    for text, args in cases:
        assert argument_problem(text, "", args, str(tmp_path), {"out"}) == "", text


def test_a_missing_argument_with_an_error_signalled_is_still_failed(tmp_path):
    from hpcds1mpi.measure.argument_files import argument_problem

    said = argument_problem("", "Ray: cannot access 'reads.fasta': No such file or directory\n"
                            "Assembler panic: no input\n", ["-s", "reads.fasta"],
                            str(tmp_path), set())
    assert said.startswith("exit 0, but the program said: Ray: cannot access")
