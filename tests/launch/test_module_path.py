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
                 "module load $MPI", "eval $(spack load --sh mpich)",
                 "MODULEPATH=/tmp/x module load openmpi"):
        path, why = module_path.job_path([line, "module load openmpi"])
        assert path is None and repr(line) in why, (line, why)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("BASH_FUNC_") and k != "BASH_ENV"}
    path, why = module_path.job_path(["module load openmpi"], env)  # nothing defines module
    assert path is None and "no module system initialised" in why
    assert module_path.job_path(["export A=1", "cd /tmp"], {"PATH": "/x"}) == ("/x", "")


@pytest.mark.parametrize("line, why", [
    ("module load paraview 2>/dev/null || true",
     "is a module command combined with other shell ('2>/dev/null || true')"),
    ("MODULEPATH=/tmp/x module load openmpi",
     "is a module command run with variables of its own ('MODULEPATH=/tmp/x')"),
    ("conda activate x", "is not a module command")])
def test_a_module_line_not_run_says_why(line, why):
    """s45 tester E4: a module command with a redirection and ``|| true`` was called "not a
    module command"; the reason it is not run is the shell around it."""
    assert module_path.job_path([line])[1] == f"{line!r} {why}, so it is not run here"


def test_a_sourced_file_that_is_no_module_systems_init_file_is_never_run(tmp_path):
    """s36 review 1: ``source FILE`` ran wherever FILE's path had a folder named ``modules/``
    (or ended in ``modules.sh``): ``advise someone_elses.sh`` ran its code. Only a module
    system's own init file, by its exact path, is run."""
    ran = tmp_path / "PWNED"
    for name in ("proj/modules/env.sh", "proj/lmod/env.sh", "proj/site-modules.sh",
                 "proj/modules/init/bash.local"):
        script = tmp_path / name
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(f'echo "ran as $(id -un)" > {ran}\n')
        path, why = module_path.job_path([f"source {script}", "module load openmpi"])
        assert path is None and why == (f"'source {script}' sources no module system's init "
                                        "file (Lmod's, Environment Modules'), so it is not run "
                                        "here"), why
    assert not ran.exists()


def test_a_module_system_file_another_user_could_write_is_not_run(tmp_path):
    """s36 review 1: an init file named as a module system's, a ``module use`` folder or a
    module file in it that another user could write is not run (the PATH is then unknown)."""
    ran = tmp_path / "PWNED"
    fake_init = tmp_path / "site" / "lmod" / "init" / "bash"
    fake_init.parent.mkdir(parents=True)
    fake_init.write_text(f"touch {ran}\n")
    fake_init.chmod(0o664)
    path, why = module_path.job_path([f"source {fake_init}", "module load openmpi"])
    assert path is None and why == (f"'source {fake_init}' is not run here: {fake_init} is "
                                    "writable by its group (mode 0664), so another user "
                                    "could have written it"), why
    assert not ran.exists()

    lines = lmod_modules(tmp_path)
    folder = tmp_path / "modules"
    folder.chmod(0o775)
    path, why = module_path.job_path([*lines, "module load openmpi"])
    assert path is None and why == (f"the module lines are not run here: {folder} is writable "
                                    "by its group (mode 0775), so another user could have "
                                    "written the modules they load"), why
    folder.chmod(0o755)
    module_file = folder / "openmpi" / "1.0.lua"
    module_file.chmod(0o666)
    path, why = module_path.job_path([*lines, "ml openmpi"])
    assert path is None and f"{module_file} is writable by everyone (mode 0666)" in why, why
    module_file.chmod(0o644)
    if os.geteuid() == 0:  # another user's module file (root can give it one)
        os.chown(module_file, 65534, -1)
        path, why = module_path.job_path([*lines, "module load openmpi/1.0"])
        assert path is None and f"{module_file} belongs to another user (uid 65534)" in why
        os.chown(module_file, 0, -1)
    path, why = module_path.job_path([*lines, "module load openmpi"])
    assert why == "" and path.split(":")[0] == str(tmp_path / "mbin" / "openmpi")
