"""Intel MPI's pinning under the sweep and its scripts (s35 tester I1, I3): real Intel MPI runs.

I1: inside a ``--ntasks-per-node=2 -c 1`` job Intel's mpiexec pinned one rank of 2 threads to
``{0}``. I3: the user's own I_MPI_PIN_DOMAIN recorded as "mpiexec default"; ``-bind-to core``
rewritten to ``core:2`` and recorded as binding, which Intel's mpiexec ignores.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from hpcds1mpi.config import Configuration
from hpcds1mpi.launch import launcher_discovery, launchers
from hpcds1mpi.launch.intel_pinning import is_intel, user_pinning, what_pins_do
from tests.intel_mpi import build_hybrid, intel_env, intel_mpi

ONE_BY_TWO, TWO_BY_TWO = Configuration(1, 1, 2), Configuration(1, 2, 2)
#: The hybrid program's line for rank 0, read as the sweep's figure of merit: its CPU count.
CPUS_OF_RANK_0 = r"rank 0 of \d+ threads \d+ cpus (\d+)"


def _intel(args=(), cores=2) -> launchers.Launcher:
    return launchers.local("mpiexec", mpiexec=str(intel_mpi() / "bin" / "mpiexec"),
                           args=args, cores=cores)


def _cpus(tokens: list[str], program: Path, env: dict) -> list[int]:
    """Each rank's CPU count in a real launch of ``program`` by ``tokens``."""
    out = subprocess.run([*tokens, str(program), "1000"], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    return sorted(int(line.split()[-1]) for line in out.stdout.splitlines()
                  if line.startswith("rank "))


def test_intel_mpiexec_is_told_from_its_banner_and_mpich_is_not():
    assert is_intel(launcher_discovery.version_text(str(intel_mpi() / "bin" / "mpiexec")))
    assert not is_intel("HYDRA build details:\n    Version: 4.2.0")
    assert not is_intel(None)
    assert launchers.local("mpiexec", mpiexec=str(Path(sys.executable).parent / "mpiexec")
                           ).binding(ONE_BY_TWO) == "mpiexec default"


def test_the_users_own_pinning_is_read_from_the_environment_and_genv():
    assert user_pinning({"I_MPI_PIN_DOMAIN": "core", "PATH": "/bin"}, ()) == {
        "I_MPI_PIN_DOMAIN": "core"}
    assert user_pinning({"I_MPI_PIN_DOMAIN": "core"}, ("-genv", "I_MPI_PIN_DOMAIN", "4")) == {
        "I_MPI_PIN_DOMAIN": "4"}  # -genv wins, as in Intel's mpiexec
    assert user_pinning({}, ("-genv", "OTHER", "1")) == {}
    assert user_pinning({}, ("-genv", "I_MPI_PIN_DOMAIN=core", "-n", "2")) == {
        "I_MPI_PIN_DOMAIN": "core"}  # hydra's NAME=VALUE form (s35 tester I2)
    assert user_pinning({}, ("-n", "2", "-genv")) == {}
    assert "share" in what_pins_do({"I_MPI_PIN_DOMAIN": "core"})
    assert "not bound" in what_pins_do({"I_MPI_PIN": "off"})
    assert "one each in turn" in what_pins_do({"I_MPI_PIN_PROCESSOR_LIST": "0"})


def test_each_rank_gets_its_threads_cpus_and_the_binding_says_so(monkeypatch):
    monkeypatch.delenv("I_MPI_PIN_DOMAIN", raising=False)
    launcher = _intel()
    assert launcher.tokens(ONE_BY_TWO)[-3:] == ["-genv", "I_MPI_PIN_DOMAIN", "omp"]
    assert launcher.binding(ONE_BY_TWO) == ("mpiexec -genv I_MPI_PIN_DOMAIN omp (Intel MPI: "
                                            "each rank pinned to 2 cpu(s) of its own)")
    assert "OMP_PROC_BIND" not in launcher.environment(ONE_BY_TWO)  # threads move in it
    assert launcher.notes(ONE_BY_TWO) == []
    # I3c: 2 ranks x 2 threads on 2 cores share the domains (Intel gave {0-1} to each)
    assert "share them, oversubscribed" in launcher.binding(TWO_BY_TWO)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs 2 CPUs")
def test_a_real_launch_gives_each_rank_its_threads_cpus(tmp_path, monkeypatch):
    monkeypatch.delenv("I_MPI_PIN_DOMAIN", raising=False)
    program, launcher = build_hybrid(tmp_path), _intel()
    env = {**intel_env(), **launcher.environment(ONE_BY_TWO)}
    assert _cpus(launcher.tokens(ONE_BY_TWO), program, env) == [2]
    one = Configuration(1, 2, 1)
    assert _cpus(launcher.tokens(one), program, {**intel_env(), **launcher.environment(one)}
                 ) == [1, 1]


def test_the_users_own_pin_domain_is_kept_said_and_recorded(monkeypatch):
    monkeypatch.setenv("I_MPI_PIN_DOMAIN", "core")  # I3a: recorded as "mpiexec default"
    launcher = _intel()
    assert "I_MPI_PIN_DOMAIN" not in launcher.tokens(ONE_BY_TWO)
    assert launcher.binding(ONE_BY_TWO) == ("mpiexec with the user's I_MPI_PIN_DOMAIN=core "
                                            "(Intel MPI: each rank on one core, which all its "
                                            "threads share)")
    [note] = launcher.notes(ONE_BY_TWO)
    assert note.startswith("Intel MPI's mpiexec pins ranks by the user's I_MPI_PIN_DOMAIN=core"
                           ", kept (each rank on one core") and "\n" not in note
    assert "OMP_PLACES" not in launcher.environment(ONE_BY_TWO)
    assert launcher.oversubscribed_as() == ("Intel MPI pins them by the user's "
                                            "I_MPI_PIN_DOMAIN=core (each rank on one core, "
                                            "which all its threads share)")


def test_bind_to_is_left_as_given_and_said_to_bind_nothing(monkeypatch):
    monkeypatch.delenv("I_MPI_PIN_DOMAIN", raising=False)
    launcher = _intel(("-bind-to", "core"))  # I3b: was given as core:2 and recorded
    tokens = launcher.tokens(ONE_BY_TWO)
    assert tokens[-2:] == ["-bind-to", "core"] and "core:2" not in tokens
    assert "-genv I_MPI_PIN_DOMAIN omp" in shlex.join(tokens)
    [note] = launcher.notes(ONE_BY_TWO)
    assert "ignores -bind-to core: passed as given, it binds nothing" in note
    assert "-bind-to" not in launcher.binding(ONE_BY_TWO)


def test_a_job_script_for_intel_mpiexec_pins_as_the_sweep_does(monkeypatch):
    from hpcds1mpi.cluster import Cluster

    monkeypatch.delenv("I_MPI_PIN_DOMAIN", raising=False)
    cluster = Cluster(name="", launcher="mpiexec", mpiexec=str(intel_mpi() / "bin" / "mpiexec"))
    script = launchers.for_script("slurm", cluster, 2)
    sweep = _intel().tokens(ONE_BY_TWO)
    held = sweep.index("-ppn")  # the sweep holds its ranks on one node of a wider allocation
    assert script.tokens(ONE_BY_TWO) == sweep[:held] + sweep[held + 2:]  # a job is its nodes
    assert script.tokens(ONE_BY_TWO)[-3:] == ["-genv", "I_MPI_PIN_DOMAIN", "omp"]
    assert script.environment(ONE_BY_TWO) == _intel().environment(ONE_BY_TWO)


@pytest.mark.slurm
def test_a_sweep_inside_a_job_of_one_cpu_per_task_gives_two_threads_two_cpus(slurm, tmp_path):
    """The tester's job: --ntasks-per-node=2 -c 1, 1 rank x 1 and 2 threads under Intel's
    mpiexec; rank 0's CPU count is read as the figure of merit."""
    intel_mpi()
    program = build_hybrid(tmp_path)
    out = tmp_path / "t.h5"
    sweep = [str(Path(sys.executable).parent / "hpcds1mpi"), "sweep", "--command",
             f"{program} 100000", "--label", "hybrid", "--sizes", "1", "--ranks-per-node", "1",
             "--threads", "1,2", "--fom-regex", CPUS_OF_RANK_0, "--time-regex",
             r"time ([0-9.]+) s", "--max-repeats", "1", "--min-repeats", "1", "--mpiexec",
             str(intel_mpi() / "bin" / "mpiexec"), "--out", str(out), "--no-progress"]
    script = tmp_path / "job.sbatch"
    script.write_text("#!/bin/bash\n" + "".join(
        f"export {k}={shlex.quote(v)}\n" for k, v in intel_env({"PATH": os.environ["PATH"]}).items()) +
        f"cd {tmp_path}\n{shlex.join(sweep)}\n")
    log = tmp_path / "job.out"
    _, state, text = slurm.run_job(lambda: slurm.sbatch(
        script, "-N1", "--ntasks-per-node=2", "-c", "1", "-o", str(log)), log, timeout=240)
    assert state == "COMPLETED", text
    from hpcds1mpi.records import telemetry

    rows = telemetry.read_runs(out).set_index("threads")
    assert rows.loc[2, "status"] == "ok", text
    assert rows.loc[2, "fom"] == 2, text  # {0} before: one CPU for two threads
    assert rows.loc[1, "fom"] == 1, text
    assert "each rank pinned to 2 cpu(s) of its own" in rows.loc[2, "binding"]


@pytest.mark.parametrize("pins, per_node, threads, fits", [
    ({"I_MPI_PIN_DOMAIN": "core"}, 1, 2, False),  # s35 tester I2: site_pincore rewritten
    ({"I_MPI_PIN_DOMAIN": "core"}, 2, 1, None),
    ({"I_MPI_PIN_DOMAIN": "2:compact"}, 1, 2, None),
    ({"I_MPI_PIN_DOMAIN": "1:scatter"}, 1, 4, False),
    ({"I_MPI_PIN_DOMAIN": "omp"}, 1, 8, None),
    ({"I_MPI_PIN_DOMAIN": "auto"}, 1, 8, None),
    ({"I_MPI_PIN_DOMAIN": "socket"}, 4, 2, None),
    ({"I_MPI_PIN_DOMAIN": "[3,c]"}, 2, 2, None),  # {0,1} and {2,3}
    ({"I_MPI_PIN_DOMAIN": "[3,c]"}, 4, 1, False),  # 4 ranks on 2 domains
    ({"I_MPI_PIN_DOMAIN": "[1,2]"}, 1, 2, False),
    ({"I_MPI_PIN_DOMAIN": "[zz]"}, 1, 2, "unread"),
    ({"I_MPI_PIN_DOMAIN": "$D"}, 1, 2, "unread"),
    ({"I_MPI_PIN_PROCESSOR_LIST": "0"}, 2, 1, False),  # site_intel2: both ranks on cpu 0
    ({"I_MPI_PIN_PROCESSOR_LIST": "0,1"}, 1, 2, None),  # site_pinlist: {0-1}
    ({"I_MPI_PIN_PROCESSOR_LIST": "0,2-3"}, 2, 2, False),
    ({"I_MPI_PIN_PROCESSOR_LIST": "allcores:map=scatter"}, 2, 2, None),
    ({"I_MPI_PIN_PROCESSOR_LIST": "0", "I_MPI_PIN_DOMAIN": "omp"}, 2, 1, None),  # domain wins
    ({"I_MPI_PIN": "no", "I_MPI_PIN_DOMAIN": "core"}, 1, 2, None),
    ({"I_MPI_PIN_ORDER": "scatter"}, 1, 2, None),
])
def test_a_users_pinning_is_told_to_fit_a_layout_or_not(pins, per_node, threads, fits):
    from hpcds1mpi.launch.intel_pinning import layout_fit

    fit = layout_fit(pins, per_node, threads)
    if fits is None:
        assert fit is None
    else:
        assert fit.fits is (None if fits == "unread" else False), fit
        assert fit.name == ("I_MPI_PIN_DOMAIN" if "I_MPI_PIN_DOMAIN" in pins
                            else "I_MPI_PIN_PROCESSOR_LIST")
