"""``commands/tune_launch_choice``: how tune's trials are launched, ``--mpi`` included."""

from __future__ import annotations

import os
import sys

import pytest

from hpcds1mpi.errors import ConfigError
from tests.helpers import run_cli


@pytest.mark.parametrize("value, said", [("a;b", "has characters not allowed"),
                                         ("", "--mpi is empty")])
def test_a_bad_mpi_is_refused_in_one_line_before_anything_runs(tmp_path, value, said):
    """s42: tune had no ``--mpi`` (exit 2 "no such option"); now it takes the sweep's, with
    the sweep's checks."""
    for mode in (["--kernel", "gemm"], ["--program", "./app {size}"]):
        res = run_cli(["tune", *mode, "--size", "64", "--mpi", value, "--out", "t.h5"],
                      cwd=tmp_path, timeout=120)
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 2 and len(lines) == 1 and said in lines[0], res.stderr
        assert not (tmp_path / "t.h5").exists()


@pytest.mark.slurm
def test_a_kernels_mpi_that_srun_does_not_have_is_refused_naming_its_plugins(slurm, monkeypatch):
    """It runs ``srun --mpi=list``: needs the test Slurm, not only srun on PATH (s43 review R18:
    it failed where srun was installed but SLURM_CONF was not exported)."""
    from hpcds1mpi.commands.tune_launch_choice import check_kernel_plugin

    monkeypatch.setenv("SLURM_CONF", slurm.conf)

    with pytest.raises(ConfigError, match=r"srun has no --mpi plugin 'pmix_v99'; `srun "
                                          r"--mpi=list` names .*pmi2"):
        check_kernel_plugin("pmix_v99")


@pytest.mark.slurm
def test_a_kernels_plugin_its_mpi_cannot_use_is_refused_in_tunes_own_words(slurm, monkeypatch):
    """s43 review R5: tune's kernel refusal was the sweep's copy and began "sweep --launch:";
    now the one launcher check, worded for tune."""
    from hpcds1mpi.commands.tune_launch_choice import check_kernel_plugin
    from hpcds1mpi.launch.own_launcher import mpi4py_mpi

    if mpi4py_mpi().family not in ("mpich", "openmpi"):
        pytest.skip("this Python's mpi4py is not read here")
    monkeypatch.setenv("SLURM_CONF", slurm.conf)
    with pytest.raises(ConfigError) as refused:
        check_kernel_plugin("none")
    line = str(refused.value)
    assert line.startswith("tune: the kernels run this Python's mpi4py, linked against ")
    assert "srun --mpi=none (--mpi none) gives its ranks no wire-up: pass --mpi " in line


def test_tunes_help_names_mpi():
    res = run_cli(["tune", "--help"], timeout=120)
    assert res.returncode == 0 and "--mpi TEXT" in res.stdout


def test_a_space_beyond_the_nodes_the_launcher_reaches_is_refused_before_any_trial(tmp_path,
                                                                                   monkeypatch):
    """s35 fixer L3: tune's pre-flight never compared its space's nodes with those the
    launcher reaches (the sweep's check_nodes_reachable): a 2-node space on this one machine
    would have failed, or run on one host, one trial at a time."""
    import pytest

    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.commands.tune_launch_choice import preflight_trials, program_launch
    from hpcds1mpi.config import Configuration
    from hpcds1mpi.decide.tune_space import Space
    from hpcds1mpi.errors import ConfigError
    from tests.test_places import _without_jobs

    for name in set(os.environ) - set(_without_jobs()):
        monkeypatch.delenv(name)
    program = f"{sys.executable} -c pass {{size}}"
    choice, _ = program_launch(program, launcher="mpiexec", mpi=None, cluster_file=None,
                               partition=None, given=dict.fromkeys(
                                   ("--mpiexec", "--launcher-args", "--time-regex",
                                    "--fom-regex", "--ranks-regex", "--fail-regex",
                                    "--output-file", "--workdir", "--setup")))
    part = Partition("local", cores_per_node=2, memory_gb=4, max_nodes=2)
    space = Space([Configuration(1, 1, 1), Configuration(2, 1, 1)])
    said: list[str] = []
    with pytest.raises(ConfigError) as refused:
        preflight_trials(choice, program, 1, space.configs[0], space, part, None,
                         said.append, None)
    assert str(refused.value) == (
        "the tune's space has configurations on 2 nodes but this machine, outside any "
        "allocation, is 1 node: run tune inside `salloc -N 2` (or your cluster's allocation "
        "of 2 nodes), or give --max-nodes 1") and said == []  # no probe launched first


def test_mpi_is_refused_where_the_trials_launcher_is_not_srun():
    """s44 review R3: the one rule before --submit and in the run (``kind``: what the trials
    run under where neither the command line nor the launch choice names a launcher)."""
    from hpcds1mpi.commands.tune_launch_choice import refuse_mpi_under_chosen_launcher as refuse
    from hpcds1mpi.launch.preflight import LaunchChoice

    with pytest.raises(ConfigError, match=r"--mpi pmix .*: --launcher mpiexec starts the ranks"):
        refuse("pmix", "mpiexec", None, "srun")
    with pytest.raises(ConfigError, match=r"the cluster file's launcher, mpiexec, starts"):
        refuse("pmix", None, LaunchChoice("mpiexec"), "srun")
    refuse("pmix", None, None, "srun")  # a submitted job's trials: srun
    refuse("pmix", None, LaunchChoice("srun"), "mpiexec")  # the choice's srun
    refuse(None, "mpiexec", None, "mpiexec")  # no --mpi: nothing to refuse
