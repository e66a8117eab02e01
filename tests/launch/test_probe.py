"""The 2-rank launch probe: real launchers, and a launcher that starts independent copies."""

from __future__ import annotations

import os

import pytest

from hpcds1mpi.errors import LaunchError
from hpcds1mpi.launch import launchers, probe
from tests.helpers import mpiexec, system_program


def _tokens(path: str) -> list[str]:
    return launchers.local("mpiexec", mpiexec=path).tokens(probe.probe_config())


def test_open_mpis_mpirun_starts_one_job_of_two():
    line = probe.run_probe(_tokens(system_program("mpirun.openmpi")), dict(os.environ),
                           "openmpi")
    assert "2 ranks joined through ompi" in line


def test_hydra_starts_one_job_of_two_for_mpich_and_unknown_programs():
    for family in ("mpich", None):
        assert "joined through pmi" in probe.run_probe(_tokens(mpiexec()), dict(os.environ),
                                                       family)


def test_hydra_is_no_wire_up_for_open_mpi():
    with pytest.raises(LaunchError, match="does not start 2 ranks as one job of Open MPI"):
        probe.run_probe(_tokens(mpiexec()), dict(os.environ), "openmpi")


def test_a_launcher_of_independent_copies_is_caught(tmp_path):
    fake = tmp_path / "copies"
    # Starts "-n N" copies of the program, each alone: what a foreign mpiexec does to it.
    fake.write_text('#!/bin/sh\nn=$2; shift 2\ni=0\nwhile [ $i -lt $n ]; do "$@"; '
                    'i=$((i+1)); done\n')
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI", "OMPI"))}
    with pytest.raises(LaunchError, match=r"not start 2 ranks as one job.*probe saw: nothing; nothing"):
        probe.run_probe([str(fake), "-n", "2"], env, None)


def test_a_failing_launch_is_an_error_before_anything_runs():
    with pytest.raises(LaunchError, match="probe failed"):
        probe.run_probe([mpiexec(), "--no-such-option"], dict(os.environ), None)


def test_a_failed_probe_says_the_launchers_help_title_not_its_rule(tmp_path):
    """Was (s29 tester A5): "probe failed (exit 1: -----...)", the help text's last line."""
    from tests.measure.test_program_launch import OUTPUTS

    fake = tmp_path / "mpirun"
    fake.write_text(f"#!/bin/sh\ncat {OUTPUTS / 'openmpi-run-as-root.stderr'} >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(LaunchError, match=r"probe failed \(exit 1: mpirun.openmpi has detected "
                                          r"an attempt to run as root\.\); nothing"):
        probe.run_probe([str(fake), "-n", "2"], dict(os.environ), None)


def test_judge_reads_every_wire_up():
    def line(ompi="", pmi="", pmix="", slurm=""):
        return f"hpcds1mpi-probe ompi={ompi} pmi={pmi} pmix={pmix} slurm={slurm}"

    two = "\n".join([line(pmi="0:2", slurm="0:2"), line(pmi="1:2", slurm="1:2")])
    assert probe.judge(probe.parse(two), "mpich")[0] == "pmi"
    assert probe.judge(probe.parse(two), "openmpi")[0] is None
    pmix = "\n".join([line(pmix="0:ns"), line(pmix="1:ns")])
    assert probe.judge(probe.parse(pmix), "openmpi")[0] == "pmix"
    # srun --mpi=none: two tasks, no MPI wire-up
    bare = "\n".join([line(slurm="0:2"), line(slurm="1:2")])
    assert probe.judge(probe.parse(bare), None)[0] is None
    singletons = "\n".join([line(pmi="0:1"), line(pmi="0:1")])
    assert probe.judge(probe.parse(singletons), None)[0] is None
    assert probe.judge(probe.parse(line(pmi="0:2")), None)[0] is None  # one rank printed
    # a launcher's labels before each line (srun -l, mpirun --tag-output): s30 verifier V2 D4
    labelled = "\n".join([f"0: {line(pmi='0:2')}", f"[1,1]<stdout>:{line(pmi='1:2')}"])
    assert probe.judge(probe.parse(labelled), "mpich")[0] == "pmi"


@pytest.mark.slurm
def test_srun_pmi2_is_one_job_and_mpi_none_is_not(slurm):
    env = dict(slurm.env)
    pmi2 = launchers.Srun("pmi2").tokens(probe.probe_config())
    assert "joined through pmi" in probe.run_probe(pmi2, env, "mpich", timeout=120)
    with pytest.raises(LaunchError, match="does not start 2 ranks as one job"):
        probe.run_probe(launchers.Srun("none").tokens(probe.probe_config()), env, "mpich",
                        timeout=120)


def test_the_advice_names_what_was_not_tried(tmp_path):
    """Open MPI under srun --mpi=pmi2 was told "srun --mpi=pmix/pmi2" (s25 tester B 5)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    srun = bin_dir / "srun"  # two PMI-2 ranks of one job, as srun --mpi=pmi2 starts them
    srun.write_text('#!/bin/sh\nwhile [ $# -gt 0 ]; do case "$1" in -c) shift 2;; -*) shift;; '
                    '*) break;; esac; done\nPMI_RANK=0 PMI_SIZE=2 "$@"; PMI_RANK=1 PMI_SIZE=2 '
                    '"$@"\n')
    srun.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI", "OMPI"))}

    def advice(mpi: str, family: str | None) -> str:
        tokens = [str(srun), *launchers.Srun(mpi).tokens(probe.probe_config())[1:]]
        with pytest.raises(LaunchError) as caught:
            probe.run_probe(tokens, env, family)
        return str(caught.value).split("nothing was measured: ", 1)[1]

    ompi = advice("pmi2", "openmpi")
    assert ompi.startswith("pass --mpi pmix, or the program's own launcher --mpiexec")
    assert "pmi2" not in ompi
    assert advice("pmix", "openmpi").startswith("pick the program's own launcher: --mpiexec")
    assert probe.untried([mpiexec(), "-n", "2"], env, "openmpi").startswith(
        "pick the program's own launcher: --mpiexec ")
    assert probe.untried(["srun", "--mpi=pmi2"], env, "mpich").startswith("pass --mpi pmix,")
    assert probe.untried(["srun", "--mpi=none"], env, None).startswith(
        "pass --mpi pmix or --mpi pmi2,")


def test_a_probe_through_a_broken_hydra_names_its_cause_not_its_last_line(tmp_path):
    """s36 tester M5: hydra without its hydra_pmi_proxy beside it; the probe said hydra's last
    line, "process manager error waiting for completion", not the execvp error above it
    (Debian's MPICH 4.0 hydra exits; the wheel's 5.0 waits for the proxy)."""
    import shutil

    debian = shutil.which("mpiexec.hydra", path="/usr/bin")  # not the wheel's, first on PATH
    if debian is None:
        pytest.skip("Debian's MPICH (mpich) not installed")
    broken = tmp_path / "mpiexec"  # hydra's mpiexec alone: its proxy is looked up beside it
    broken.symlink_to(os.path.realpath(debian))
    with pytest.raises(LaunchError, match=r"probe failed \(exit \d+: \[mpiexec@[^]]+\] execvp "
                       r"error on file .*hydra_pmi_proxy \(No such file or directory\)\); "):
        probe.run_probe([str(broken), "-n", "2"], dict(os.environ), "mpich", timeout=20)


@pytest.mark.slurm
def test_a_probe_waiting_for_slurms_nodes_says_so_and_what_to_do(slurm, tmp_path):
    """s36 tester M6: with the nodes held by another job, the probe ended with "did not end
    within 60 s; nothing was measured", srun's "queued and waiting for resources" dropped."""
    holder = slurm.cmd(["sbatch", "--parsable", "-N2", "--exclusive", "--time=2", "-o",
                        "/dev/null", "--job-name=hpcds-m6-hold", "--wrap", "sleep 60"]
                       ).stdout.strip()
    try:
        for _ in range(100):  # until it runs: then the probe's job can only wait
            if slurm.cmd(["squeue", "-h", "-j", holder, "-o", "%T"]).stdout.strip() == "RUNNING":
                break
            import time

            time.sleep(0.2)
        env = {k: v for k, v in slurm.env.items() if not k.startswith("SLURM_") or
               k == "SLURM_CONF"}
        with pytest.raises(LaunchError) as caught:
            probe.launch_script(["srun", "-N2", "-n2", "--job-name=hpcds-m6-probe"],
                                probe.PROBE_SCRIPT, env, "2-rank launch probe", 4)
    finally:
        slurm.cmd(["scancel", holder], check=False)
    message = str(caught.value)
    assert "\n" not in message and "did not end within 4 s (srun: job " in message
    assert "queued and waiting for resources): Slurm had not given it the nodes yet, so " \
           "nothing was measured; see what holds them (squeue), or run the sweep inside an " \
           "allocation that has them (salloc)" in message


@pytest.mark.parametrize("tail", [b"some error line\n\0", b"some error line\n\0\0",
                                  b"some error line\0\n", b"some error line\n\xff\0"])
def test_a_failed_probe_under_prterun_says_its_line_not_its_closing_nul(tmp_path, tail):
    """s40 review G1: Open MPI 5's prterun ends its stderr with its C string's NUL; the sweep's
    reason dropped it (s40 tester A1), the probe's did not: "(exit 1: \\x00)". A byte that is
    no UTF-8 is read too (it was decoded strictly)."""
    (tmp_path / "err").write_bytes(tail)
    fake = tmp_path / "prterun"
    fake.write_text(f"#!/bin/sh\ncat {tmp_path / 'err'} >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(LaunchError) as caught:
        probe.run_probe([str(fake), "-n", "2"], dict(os.environ), None)
    message = str(caught.value)
    assert "\0" not in message and "\\x00" not in message
    assert "probe failed (exit 1: " in message
    assert ("some error line" in message) == (b"\xff" not in tail), message
