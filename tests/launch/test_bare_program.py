"""A job script's bare program name that its launcher would not find is refused as `sweep`
refuses it (s34 tester U6: `recommend --emit slurm --program heat` wrote `mpiexec -n 2 heat`,
and the job failed 127, execvp error)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch import scripts
from hpcds1mpi.launch.directives import BatchJob
from tests.launch.jobs import CPU, site

#: MPICH's hydra mpiexec of the venv's MPI wheel: it looks a bare name up on PATH only.
HYDRA = Path(sys.executable).parent / "mpiexec"


def _script(program: str, **cluster) -> str:
    job = BatchJob(config=Configuration(1, 2, 1), partition=CPU, program=program,
                   cluster=site(modules=[], preamble=[], mpi="pmi2", **cluster),
                   job_name="j", time_limit_s=600, size=8)
    return scripts.render(job, "slurm")


@pytest.fixture
def program_here(tmp_path, monkeypatch) -> str:
    """A program `fu3heat` in the folder the job is submitted from, not on PATH."""
    (tmp_path / "fu3heat").write_text("#!/bin/sh\necho TIME=1\n")
    (tmp_path / "fu3heat").chmod(0o755)
    monkeypatch.chdir(tmp_path)
    return "fu3heat"


@pytest.mark.skipif(not HYDRA.exists(), reason="needs the MPICH wheel's hydra mpiexec")
def test_a_bare_name_hydra_would_not_find_is_refused_naming_its_path(program_here):
    with pytest.raises(ConfigError) as refused:
        _script("fu3heat {size}", launcher="mpiexec", mpiexec=str(HYDRA))
    assert str(refused.value) == (
        "program 'fu3heat' is not on PATH (there is one in this folder, but mpiexec looks a "
        "bare name up on PATH only), so the job would fail (command not found); give its path "
        "with --program (e.g. ./fu3heat) or install it")
    assert "mpiexec -n 2 ./fu3heat 8" in _script("./fu3heat {size}", launcher="mpiexec",
                                                 mpiexec=str(HYDRA))


def test_srun_finds_a_bare_name_in_the_jobs_folder_but_not_one_that_is_nowhere(program_here):
    """srun looks in the job's folder after PATH (the test Slurm runs `srun -n1 prog` from
    its folder): kept. A name found nowhere is refused; a name on PATH is kept."""
    assert _script("fu3heat {size}").splitlines()[-1].endswith(" fu3heat 8")
    with pytest.raises(ConfigError, match=r"^program 'fu3nowhere' is not on PATH, so the job "):
        _script("fu3nowhere {size}")
    assert _script("env OMP_PLACES=cores hostname").splitlines()[-1].endswith("hostname")
    with pytest.raises(ConfigError, match="program 'fu3nowhere' is not on PATH"):
        _script("env OMP_PLACES=cores fu3nowhere")  # the program past an exec wrapper


def test_a_job_whose_modules_change_its_path_is_told_not_refused(program_here):
    """The cluster file's modules or preamble may put it on the job's PATH (a program that
    exists only where the job runs): said in the script, not refused."""
    job = BatchJob(config=Configuration(1, 2, 1), partition=CPU, program="fu3nowhere {size}",
                   cluster=site(mpi="pmi2"), job_name="j", time_limit_s=600, size=8)
    text = scripts.render(job, "slurm")
    assert "# note: program 'fu3nowhere' is not on this PATH: the job finds it only if the " \
        "cluster file's modules or preamble put it on its PATH" in text
