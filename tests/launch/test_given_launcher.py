"""A launcher given that is no MPI launcher: the launcher a script around it runs (real
scripts, real Debian launchers, OpenCoarrays' cafrun where installed), and the one-line
refusal naming the launcher of the program's MPI."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch import mpi_family
from hpcds1mpi.launch.given_launcher import check_mpiexec, refusal, wrapped_launcher
from tests.helpers import system_program

#: The venv's bin: the MPICH wheel's hydra (MPICH 5), first on PATH where the venv is active.
VENV_BIN = os.path.dirname(sys.executable)


def _script(path, text: str) -> str:
    """An executable script; one whose text runs a launcher answers --version itself, as
    cafrun does."""
    if "exec " in text:
        text = text.replace("#!/bin/sh\n", '#!/bin/sh\n[ "$1" = --version ] && '
                            "{ echo 'Site launcher 1.0'; exit 0; }\n", 1)
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


def test_a_script_around_a_launcher_is_read_as_the_one_it_runs(tmp_path):
    """s32 tester X1: cafrun's --version is its own banner; the launcher it runs is written
    in its text. Two families named: which one runs cannot be told; no #!: not a script."""
    hydra, orterun = system_program("mpiexec.mpich"), system_program("mpirun.openmpi")
    runs = _script(tmp_path / "run", f'#!/bin/sh\n# site wrapper\nexec {hydra} "$@"\n')
    assert wrapped_launcher(runs) == hydra
    assert mpi_family.launcher_family(runs) is None  # what the check read before
    both = _script(tmp_path / "both", f"#!/bin/sh\n[ -n \"$X\" ] && exec {hydra} \"$@\"\n"
                                      f'exec {orterun} "$@"\n')
    assert wrapped_launcher(both) is None
    assert wrapped_launcher(_script(tmp_path / "none", "#!/bin/sh\nexec /bin/echo \"$@\"\n")) \
        is None
    assert wrapped_launcher(shutil.which("echo")) is None  # an ELF is no script
    assert wrapped_launcher(str(tmp_path / "missing")) is None
    cafrun = shutil.which("cafrun")  # OpenCoarrays, not in scripts/system-packages
    if cafrun is None:
        pytest.skip("OpenCoarrays' cafrun not installed")
    assert mpi_family.launcher_family(wrapped_launcher(cafrun)) in ("openmpi", "mpich")


def test_a_refusal_names_what_the_script_runs_and_the_program_mpi_launcher(tmp_path):
    """The program's MPI read: its launcher found here is named; not read: one of each
    family, after PATH in the fix."""
    hydra = system_program("mpiexec.mpich")
    runs = _script(tmp_path / "cafrun", f'#!/bin/sh\nexec {hydra} "$@"\n')
    hpcc = mpi_family.program_mpi([system_program("hpcc")])
    said = refusal(f"--mpiexec {runs!r}", runs, "--mpiexec {}", hpcc)
    assert said.startswith(f"--mpiexec {runs!r} is not an MPI launcher (") and "\n" not in said
    assert f"a script that runs {hydra}" in said and "linked against Open MPI" in said
    named = said.rsplit("use its launcher: --mpiexec ", 1)[1]
    assert mpi_family.launcher_family(named) == "openmpi", said
    unread = refusal("the cluster file's mpiexec '/bin/echo'", shutil.which("echo"),
                     'set mpiexec = "{}" in the cluster file')
    assert 'set mpiexec = "PATH" in the cluster file, PATH the launcher of the program' in unread
    assert "(Open MPI)" in unread and "(MPICH)" in unread and "script that runs" not in unread
    # No Open MPI launcher on this PATH (the one beside this Python is the wheel's hydra)
    empty = refusal("--mpiexec 'x'", shutil.which("echo"), "--mpiexec {}", hpcc,
                    {"PATH": str(tmp_path)})
    assert empty.endswith("install the program's MPI and give its launcher: --mpiexec PATH")


def test_a_bad_mpiexec_is_a_usage_error(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        check_mpiexec(str(tmp_path / "mpirun"))
    with pytest.raises(ConfigError, match="not an executable"):
        check_mpiexec(str(tmp_path))
    with pytest.raises(ConfigError, match="is not an MPI launcher"):
        check_mpiexec(shutil.which("ls"))
    assert check_mpiexec("mpiexec.mpich") == system_program("mpiexec.mpich")


def test_a_launcher_that_is_none_is_refused_naming_where_it_came_from(tmp_path):
    """s32 tester X1: OpenCoarrays' cafrun (a script whose --version is its own banner) given
    in the cluster file was refused as "--mpiexec ... is not an MPI launcher", saying nothing
    to do. Now: where it came from, the launcher the script runs, and the one of the
    program's MPI (a site wrapper around hydra here; cafrun is not always installed)."""
    from hpcds1mpi.launch.mpi_family import launcher_family

    hydra = system_program("mpiexec.mpich")
    wrapper = tmp_path / "cafrun"
    wrapper.write_text('#!/bin/sh\n[ "$1" = --version ] && { echo "cafrun 2.10.1"; exit 0; }\n'
                       f'CAFRUN="{hydra}"\nexec "$CAFRUN" "$@"\n')
    wrapper.chmod(0o755)
    with pytest.raises(ConfigError) as refused:
        check_mpiexec(str(wrapper), program=[system_program("hpcc"), "8"])
    said = str(refused.value)
    assert said.startswith(f"--mpiexec '{wrapper}' is not an MPI launcher") and "\n" not in said
    assert f"a script that runs {hydra}" in said and "linked against Open MPI" in said
    assert launcher_family(said.rsplit("use its launcher: --mpiexec ", 1)[1]) == "openmpi"
    echo = os.path.realpath(shutil.which("echo"))
    with pytest.raises(ConfigError, match=rf"^the cluster file's mpiexec '{echo}' is not an MPI "
                                          r"launcher .*: set mpiexec = \"PATH\" in the cluster "
                                          r"file, PATH the launcher of the program's MPI: /"):
        check_mpiexec(echo, given="the cluster file's mpiexec")


def _site_mpirun(folder, hydra: str) -> str:
    """A site's ``bin/mpirun`` that runs ``mpiexec.hydra`` by bare name (as Intel MPI's does),
    its own ``bin/mpiexec.hydra`` beside it (a link to ``hydra``)."""
    folder.mkdir()
    (folder / "mpiexec.hydra").symlink_to(hydra)
    return _script(folder / "mpirun", '#!/bin/sh\nexport I_MPI_MPIRUN="mpirun"\n'
                                      'if [ -n "$X" ]; then\n    mpiexec.hydra "$@" <&0\n'
                                      'else\n    mpiexec.hydra "$@" <&0\nfi\n')


def test_a_launcher_script_running_a_bare_name_is_read_as_path_gives_it(tmp_path):
    """s35 tester I4: Intel MPI's mpirun runs `mpiexec.hydra` as PATH finds it: the venv's
    MPICH 5 under the sweep, Debian's in the job. PATH finding another than the one beside the
    script: refused naming both and the fix; finding that one: read as it, so that the sweep
    records (and its job script writes) that file, not the PATH-dependent script."""
    hydra = system_program("mpiexec.mpich")
    mpirun = _site_mpirun(tmp_path / "bin", hydra)
    own = str(tmp_path / "bin" / "mpiexec.hydra")
    venv_first = {"PATH": f"{VENV_BIN}:/usr/bin:/bin"}  # the venv's MPICH 5 hydra first
    with pytest.raises(ConfigError) as refused:
        check_mpiexec(mpirun, env=venv_first)
    said = str(refused.value)
    assert said.startswith(f"--mpiexec '{mpirun}' is a script that runs mpiexec.hydra as PATH "
                           f"finds it, and here PATH finds {VENV_BIN}/mpiexec.hydra, not {own} beside the script") and "\n" not in said
    assert said.endswith(f"put {tmp_path / 'bin'} first on PATH, or --mpiexec {own}"), said
    with pytest.raises(ConfigError, match=r"PATH finds none, nor .* or set mpiexec = \""):
        check_mpiexec(mpirun, env={"PATH": "/nonexistent"}, given="the cluster file's mpiexec")
    assert check_mpiexec(mpirun, env={"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin"}) == mpirun


def test_intels_mpirun_is_refused_where_path_gives_another_hydra_and_kept_where_its_own():
    """The real Intel MPI: refused with the venv's bin first; with its own bin first, kept as
    given (s35 review 1: its mpirun does the scheduler's placement its mpiexec.hydra does not)."""
    from tests.intel_mpi import intel_env, intel_mpi

    root = intel_mpi()
    venv_first = {**os.environ, "PATH": f"{VENV_BIN}:/usr/bin:/bin"}
    with pytest.raises(ConfigError, match=f"not {root}/bin/mpiexec.hydra beside the script"):
        check_mpiexec(str(root / "bin" / "mpirun"), env=venv_first)
    assert check_mpiexec(str(root / "bin" / "mpirun"), env=intel_env()) == \
        str(root / "bin" / "mpirun")


def test_a_launcher_given_with_its_options_is_refused_naming_launcher_args():
    """s36 tester M7: ``--mpiexec "/usr/bin/mpiexec.mpich -n 2"`` was "not found; ... e.g.
    /usr/bin/mpirun.openmpi": the cause (options inside --mpiexec) unsaid, and an example of
    another MPI family than the program's, which its sweep then refused."""
    mpich_app = [system_program("NPmpich2")]
    hydra = system_program("mpiexec.mpich")
    with pytest.raises(ConfigError) as refused:
        check_mpiexec(f"{hydra} -n 2", program=mpich_app)
    assert str(refused.value) == (
        f"--mpiexec '{hydra} -n 2' not found: it holds options; give the launcher alone "
        f"(--mpiexec {hydra}) and its options with --launcher-args (the rank count comes from "
        "the configuration: --ranks-per-node / --nodes)")
    with pytest.raises(ConfigError) as missing:
        check_mpiexec("/nonexistent/mpiexec", program=mpich_app)
    named = str(missing.value).split("give the path of an MPI launcher: --mpiexec ")[1]
    assert mpi_family.launcher_family(named) == "mpich", named


@pytest.mark.parametrize("blank", [" ", "\t", "  \n"])
def test_a_launcher_of_blanks_only_is_refused_in_one_line_not_a_traceback(blank):
    """s36 review 3: ``--mpiexec " "`` raised ValueError (``head, *rest = path.split()`` of
    no word) where it had said "not found; give the path of an MPI launcher"."""
    for given in ("--mpiexec", "the cluster file's mpiexec"):
        with pytest.raises(ConfigError) as refused:
            check_mpiexec(blank, given=given)
        said = str(refused.value)
        assert said.startswith(f"{given} {blank!r} not found; give the path of an MPI "
                               "launcher: ") and "\n" not in said, said


def test_prrtes_launcher_whose_version_fails_is_accepted_as_open_mpis(tmp_path):
    """s40 tester A3: the Open MPI 5 wheel's prterun, relocated, prints only a
    help-file-missing box for --version: it was refused as "not an MPI launcher", naming
    another installation's launcher; its file's name says Open MPI."""
    prterun = _script(tmp_path / "prterun", "#!/bin/sh\necho '----'\necho 'Sorry!  You were "
                      "supposed to get help about:'\nexit 1\n")
    assert check_mpiexec(prterun) == prterun
    assert mpi_family.launcher_family(prterun) == "openmpi"
