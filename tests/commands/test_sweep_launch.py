"""``sweep --launch N`` starts the kernel sweep with the user's launcher options, the cluster
file's ``launcher_args`` included, as a ``--command`` sweep does (s41, s42 left)."""

from __future__ import annotations

import pytest

from tests.helpers import run_cli

SITE = ('[clusters.lab]\n{keys}\n[clusters.lab.partitions.p]\ncores_per_node = 4\n'
        'memory_gb = 8\nmax_nodes = 1\n')
SWEEP = ["sweep", "--kernel", "gemm", "--sizes", "32", "--ranks-per-node", "2", "--threads",
         "1", "--precisions", "fp64", "--min-time", "0.01", "--max-repeats", "2",
         "--no-progress", "--launch", "2"]


@pytest.mark.parametrize("keys, given, option", [
    ('launcher_args = "-np 2"', [], "the cluster file's launcher_args '-np 2'"),
    ('launcher = "srun"\nlauncher_args = "--ntasks=4"', [],
     "the cluster file's launcher_args '--ntasks=4'"),
    ("", ["--launcher-args", "-n 3"], "--launcher-args '-n 3'"),
])
def test_a_rank_count_in_the_launcher_options_is_refused_naming_launch(tmp_path, keys, given,
                                                                       option):
    """The sweep owns the rank count (--launch N): refused in one line naming the option."""
    file, out = tmp_path / "lab.toml", tmp_path / "k.h5"
    file.write_text(SITE.format(keys=keys))
    proc = run_cli([*SWEEP, "--cluster", str(file), "--out", str(out), *given], timeout=120)
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line == (f"hpcds1mpi: error: {option} sets the rank count, which sweep --launch N "
                    "sets (N ranks, each configuration's from --nodes x --ranks-per-node); "
                    f"remove it from {option.split(' ' + chr(39))[0]}; nothing was launched")
    assert not out.exists()


@pytest.mark.mpi
@pytest.mark.parametrize("from_file", [True, False])
def test_the_launcher_options_start_the_kernel_sweep(tmp_path, from_file):
    """The cluster file's launcher_args (or --launcher-args) reach the launch: hydra's
    -prepend-rank prefixes every line the ranks print with [rank]; before, the file's were read
    and dropped, and --launcher-args was refused as a --command option."""
    from hpcds1mpi.launch.launchers import local
    from hpcds1mpi.records import telemetry

    if local("mpiexec").name != "mpiexec" or "Open MPI" in (_version() or ""):
        pytest.skip("needs hydra's mpiexec beside this Python")
    file, out = tmp_path / "lab.toml", tmp_path / "k.h5"
    file.write_text(SITE.format(keys='launcher_args = "-prepend-rank"' if from_file else ""))
    given = [] if from_file else ["--launcher-args", "-prepend-rank"]
    proc = run_cli([*SWEEP, "--cluster", str(file), "--out", str(out), *given], timeout=300,
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert any(line.startswith("[0] hpcds1mpi sweep: 1 configuration into")
               for line in proc.stderr.splitlines()), proc.stderr[-2000:]
    assert len(telemetry.read_runs(out)) == 1


def _version() -> str | None:
    from hpcds1mpi.launch.launcher_discovery import mpiexec_path, version_text

    return version_text(mpiexec_path())


def test_launcher_args_are_the_supervisors_not_passed_to_the_sweep_it_launches():
    from hpcds1mpi.commands.sweep import _strip_launch

    argv = ["hpcds1mpi", "sweep", "--launch", "2", "--launcher-args", "-prepend-rank",
            "--kernel", "gemm", "--launcher-args=-l", "--out", "x.h5"]
    assert _strip_launch(argv) == ["--kernel", "gemm", "--out", "x.h5"]


def test_launcher_args_on_a_kernel_sweep_without_launch_name_launch_as_well(tmp_path):
    """It said "applies to --command sweeps only: ... give --command" though --launch N takes
    it too (s43 review R16)."""
    out = tmp_path / "k.h5"
    proc = run_cli(["sweep", "--kernel", "gemm", "--sizes", "64", "--launcher-args",
                    "--bind-to core", "--out", str(out)], timeout=120)
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line == ("hpcds1mpi: error: --launcher-args applies to --command or --launch N "
                    "sweeps: drop it, or give --launch N (the kernels) or --command")
    assert not out.exists()
