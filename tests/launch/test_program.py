"""The program rule: placeholders filled one way (unknown braces stay literal), one environment."""

from __future__ import annotations

import pytest

from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch import program


def test_placeholders_are_replaced_and_other_braces_stay_literal():
    values = program.placeholder_values(Configuration(2, 3, 4, "gpu", "bf16"), 42)
    tokens = program.program_tokens(
        "app --n {size} -t {threads} -r {ranks} {nodes}x{ranks_per_node} {device} {precision} "
        "awk '{print $1}' {nope} {}", values)
    assert tokens == ["app", "--n", "42", "-t", "4", "-r", "6", "2x3", "gpu", "bf16", "awk",
                      "{print $1}", "{nope}", "{}"]
    # Without a size (a recommended script for an unknown size) {size} stays as written.
    assert program.program_tokens(["a", "{size}"], program.placeholder_values(
        Configuration())) == ["a", "{size}"]


@pytest.mark.parametrize("bad", ["", "   ", "a 'open", "a\nb"])
def test_bad_programs_are_refused(bad):
    with pytest.raises(ConfigError):
        program.program_tokens(bad)


def test_environment_threads_blas_and_binding_only_where_ranks_are_bound():
    config = Configuration(1, 2, 3, "cpu", "fp32")
    unbound = program.environment(config, binds_cores=False)
    assert unbound == {"OMP_NUM_THREADS": "3", "OPENBLAS_NUM_THREADS": "3",
                       "MKL_NUM_THREADS": "3", "HPCDS1MPI_THREADS": "3",
                       "HPCDS1MPI_PRECISION": "fp32", "HPCDS1MPI_DEVICE": "cpu"}
    bound = program.environment(config, binds_cores=True, extra={"X": "1"})
    assert bound == {**unbound, "OMP_PLACES": "cores", "OMP_PROC_BIND": "close", "X": "1"}
    with pytest.raises(ConfigError):
        program.environment(config, binds_cores=True, extra={"A=B": "1"})
    with pytest.raises(ConfigError):
        program.environment(config, binds_cores=True, extra={"A": "1\n2"})


@pytest.mark.parametrize("text, slips", [
    ("./app --n {Size} -r {rank} -t {n_threads}", ["{Size} (did you mean {size}?)",
                                                   "{rank} (did you mean {ranks}?)",
                                                   "{n_threads} (did you mean {threads}?)"]),
    ("./app --prec {precison} {device}", ["{precison} (did you mean {precision}?)"]),
    ("./app --n {size} awk '{print $1}' '${HOME}' {} {nope}", []),  # unquoted: refused (D7)
])
def test_a_brace_word_that_looks_like_a_placeholder_gets_a_note(text, slips):
    """{rank} is passed literally (it is no placeholder): every configuration would get the
    same argument without a word."""
    note = program.program_note(text)
    if not slips:
        assert note is None
        return
    assert note.startswith("--program has ") and "passed as written" in note
    for slip in slips:
        assert slip in note
    assert program.program_tokens(text, {"ranks": 4, "size": 9})[-1] != "4"  # still literal


@pytest.mark.parametrize("text,said", [
    ("./app {size} > out.txt", "'>' would be passed on as part of"),
    ("./app {size} | tee log", "'|' would"),
    ("./app {size} 2>&1", "'2>&1' would"),
    ("./app >\"out file.txt\" 2>>err", "'>' and '2>>' would"),
    ("FOO=1 ./app {size}", "'FOO=1' would"),
    ("./prep && ./app", "'&&' would"),
    ("pw.x < si-{size}.in", "'<' would be passed on as part of"),
    ("./app < in > out ; ./b", "'<', '>' and ';' would be passed on as part of"),
])
def test_shell_syntax_in_a_command_is_refused(text, said):
    """The command is not run by a shell: a redirection reached the program as two arguments,
    under a note whose grammar was wrong ("'<' reach"), and ``pw.x < si.in`` then ran pw.x
    reading the sweep's terminal (FOO=1 was taken for the program's path)."""
    with pytest.raises(ConfigError, match="^--command is not run by a shell: ") as caught:
        program.program_note(text, "--command")
    assert said in str(caught.value) and "in a script and give the script" in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("text", ["./app --out=x.txt {size}", "./app -n 5 'a > b'",
                                  "./app --env FOO=1"])
def test_no_shell_note_for_arguments_that_only_contain_such_characters(text):
    assert program.program_note(text) is None


@pytest.mark.parametrize("bad", ["--ntasks=1 --label hostname", ["-n", "99", "./app"],
                                 "-n 99 --export=ALL,LD_PRELOAD=/tmp/x.so ./app", "- app"])
def test_a_program_that_starts_with_an_option_is_refused(bad):
    """Was: its words followed the launcher's own (``srun --ntasks=2 ... --ntasks=1 ...``), so
    they overrode the layout the script's header recommends."""
    with pytest.raises(ConfigError, match="must start with its executable.*launcher_args"):
        program.program_tokens(bad)


def test_options_after_the_executable_and_a_file_named_like_an_option_pass():
    assert program.program_tokens("./app -n {size}", {"size": 3}) == ["./app", "-n", "3"]
    assert program.program_tokens(["./-n", "2"]) == ["./-n", "2"]


@pytest.mark.parametrize("text", ["./app '<' in.txt", "./app \\> x", "./app \"a | b\" {size}",
                                  ["./app", ">", "x"]])
def test_a_quoted_operator_or_an_argv_list_is_an_argument_not_shell_syntax(text):
    """A quoted '>' is what the user meant to pass (a shell would pass it too); a token list
    is argv already."""
    assert program.program_note(text, "--command") is None


def test_shell_syntax_is_refused_on_every_path_a_command_enters_by():
    """s27 review B3: the refusal lived in the CLI's note only, so the Python API wrote
    "./app '<' in.txt" into a script."""
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.program import program_tokens

    with pytest.raises(ConfigError, match="^program is not run by a shell: '<' would be"):
        program_tokens("./app < in.txt")
    assert program_tokens("./app '<' in.txt") == ["./app", "<", "in.txt"]  # quoted: an argument
    assert program_tokens(["./app", "<", "in.txt"]) == ["./app", "<", "in.txt"]  # argv as given


def test_a_relative_program_not_found_with_a_workdir_says_where_it_was_looked_for(
        tmp_path, monkeypatch):
    # s28 tester Y7a: --workdir 'runs/{size}-{ranks}' with --command ./heat_mpich said only
    # "program './heat_mpich' not found", though heat_mpich was right beside the sweep.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "heat_mpich").write_text("#!/bin/sh\n")
    assert program.program_not_found("./heat_mpich", "runs/2048-1") == (
        "--command: program './heat_mpich' not found in --workdir 'runs/2048-1': the program "
        "starts in each configuration's folder, so a relative path is looked up there; give "
        f"its absolute path ({tmp_path}/heat_mpich), or put the program in each folder")
    assert program.program_not_found("./gone", "runs/1", "--program").endswith(
        "give its absolute path, or put the program in each folder")
    # Without --workdir (or with an absolute path) the folder is not the question.
    for name, cwd in (("./gone", None), ("/nowhere/app", "runs/1")):
        assert program.program_not_found(name, cwd) == (
            f"--command: program {name!r} not found; give the path of an executable (or a "
            "name on PATH)")


def test_a_program_in_a_folder_the_user_cannot_enter_is_not_called_missing():
    """s34 tester U5: `sweep --command /home/alice/app/heat` with the folder 0700 was
    "program ... not found" although it is there."""
    import os
    import tempfile

    from hpcds1mpi.measure.external import check_program
    from tests.runtime.test_denied_access import as_nobody

    if os.geteuid() != 0:
        pytest.skip("becomes another user: needs root")
    shared = tempfile.mkdtemp(prefix="hpcds1mpi-program-", dir="/tmp")
    os.chmod(shared, 0o755)
    closed = os.path.join(shared, "app")
    os.mkdir(closed, 0o700)
    heat = os.path.join(closed, "heat")
    with open(heat, "w") as fh:
        fh.write("#!/bin/sh\n")
    os.chmod(heat, 0o755)
    kind, said = as_nobody(check_program, [heat, "100"])
    import shutil

    shutil.rmtree(shared)
    assert kind == "raised" and said.startswith(
        f"ConfigError: --command: program {heat}: permission denied (you cannot enter the "
        f"folder {closed}: owner root")
    assert "not found" not in said


@pytest.mark.parametrize("text, said", [
    ("env OMP_NUM_THREADS=2 ./hyb {size}", "sets OMP_NUM_THREADS=2 itself"),
    ("nice -n 5 env MKL_NUM_THREADS=4 ./app", "sets MKL_NUM_THREADS=4 itself"),
    ("env HPCDS1MPI_PRECISION=fp32 ./app", "write HPCDS1MPI_PRECISION={precision}"),
    ("env -u OPENBLAS_NUM_THREADS ./app", "removes OPENBLAS_NUM_THREADS (env -u)"),
])
def test_a_prefix_setting_a_per_configuration_variable_is_refused(text, said):
    """s36 tester E5: `env OMP_NUM_THREADS=2 ./prog` with --threads 1,2 stored half the runs
    as threads=1 while 2 ran; the prefix overrides what each run gets."""
    with pytest.raises(ConfigError, match=r"\{threads\}|\{precision\}") as caught:
        program.program_note(text, "--command")
    assert said in str(caught.value) and str(caught.value).startswith("--command ")


@pytest.mark.parametrize("text", ["env OMP_NUM_THREADS={threads} ./app {size}",
                                  "env OMP_PROC_BIND=spread POISSON_N={size} ./app",
                                  "./app OMP_NUM_THREADS=2"])
def test_a_prefix_following_the_placeholders_is_kept(text):
    assert program.program_note(text, "--command") is None


def test_sweep_refuses_it_before_any_run(tmp_path):
    """s36 tester E5, through the command line: one line, exit 2, nothing written."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "hpcds1mpi", "sweep", "--command",
         "env OMP_NUM_THREADS=2 ./hyb {size}", "--label", "hyb", "--sizes", "100",
         "--threads", "1,2", "--time-regex", "t=([0-9.]+)", "--no-progress", "--out", "w.h5"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "write OMP_NUM_THREADS={threads}" in done.stderr
    assert list(tmp_path.iterdir()) == []
