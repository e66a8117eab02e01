"""A job script's program path that is not there, in a folder of this machine the job enters,
is refused as `sweep` refuses it (s39 tester D3: `recommend --emit --program './nonexist
{size}'` wrote the script, exit 0, with a note that the job checks its inputs first)."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.program_there import check_program_there


@pytest.fixture
def folder(tmp_path):
    """A folder holding the executable `my app` (a space in its name) and the data `in.dat`."""
    (tmp_path / "my app").write_text("#!/bin/sh\necho time=1\n")
    (tmp_path / "my app").chmod(0o755)
    (tmp_path / "in.dat").write_text("data\n")
    return str(tmp_path)


def test_a_missing_program_path_is_refused_naming_the_folder(folder):
    with pytest.raises(ConfigError) as refused:
        check_program_there(["./nonexist", "150"], folder)
    assert str(refused.value) == (f"--program: program './nonexist' not found in {folder!r} "
                                  "(the folder the job runs it in); give the path of an "
                                  "executable")
    with pytest.raises(ConfigError, match="program './nonexist' not found in"):
        check_program_there(["env", "A=1", "./nonexist"], folder)  # past an exec wrapper
    with pytest.raises(ConfigError, match=r"program '/nowhere/app' not found; give the path"):
        check_program_there(["/nowhere/app"], folder)


def test_a_name_with_an_unquoted_space_is_refused_with_its_quoted_form(folder):
    with pytest.raises(ConfigError) as refused:
        check_program_there(["./my", "app", "150"], folder)
    assert str(refused.value).endswith(
        "give the path of an executable (a name with a space is quoted: --program "
        "\"'./my app' ...\")")


def test_a_file_that_is_not_executable_is_refused(folder):
    with pytest.raises(ConfigError, match=r"'\./in\.dat' is not an executable file in .*chmod"):
        check_program_there(["./in.dat"], folder)


def test_what_cannot_be_checked_here_is_left_to_the_job(folder, tmp_path):
    check_program_there(["./my app", "150"], folder)  # there
    check_program_there(["./nonexist"], None)  # the submit folder: not known here
    check_program_there(["./nonexist"], "cases/150-1")  # relative to the submit folder
    check_program_there(["./nonexist"], str(tmp_path / "elsewhere"))  # another machine's
    check_program_there(["./nonexist"], folder, setup="cp ../app .")  # the setup may make it
    check_program_there(["nonexist"], folder)  # a bare name: the launcher's PATH (bare_program)
    check_program_there(["hpcds1mpi", "run", "gemm"], folder)


def test_the_program_is_read_where_the_job_runs_it(folder, tmp_path):
    """s46 tester J2: ``./app`` was read in this shell's folder, not the job's."""
    from hpcds1mpi.launch.program_there import words_where_run

    assert words_where_run(["./my app", "1"], folder) == ([f"{folder}/my app", "1"], "")
    assert words_where_run(["env", "A=1", "./x", "2"], folder)[0] == [
        "env", "A=1", f"{folder}/x", "2"]
    for words in (["app", "1"], ["/bin/true"]):  # PATH's, or itself
        assert words_where_run(words, folder) == (words, "")
    assert words_where_run(["./x"], None) == (["./x"], "")
    gone = str(tmp_path / "gone")
    words, note = words_where_run(["./x"], gone)
    assert words == [f"{gone}/x"]
    assert note == (f"./x's MPI is not checked against the launcher: the folder the job runs "
                    f"it in, {gone!r}, is not on this machine")
