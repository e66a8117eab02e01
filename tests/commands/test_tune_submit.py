"""``tune --submit``: the job script it writes and sbatches, with tune's own arguments."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hpcds1mpi.commands.tune import command as tune
from hpcds1mpi.commands.tune_submit import tune_args
from tests.commands.test_tune import CLUSTER
from tests.helpers import hpcds1mpi_exe


def test_submit_without_sbatch_is_one_line(tmp_path):
    (tmp_path / "c.toml").write_text(CLUSTER)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env["PATH"] = str(Path(sys.executable).parent)  # no sbatch here
    res = subprocess.run([hpcds1mpi_exe(), "tune", "--kernel", "gemm", "--size", "64", "--out",
                          "t.h5", "--cluster", "c.toml", "--submit"], capture_output=True,
                         text=True, timeout=60, env=env, cwd=tmp_path)
    assert res.returncode == 1  # sbatch missing: runtime (errors.py)
    assert res.stderr.strip().count("\n") == 0 and "sbatch not found" in res.stderr


def _fake_sbatch(tmp_path) -> dict:
    """An environment whose sbatch copies the script to submitted.sbatch and says job 4242."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text("#!/bin/sh\ncp \"$2\" submitted.sbatch\necho 4242\n")
    (bin_dir / "sbatch").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env["PATH"] = f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin"
    return env


def test_submit_renders_the_tune_template_and_sbatches_it(tmp_path):
    """--submit writes the script through the one renderer (jobscripts/tune.sbatch.j2)."""
    (tmp_path / "c.toml").write_text(CLUSTER)
    env = _fake_sbatch(tmp_path)
    res = subprocess.run([hpcds1mpi_exe(), "tune", "--kernel", "gemm", "--size", "64", "--out",
                          "t.h5", "--cluster", "c.toml", "--budget", "2", "--submit"],
                         capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "wrote hpcds1mpi-tune-gemm.sbatch; submitted tune as Slurm job 4242" in res.stdout
    lines = (tmp_path / "submitted.sbatch").read_text().splitlines()
    assert lines[:7] == ["#!/bin/bash", "#SBATCH --job-name=hpcds1mpi-tune-gemm",
                         "#SBATCH --partition=debug", "#SBATCH --nodes=1",
                         "#SBATCH --ntasks-per-node=2", "#SBATCH --cpus-per-task=1",
                         "#SBATCH --time=00:26:00"]
    assert lines[-1].endswith("hpcds1mpi tune --kernel gemm --size 64 --out t.h5 --cluster "
                              "c.toml --budget 2")


def test_submit_keeps_a_file_of_the_users_by_the_scripts_name(tmp_path):
    """A file named like the tune script that hpcds1mpi did not write is kept (was: replaced
    by the script, the user's notes lost); --force replaces it, a rerun replaces its own."""
    (tmp_path / "c.toml").write_text(CLUSTER)
    env = _fake_sbatch(tmp_path)
    mine = tmp_path / "hpcds1mpi-tune-gemm.sbatch"
    mine.write_text("my own notes\n")
    def submit(*extra):
        return subprocess.run([hpcds1mpi_exe(), "tune", "--kernel", "gemm", "--size", "64",
                               "--out", "t.h5", "--cluster", "c.toml", "--submit", *extra],
                              capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)

    res = submit()
    assert res.returncode == 2 and "pass --force" in res.stderr, res.stderr
    assert mine.read_text() == "my own notes\n" and not (tmp_path / "submitted.sbatch").exists()
    assert submit("--force").returncode == 0 and "my own notes" not in mine.read_text()
    res = submit()  # its own script now: a rerun replaces it
    assert res.returncode == 0, res.stderr
    assert "--force" not in (tmp_path / "submitted.sbatch").read_text()


def test_submit_carries_the_sites_settings_and_caps_nodes_at_the_partition(tmp_path):
    """The tune job gets the cluster file's account and modules like every other script, and
    --max-nodes above the partition asks for the partition's nodes (not a --nodes error)."""
    (tmp_path / "c.toml").write_text('[clusters.box]\naccount = "proj42"\nmodules = ["mpi/4"]\n'
                                     + CLUSTER)
    env = _fake_sbatch(tmp_path)
    res = subprocess.run([hpcds1mpi_exe(), "tune", "--kernel", "gemm", "--size", "64", "--out",
                          "t.h5", "--cluster", "c.toml", "--max-nodes", "99", "--submit"],
                         capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    text = (tmp_path / "submitted.sbatch").read_text()
    assert "#SBATCH --account=proj42" in text and "module load mpi/4" in text
    assert "#SBATCH --nodes=1" in text


def test_the_job_runs_tune_with_its_arguments_but_submit_and_force():
    argv = ["/venv/bin/hpcds1mpi", "tune", "--program", "./scf {size}", "--force",
            "--fail-regex", "SCF run NOT converged", "--submit", "--out", "t.h5"]
    assert tune_args(argv, tune.params) == ["--program", "./scf {size}", "--fail-regex",
                               "SCF run NOT converged", "--out", "t.h5"]


def test_the_submitted_tune_of_a_program_keeps_its_fail_regex(tmp_path):
    """Each trial of the job is read as here: a run that did not converge is failed there too."""
    (tmp_path / "c.toml").write_text(CLUSTER)
    env = _fake_sbatch(tmp_path)
    app = tmp_path / "scf.sh"
    app.write_text("#!/bin/sh\necho 'time: 0.1 s'\n")
    app.chmod(0o755)
    res = subprocess.run([hpcds1mpi_exe(), "tune", "--program", f"{app} {{size}}", "--label",
                          "scf", "--size", "8", "--out", "t.h5", "--cluster", "c.toml",
                          "--time-regex", r"time: (\S+) s", "--fail-regex",
                          "SCF run NOT converged", "--submit"],
                         capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "submitted tune as Slurm job 4242" in res.stdout
    last = (tmp_path / "submitted.sbatch").read_text().splitlines()[-1]
    assert last.endswith(f"hpcds1mpi tune --program '{app} {{size}}' --label scf --size 8 "
                         "--out t.h5 --cluster c.toml --time-regex 'time: (\\S+) s' "
                         "--fail-regex 'SCF run NOT converged'"), last


def test_a_value_that_reads_submit_or_force_is_kept_with_its_option():
    """s29 tester H6: every word "--submit" / "--force" was dropped, option values too."""
    argv = ["hpcds1mpi", "tune", "--fail-regex", "--submit", "--label=--force", "--force",
            "--time-regex", "--force", "--budget", "2", "--submit", "--", "--submit"]
    assert tune_args(argv, tune.params) == ["--fail-regex", "--submit", "--label=--force", "--time-regex",
                               "--force", "--budget", "2", "--", "--submit"]


def test_a_fail_regex_of_submit_reaches_the_job_as_its_pattern(tmp_path):
    """The tester's command: the job line read ``--fail-regex --budget 2``, so the job would
    have taken "--budget" as the pattern and run the default budget."""
    (tmp_path / "c.toml").write_text(CLUSTER)
    (tmp_path / "ok.py").write_text("print('time: 0.1 s')\n")
    env = _fake_sbatch(tmp_path)
    res = subprocess.run([hpcds1mpi_exe(), "tune", "--program", "python ok.py {size}", "--label",
                          "y", "--size", "1", "--out", "t.h5", "--cluster", "c.toml",
                          "--fail-regex", "--submit", "--budget", "2", "--submit"],
                         capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    last = (tmp_path / "submitted.sbatch").read_text().splitlines()[-1]
    assert last.endswith("hpcds1mpi tune --program 'python ok.py {size}' --label y --size 1 "
                         "--out t.h5 --cluster c.toml --fail-regex --submit --budget 2"), last


def test_submit_with_no_cluster_file_names_no_partition_and_sbatch_takes_it(tmp_path, slurm):
    """s34 tester U4: with no --cluster (and no allocation) the partition is this machine,
    'local', and the script said `#SBATCH --partition=local`: "Invalid partition name
    specified". Now it names none, as recommend's script does, and says so once."""
    env = _fake_sbatch(tmp_path)
    res = subprocess.run([hpcds1mpi_exe(), "tune", "--kernel", "gemm", "--size", "64", "--out",
                          "t.h5", "--budget", "2", "--submit"],
                         capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    script = (tmp_path / "submitted.sbatch").read_text()
    assert "--partition" not in "".join(line for line in script.splitlines()
                                        if line.startswith("#SBATCH"))
    assert res.stderr.count("note: the tune job script names no --partition: it was chosen "
                            "for this machine") == 1
    assert "# note: the tune job script names no --partition" in script
    test_only = slurm.cmd(["sbatch", "--test-only", "submitted.sbatch"], check=False,
                          cwd=tmp_path)  # the real sbatch accepts it (submits nothing)
    assert test_only.returncode == 0, test_only.stderr


def test_submit_refuses_mpi_under_launcher_mpiexec_before_sbatch(tmp_path):
    """s44 review R3: `--submit --launcher mpiexec --mpi pmix` was submitted and the job
    failed on the refusal; now refused before sbatch. Under srun (the job's) it is submitted."""
    (tmp_path / "c.toml").write_text(CLUSTER)
    env = _fake_sbatch(tmp_path)
    argv = [hpcds1mpi_exe(), "tune", "--kernel", "gemm", "--size", "64", "--out", "t.h5",
            "--cluster", "c.toml", "--budget", "2", "--submit", "--mpi", "pmix"]
    res = subprocess.run([*argv, "--launcher", "mpiexec"], capture_output=True, text=True,
                         timeout=60, env=env, cwd=tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.strip().count("\n") == 0, res.stderr
    assert "--mpi pmix is srun's PMI plugin and has no effect here: --launcher mpiexec" \
        in res.stderr
    assert not (tmp_path / "submitted.sbatch").exists() and not (tmp_path / "t.h5").exists()
    res = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env,
                         cwd=tmp_path)
    assert res.returncode == 0 and "submitted tune as Slurm job 4242" in res.stdout, res.stderr
