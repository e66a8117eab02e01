"""The PATH a job has after its module lines, asked of the module system itself (s36 tester
M1: a cluster file's ``modules = ["openmpi"]`` before a bare ``mpirun`` ran an MPICH program
as two 1-rank copies, unchecked). Real Lmod where it is installed."""

from __future__ import annotations

import os
import subprocess

import pytest

from hpcds1mpi.launch import module_path

LMOD_INIT = "/usr/share/lmod/lmod/init/bash"


def lmod_modules(tmp_path, name: str = "openmpi", target: str = "/usr/bin/mpirun.openmpi"
                 ) -> list[str]:
    """Cluster-file preamble lines of real Lmod with a module ``name`` whose ``bin`` has an
    ``mpirun`` linked to ``target``, as a site module puts one first on PATH."""
    if not os.path.isfile(LMOD_INIT):
        pytest.skip("needs Lmod (apt-get install lmod)")
    if not os.path.exists(target):
        pytest.skip(f"needs {target}")
    bin_dir = tmp_path / "mbin" / name
    bin_dir.mkdir(parents=True)
    (bin_dir / "mpirun").symlink_to(os.path.realpath(target))
    (tmp_path / "modules" / name).mkdir(parents=True)
    (tmp_path / "modules" / name / "1.0.lua").write_text(
        f'prepend_path("PATH", "{bin_dir}")\n')
    return [f"source {LMOD_INIT}", f"module use {tmp_path / 'modules'}"]


def test_module_lines_give_the_path_the_module_system_gives(tmp_path):
    lines = lmod_modules(tmp_path)
    path, why = module_path.job_path([*lines, "set -euo pipefail", "export OMP_NUM_THREADS=1",
                                      "module load openmpi", "srun -n 1 ./prepare"])
    assert why == "" and path.split(":")[0] == str(tmp_path / "mbin" / "openmpi"), path
    missing, why = module_path.job_path([*lines, "module load nothere"])
    assert missing is None and why == "'module load nothere' failed here"


def test_lines_that_may_change_path_otherwise_are_not_run(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError(f"a process was started: {args[:1]}")

    monkeypatch.setattr(subprocess, "run", refuse)
    for line in ("conda activate x", "source ~/.bashrc", "export PATH=/x:$PATH",
                 "module load $MPI", "eval $(spack load --sh mpich)"):
        path, why = module_path.job_path([line, "module load openmpi"])
        assert path is None and repr(line) in why, (line, why)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("BASH_FUNC_") and k != "BASH_ENV"}
    path, why = module_path.job_path(["module load openmpi"], env)  # nothing defines module
    assert path is None and "no module system initialised" in why
    assert module_path.job_path(["export A=1", "cd /tmp"], {"PATH": "/x"}) == ("/x", "")
