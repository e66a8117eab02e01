"""``decide/tune_launch``: tune --model launches a program as the model's sweep did."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from tests.helpers import run_cli
from tests.commands.test_tune import CLUSTER, sweep_timed_app, train_for_tune  # tune's own helpers

SRUN_PMIX = {"launcher": "srun", "command": "srun", "flavour": "Srun", "args": [], "mpi": "pmix"}


def _bundle(launched_with: dict) -> SimpleNamespace:
    levels = SimpleNamespace(external=True, launched_with=launched_with, workload="dolfinx")
    return SimpleNamespace(workloads={"dolfinx"}, _measured_levels={"dolfinx": levels})


def _launch(bundle, *, launcher=None, given=None, submit=False, cluster_file=None):
    """(the choice tune's trials use, the lines said) for ``dolfinx-scaling-test {size}``."""
    from hpcds1mpi.decide.tune_launch import model_launch
    from hpcds1mpi.launch.preflight import LaunchChoice

    given = given or {}
    choice = LaunchChoice.of(launcher=launcher, mpi=given.get("--mpi"),
                             mpiexec=given.get("--mpiexec"),
                             launcher_args=given.get("--launcher-args"),
                             cluster_file=cluster_file)
    said: list[str] = []
    taken = model_launch(choice, bundle, "dolfinx", "dolfinx-scaling-test --ndofs {size}",
                         launcher, given, cluster_file, None, submit, said.append)
    return taken, said


@pytest.fixture
def in_allocation(monkeypatch):
    from hpcds1mpi.launch import launcher_discovery

    monkeypatch.setattr(launcher_discovery, "in_slurm", lambda env=None: True)


def test_tune_in_an_allocation_takes_the_srun_plugin_the_models_sweep_ran(in_allocation):
    """s42 tester E5: a program swept under ``srun --mpi=pmix`` (recommend's script launches it
    so) was tuned under pmi2 in the same allocation, and refused; now tune takes pmix from the
    model, said in one line."""
    taken, said = _launch(_bundle(SRUN_PMIX))
    assert taken.mpi == "pmix" and taken.launcher is None
    assert said == ["each trial of dolfinx launches with srun --mpi=pmix, as the program's "
                    "sweep ran it (recorded in the model; give --launcher, --mpi, --mpiexec "
                    "or --launcher-args, or a --cluster file's launcher / mpi, to launch "
                    "otherwise)"]
    taken, said = _launch(_bundle(SRUN_PMIX), launcher="srun")
    assert taken.mpi == "pmix" and taken.launcher == "srun" and len(said) == 1


@pytest.mark.parametrize("how", [dict(launcher="mpiexec"),  # another kind: the user's
                                 dict(given={"--launcher-args": "--exclusive"})])
def test_the_users_launcher_wins_over_the_models(in_allocation, how):
    taken, said = _launch(_bundle(SRUN_PMIX), **how)
    assert taken.mpi == "pmi2" and said == []


def test_a_cluster_files_explicit_mpi_wins_over_the_models_even_pmi2(in_allocation, tmp_path):
    """s42: ``mpi = "pmi2"`` read as naming none (pmi2 being the default), so the model's
    recorded pmix won over the plugin the user wrote; now any ``mpi`` the file sets wins."""
    for plugin in ("pmi2", "none"):
        site = tmp_path / f"{plugin}.toml"
        site.write_text(f'[cluster]\nmpi = "{plugin}"\n' + CLUSTER.replace("clusters.box.", ""))
        taken, said = _launch(_bundle(SRUN_PMIX), cluster_file=str(site))
        assert taken.mpi == plugin and said == [], (plugin, said)
    unset = tmp_path / "unset.toml"  # no mpi key: the model's, as before
    unset.write_text(CLUSTER)
    taken, said = _launch(_bundle(SRUN_PMIX), cluster_file=str(unset))
    assert taken.mpi == "pmix" and len(said) == 1


def test_tunes_mpi_option_wins_over_the_cluster_file_and_the_model(in_allocation, tmp_path):
    """s42: tune had no ``--mpi``; it wins over a cluster file's ``mpi`` and the model's."""
    site = tmp_path / "c.toml"
    site.write_text('[cluster]\nmpi = "pmix"\n' + CLUSTER.replace("clusters.box.", ""))
    for cluster_file in (None, str(site)):
        taken, said = _launch(_bundle(SRUN_PMIX), given={"--mpi": "none"},
                              cluster_file=cluster_file)
        assert taken.mpi == "none" and said == []


def test_srun_settings_are_taken_only_where_the_trials_launch_with_srun(monkeypatch):
    from hpcds1mpi.launch import launcher_discovery

    monkeypatch.setattr(launcher_discovery, "in_slurm", lambda env=None: False)
    taken, said = _launch(_bundle(SRUN_PMIX))
    assert taken.mpi == "pmi2" and said == []
    taken, said = _launch(_bundle(SRUN_PMIX), submit=True)  # the job's tune runs srun
    assert taken.mpi == "pmix" and len(said) == 1


def test_a_model_without_a_recorded_launcher_leaves_the_choice(in_allocation):
    taken, said = _launch(_bundle({}))
    assert taken.mpi == "pmi2" and said == []
    taken, said = _launch(SimpleNamespace(workloads=set(), _measured_levels={}))
    assert taken.mpi == "pmi2" and said == []


def test_an_mpirun_swept_program_is_not_moved_off_srun_inside_an_allocation(in_allocation):
    """srun reaches the allocation's nodes, mpiexec this node only: the kind stays tune's."""
    from tests.helpers import system_program

    recorded = {"launcher": "mpiexec", "command": system_program("mpirun.openmpi"),
                "flavour": "OpenMpiMpirun", "args": [], "mpi": ""}
    taken, said = _launch(_bundle(recorded))
    assert taken.mpiexec is None and said == []


def test_tune_launcher_mpiexec_takes_the_mpiexec_the_models_sweep_ran(tmp_path):
    """A program swept under Open MPI's ``mpirun`` and tuned with ``--launcher mpiexec``
    (no ``--mpiexec``) ran under whichever mpiexec came first on PATH; now under the model's,
    said; ``--mpiexec`` wins."""
    import h5py

    from tests.helpers import system_program

    openmpi = system_program("mpirun.openmpi")
    app, reading = sweep_timed_app(tmp_path, "--mpiexec", openmpi)
    base = train_for_tune(tmp_path, app, reading)
    res = run_cli([*base, "--out", "t.h5"], cwd=tmp_path, timeout=240)
    assert res.returncode == 0, res.stderr[-2000:]
    assert (f"tune: each trial of app launches with {openmpi}, the mpiexec the program's "
            "sweep ran it with (recorded in the model; give --launcher, --mpi, --mpiexec "
            "or --launcher-args") in res.stderr, res.stderr
    with h5py.File(tmp_path / "t.h5") as f:
        assert json.loads(f.attrs["launch"])["command"] == openmpi
    res = run_cli([*base, "--mpiexec", openmpi, "--out", "u.h5"], cwd=tmp_path, timeout=240)
    assert res.returncode == 0 and "each trial of" not in res.stderr, res.stderr[-2000:]
