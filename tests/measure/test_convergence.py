"""A solver's statement that it stopped short, in a run that exited 0."""

from __future__ import annotations

from hpcds1mpi.measure.convergence import convergence_warning
from tests.measure.test_readings import CP2K_NOT_CONVERGED

#: ABINIT 9.6 (Debian's abinit) with nstep 2: exit 0; its warning document and its own line
#: (stdout, cut from a real run).
ABINIT_NOT_CONVERGED = """  sigma(3 3)=  3.93031100E-05  sigma(2 1)=  0.00000000E+00


--- !ScfConvergenceWarning
message: |
    nstep 2 was not enough SCF cycles to converge.
...

 scprqt:  WARNING -
  nstep=    2 was not enough SCF cycles to converge;
  maximum energy difference=  5.124E-03 exceeds toldfe=  1.000E-12

"""


def test_a_solvers_own_not_converged_line_is_quoted():
    assert convergence_warning(CP2K_NOT_CONVERGED, "") == (
        "*** WARNING in qs_scf.F:601 :: SCF run NOT converged ***", "NOT converged")
    assert convergence_warning(ABINIT_NOT_CONVERGED, "") == (
        "ScfConvergenceWarning: nstep 2 was not enough SCF cycles to converge.",
        "not enough SCF cycles to converge")
    assert convergence_warning("", "solver did not converge in 50 steps\n")[1] == \
        "did not converge"
    # Elk 8.4 (Debian's elk-lapw) with maxscl 4: exit 0 (s30 tester L4: no note).
    elk = "\nWarning(gndstate): failed to reach self-consistency after 4 loops\n\n"
    assert convergence_warning(elk, "") == (
        "Warning(gndstate): failed to reach self-consistency after 4 loops",
        "failed to reach self-consistency")
    assert convergence_warning("", " Reached self-consistent loops maximum\n")[1] == \
        "Reached self-consistent loops maximum"  # its INFO.OUT's line
    assert convergence_warning(" Convergence failure -- run terminated.\n", "")[1] == \
        "Convergence failure"


def test_bagels_scf_that_reached_its_iteration_limit_is_quoted():
    """Was (s48 tester O3): BAGEL's "* Max iteration reached in SCF." (maxiter 2, exit 0) was
    kept ok with no note, a 2-iteration SCF timed as the computation."""
    from hpcds1mpi.measure.convergence import convergence_note
    from tests.measure.test_ending_error import OUTPUTS

    stdout = (OUTPUTS / "bagel-scf-max-iteration.stdout").read_text()
    said = convergence_warning(stdout, "")
    assert said == ("* Max iteration reached in SCF.", "Max iteration reached")
    assert convergence_note("bagel size 8", *said).endswith("--fail-regex 'Max iteration reached'")
    assert convergence_warning((OUTPUTS / "bagel-scf-converged.stdout").read_text(), "") == \
        ("", "")
    assert convergence_warning("maximum number of iterations reached (200)\n", "")[1] == \
        "maximum number of iterations reached"


def test_a_converged_run_says_nothing():
    for text in (" SCF run converged in 9 steps\n", "convergence achieved after 7 iterations\n",
                 " Convergence targets achieved\n", "self-consistency reached in 12 loops\n",
                 "--- !WARNING\nmessage: |\n    nband too small\n...\n",
                 # a tally, a setting, a limit not reached (s48: BAGEL's wording, O3)
                 "Max iterations reached: 0\n", "max iterations reached = false\n",
                 "max iterations: 100\n", "Max iterations not reached\n"):
        assert convergence_warning(text, "") == ("", "")


def test_a_sweep_notes_a_non_converged_run_once_and_fail_regex_makes_it_failed(tmp_path):
    """Was (s28 tester T8): CP2K's non-converged SCF (exit 0) recorded "ok 0.567 s", nothing
    said; and no option to record it failed."""
    from hpcds1mpi.records import telemetry
    from tests.helpers import run_cli
    from tests.measure.test_readings import CP2K_TIME

    (tmp_path / "nc.out").write_text(CP2K_NOT_CONVERGED)
    app = tmp_path / "cp2k.sh"
    app.write_text(f"#!/bin/sh\nsleep 0.6\ncat {tmp_path / 'nc.out'}\n")  # 0.567 s: its own
    app.chmod(0o755)
    argv = ["sweep", "--command", f"{app} -i h2o-{{size}}.inp", "--label", "cp2k", "--sizes",
            "150,250", "--time-regex", CP2K_TIME, "--min-time", "0", "--min-repeats", "2",
            "--max-repeats", "2", "--no-progress"]
    proc = run_cli([*argv, "--out", str(tmp_path / "ok.h5")], timeout=120)
    assert proc.returncode == 0, proc.stderr
    notes = [ln for ln in proc.stderr.splitlines() if "NOT converged" in ln]
    assert len(notes) == 2, proc.stderr  # one per configuration, not one per repeat
    assert notes[0] == (
        "hpcds1mpi sweep: note: cp2k size 150 N1xR1xT1-cpu-fp64: ok, but the program said \"*** "
        "WARNING in qs_scf.F:601 :: SCF run NOT converged ***\"; its time is kept (the "
        "program exited 0): to record such runs failed, sweep into a new --out with "
        "--fail-regex 'NOT converged'"), notes[0]
    runs = telemetry.read_runs(tmp_path / "ok.h5")
    assert list(runs["status"]) == ["ok", "ok"] and list(runs["runtime_s"]) == [0.567, 0.567]

    proc = run_cli([*argv, "--fail-regex", "NOT converged", "--out",
                    str(tmp_path / "failed.h5")], timeout=120)
    assert proc.returncode == 1 and "every configuration this sweep ran failed" in proc.stderr
    runs = telemetry.read_runs(tmp_path / "failed.h5")
    assert list(runs["status"]) == ["failed", "failed"]
    assert runs["error"].iloc[0] == ("exit 0, but its output matched --fail-regex 'NOT "
                                     "converged': *** WARNING in qs_scf.F:601 :: SCF run NOT "
                                     "converged ***")


def test_a_sweep_notes_a_programs_error_line_before_its_time_line_and_keeps_it_ok(tmp_path):
    """s47 tester K4: a program's "Error: ... results are invalid" followed by its time line
    (exit 0) was stored ok with no note, where its "did not converge" had one."""
    from hpcds1mpi.records import telemetry
    from tests.helpers import run_cli

    app = tmp_path / "fx.sh"
    app.write_text("#!/bin/sh\necho 'ranks 1 n 32 iterations 12'\necho 'Error: mesh quality too "
                   "low, results are invalid'\necho 'solve time 0.0505 s'\n")
    app.chmod(0o755)
    proc = run_cli(["sweep", "--command", f"{app} {{size}}", "--label", "fx", "--sizes", "32",
                    "--time-regex", r"solve time ([0-9.]+)", "--min-time", "0", "--min-repeats",
                    "1", "--max-repeats", "1", "--no-progress", "--out",
                    str(tmp_path / "fx.h5")], timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert ("hpcds1mpi sweep: note: fx size 32 N1xR1xT1-cpu-fp64: ok, but the program said "
            "\"Error: mesh quality too low, results are invalid\"; its time is kept (the program "
            "exited 0): to record such runs failed, sweep into a new --out with --fail-regex "
            "'Error: mesh quality too low'") in proc.stderr, proc.stderr
    runs = telemetry.read_runs(tmp_path / "fx.h5")
    assert list(runs["status"]) == ["ok"] and list(runs["runtime_s"]) == [0.0505]


def test_options_the_program_did_not_use_are_named_once_and_fail_regex_makes_it_failed(
        tmp_path):
    """Was (s29 tester C7): PETSc with -options_left said "Option left: name:-ksp_typo value:
    cg" (a misspelled solver option: the default solver was measured); both runs recorded ok,
    nothing said. Its real output (exit 0), printed by a script as the program."""
    from hpcds1mpi.records import telemetry
    from tests.helpers import run_cli
    from tests.measure.test_program_launch import OUTPUTS

    app = tmp_path / "poisson.sh"
    app.write_text(f"#!/bin/sh\ncat {OUTPUTS / 'petsc-options-left.stdout'}\n")
    app.chmod(0o755)
    argv = ["sweep", "--command", f"{app} -da_grid_x {{size}} -ksp_typo cg -options_left",
            "--label", "poisson", "--sizes", "40,80", "--min-time", "0", "--min-repeats", "2",
            "--max-repeats", "2", "--no-progress"]
    proc = run_cli([*argv, "--out", str(tmp_path / "ok.h5")], timeout=120)
    assert proc.returncode == 0, proc.stderr
    notes = [ln for ln in proc.stderr.splitlines() if "did not use" in ln]
    assert len(notes) == 2, proc.stderr  # one per configuration, not one per repeat
    assert notes[0] == (
        "hpcds1mpi sweep: note: poisson size 40 N1xR1xT1-cpu-fp64: ok, but the program did "
        "not use options -ksp_typo, -pc_typ, so their settings were not measured (a "
        "misspelled option leaves the program's default in force); its time is kept (the "
        "program exited 0): to record such runs failed, sweep into a new --out with "
        "--fail-regex 'Option left'"), notes[0]
    assert list(telemetry.read_runs(tmp_path / "ok.h5")["status"]) == ["ok", "ok"]

    proc = run_cli([*argv, "--fail-regex", "Option left", "--out",
                    str(tmp_path / "failed.h5")], timeout=120)
    assert proc.returncode == 1 and "every configuration this sweep ran failed" in proc.stderr
    assert list(telemetry.read_runs(tmp_path / "failed.h5")["status"]) == ["failed", "failed"]



def test_a_hoc_error_the_program_went_on_from_is_noted_and_fail_regex_makes_it_failed(tmp_path):
    """Was (s46 tester G2): NEURON's "nrniv: hhx is not a MECHANISM" under exit 0 (the model
    computed without its mechanism: spikes=0) was stored ok with no note. Its real output,
    printed by a script as the program."""
    from hpcds1mpi.records import telemetry
    from tests.helpers import run_cli
    from tests.measure.test_program_launch import OUTPUTS

    app = tmp_path / "nrniv.sh"
    app.write_text(f"#!/bin/sh\ncat {OUTPUTS / 'neuron-misspelled-mechanism.stdout'}\n")
    app.chmod(0o755)
    argv = ["sweep", "--command", f"{app} ring_mech.py {{size}}", "--label", "ring", "--sizes",
            "32", "--min-time", "0", "--min-repeats", "1", "--max-repeats", "1", "--no-progress"]
    proc = run_cli([*argv, "--out", str(tmp_path / "ok.h5")], timeout=120)
    assert proc.returncode == 0, proc.stderr
    notes = [ln for ln in proc.stderr.splitlines() if "MECHANISM" in ln]
    assert notes == [
        "hpcds1mpi sweep: note: ring size 32 N1xR1xT1-cpu-fp64: ok, but the program said "
        "\"nrniv: hhx is not a MECHANISM near line 1\"; its time is kept (the program exited "
        "0): to record such runs failed, sweep into a new --out with --fail-regex 'nrniv: hhx "
        "is not a MECHANISM'"], proc.stderr
    assert list(telemetry.read_runs(tmp_path / "ok.h5")["status"]) == ["ok"]

    proc = run_cli([*argv, "--fail-regex", "nrniv: hhx is not a MECHANISM", "--out",
                    str(tmp_path / "failed.h5")], timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert list(telemetry.read_runs(tmp_path / "failed.h5")["status"]) == ["failed"]


def test_a_not_converged_line_and_its_note_are_printable():
    """s29 tester H5: the program's line is printed in the note; its control characters are
    escaped, and the suggested --fail-regex, escaped, still matches what the program wrote."""
    import re

    from hpcds1mpi.measure.convergence import convergence_note

    line, words = convergence_warning("SCF \x1b[31m NOT\x1fconverged\x07\n", "")
    assert (line, words) == ("SCF \\x1b[31m NOT converged\\x07", "NOT\x1fconverged")
    note = convergence_note("w size 1 N1xR1xT1-cpu-fp64", "x\x1b]0;T\x07", words)
    assert "said \"x\\x1b]0;T\\x07\"" in note and note.endswith("--fail-regex 'NOT\\x1fconverged'")
    assert re.search("NOT\\x1fconverged", "NOT\x1fconverged")
