"""Whose refusal of its options a launch ended with (:mod:`hpcds1mpi.measure.launcher_refusal`):
the sweep's launcher's names --launcher-args; an MPI launcher the program started itself with
an option of its own is said to be the program's (s48 tester O2: gretlcli's `mpi` block ran
`mpiexec --oversubscribe`, MPICH's hydra refused it, and the sweep said "fix --launcher-args",
which the user never gave)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hpcds1mpi.measure.launcher_refusal import refusal_error, refused_option
from tests.measure.test_program_launch import _HYDRA_REFUSAL, _OPEN_MPI_REFUSAL, _SRUN_REFUSAL

#: hydra refusing the option gretl's own launch gives it.
_HYDRA_OVERSUBSCRIBE = _HYDRA_REFUSAL.replace("no-such-option", "oversubscribe")
_GRETL = ["/venv/bin/mpiexec", "-n", "1", "gretlcli", "-b", "blk.inp"]


def _error(stderr: str, tokens: list[str]) -> str:
    return refusal_error({"stdout": "", "stderr": stderr, "timed_out": False,
                          "exit_code": 1}, tokens)


@pytest.mark.parametrize("refusal, option", [
    ("[mpiexec@vm] unrecognized argument oversubscribe", "oversubscribe"),
    ('/usr/bin/mpirun.openmpi: Error: unknown option "--bogus"', "--bogus"),
    ("srun: unrecognized option '--bogus=2'", "--bogus=2"),
    ("[mpiexec@vm] duplicate -n", None),
])
def test_the_refused_option_is_read_from_each_launchers_words(refusal, option):
    assert refused_option(refusal) == option


def test_an_option_no_word_of_the_launch_carries_is_the_programs_own_launchers():
    said = _error(_HYDRA_OVERSUBSCRIBE, _GRETL)
    assert said == (
        "the program started an MPI launcher of its own, which refused the option "
        "'oversubscribe' ([mpiexec@vm] unrecognized argument oversubscribe): neither the "
        "sweep's launch line nor --launcher-args gives it; nothing was recorded for this "
        "configuration: sweep the program that launcher runs instead, with --mpiexec naming "
        "its MPI's launcher")
    assert "--launcher-args (or launcher_args)" not in said


@pytest.mark.parametrize("stderr, tokens", [
    (_HYDRA_OVERSUBSCRIBE, _GRETL[:3] + ["--oversubscribe"] + _GRETL[3:]),
    (_HYDRA_REFUSAL, ["/venv/bin/mpiexec", "-n", "1", "--no-such-option", "true"]),
    (_OPEN_MPI_REFUSAL, ["/usr/bin/mpirun.openmpi", "-np", "1", "--bogus=3", "./a"]),
    (_SRUN_REFUSAL, ["srun", "-n", "1", "--bogus", "./a"]),
    (_HYDRA_REFUSAL.replace("unrecognized argument no-such-option", "duplicate -n"),
     _GRETL),  # no option named: the launcher's, as before
])
def test_an_option_the_launch_line_carries_is_the_launchers_to_fix(stderr, tokens):
    assert _error(stderr, tokens).endswith("); nothing was recorded for this configuration: "
                                           "fix --launcher-args (or launcher_args)")


def test_no_refusal_says_nothing():
    assert _error("error: error parsing parameters\n", _GRETL) == ""


@pytest.mark.mpi
def test_a_sweep_of_a_program_whose_own_mpiexec_refuses_names_the_program(tmp_path):
    """The program (not a shell wrapper, which the sweep reads and refuses before it runs)
    starts hydra with Open MPI's --oversubscribe, as gretlcli does."""
    from tests.helpers import hpcds1mpi_exe, mpiexec

    (tmp_path / "own.py").write_text(
        "import subprocess, sys\n"
        "sys.exit(subprocess.run([sys.argv[1], '--oversubscribe', '-np', '2', 'true'])"
        ".returncode)\n")
    proc = subprocess.run(
        [hpcds1mpi_exe(), "sweep", "--command", f"{sys.executable} own.py {mpiexec()}",
         "--label", "own", "--sizes", "1", "--ranks-per-node", "1", "--max-repeats", "1",
         "--mpiexec", mpiexec(), "--out", str(tmp_path / "x.h5"), "--no-progress"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("hpcds1mpi: error: the program started an MPI launcher of its own, "
                           "which refused the option 'oversubscribe' ([mpiexec@"), last
    assert "fix --launcher-args" not in last
