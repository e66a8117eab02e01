"""The CLI starts fast, imports nothing heavy, and turns user errors into one line."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tests.helpers import REPO, run_cli, run_mpi, hpcds1mpi_exe

HEAVY = ("torch", "cupy", "lightgbm", "botorch", "h5py", "mpi4py.MPI", "xgboost", "pandas")


def test_help_imports_nothing_heavy():
    code = (
        "import sys\n"
        "from hpcds1mpi.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


def test_help_import_check_can_fail():
    # The same probe must see a heavy module when one is imported: the check above is live.
    code = "import sys, h5py\nprint([m for m in ('h5py',) if m in sys.modules])\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['h5py']"


def test_help_under_half_a_second():
    run_cli(["--help"])  # warm the file cache
    best = min(_timed_help() for _ in range(3))
    assert best < 0.5, f"hpcds1mpi --help took {best:.3f}s"


def _timed_help() -> float:
    start = time.perf_counter()
    proc = subprocess.run([hpcds1mpi_exe(), "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "recommend" in proc.stdout
    return time.perf_counter() - start


def _assert_one_line_error(proc, *fragments):
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_the_short_help_of_ingest_names_every_kind_of_log_it_reads():
    # s35 tester X5: "Slurm sacct / PM100 / Adastra" while ingest also reads SWF, Eagle, Eurora
    from hpcds1mpi.cli import COMMANDS
    from hpcds1mpi.commands.ingest import KIND_CHOICES

    said = COMMANDS["ingest"].lower()
    logs = {kind.split("-")[0] for kind in KIND_CHOICES} - {"auto", "job"}
    assert logs and not [log for log in sorted(logs) if log not in said], said


def test_unknown_kernel_is_one_line():
    _assert_one_line_error(run_cli(["run", "nosuchkernel"]), "unknown kernel", "known kernels")


def test_malformed_cluster_toml_is_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[partitions.cpu]\ncores_per_node = 'many'\nmemory_gb = 10\n")
    _assert_one_line_error(run_cli(["cluster", "--cluster", str(bad)]), str(bad),
                           "cores_per_node")
    broken = tmp_path / "broken.toml"
    broken.write_text("[partitions.cpu\n")
    _assert_one_line_error(run_cli(["cluster", "--cluster", str(broken)]), "not valid TOML")


def test_impossible_configs_are_one_line():
    cluster = str(REPO / "tests/data/clusters/two_partitions.toml")
    proc = run_cli(["run", "gemm", "--threads", "64", "--cluster", cluster, "--partition", "cpu"])
    _assert_one_line_error(proc, "cores")
    proc = run_cli(["run", "gemm", "--device", "gpu", "--cluster", cluster, "--partition", "cpu"])
    _assert_one_line_error(proc, "no GPUs")


def test_unsupported_precision_is_reported():
    proc = run_cli(["run", "allreduce", "--precision", "bf16", "--json", "--repeats", "1"])
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    record = json.loads(proc.stdout.strip().splitlines()[-1])
    assert record["status"] == "unsupported"


def test_cluster_command_counts_configurations():
    cluster = str(REPO / "tests/data/clusters/two_partitions.toml")
    proc = run_cli(["cluster", "--cluster", cluster, "--json"])
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    counts = {d["partition"]["name"]: d["configurations"] for d in doc}
    assert counts["cpu"] > 100 and counts["gpu"] > 100


def test_run_under_mpiexec_reports_layout():
    proc = run_mpi(2, [hpcds1mpi_exe(), "run", "stencil", "--size", "24", "--json",
                       "--repeats", "1"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout.strip().splitlines()[-1])
    assert record["status"] == "ok"
    assert record["ranks"] == 2 and record["ranks_per_node"] == 2


# --- one line, the right exit code (in-process: hpcds1mpi.cli.main) -----------------------


def _main(argv, capsys):
    from hpcds1mpi.cli import main

    try:
        main(argv)
    except SystemExit as exc:
        return exc.code, capsys.readouterr().err
    raise AssertionError("main returned without SystemExit")


def test_click_usage_error_is_one_line_naming_option_and_help(capsys):
    code, err = _main(["run", "stencil", "--size", "abc"], capsys)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("hpcds1mpi: error: ")
    assert "'--size'" in err and "hpcds1mpi run --help" in err


def test_out_of_range_number_names_the_range(capsys):
    code, err = _main(["run", "stencil", "--size", "99999999999999999999"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "--size" in err and "1..1099511627776" in err


@pytest.mark.parametrize("argv, name", [
    (["recommend", "--workload", "gemm", "--size", "64", "--model", ""], "--model"),
    (["recommend", "--workload", "gemm", "--size", "64", "--cluster", " "], "--cluster"),
    (["telemetry", "show", ""], "PATH"),
    (["ingest", "", "--out", "jobs.parquet"], "FILES"),
])
def test_an_empty_path_is_refused_not_read_as_no_option(argv, name, capsys, tmp_path,
                                                         monkeypatch):
    """``--model "$MODEL"`` with MODEL unset: the shipped bundle had answered, exit 0."""
    monkeypatch.chdir(tmp_path)
    code, err = _main(argv, capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert f"{name} is empty" in err
    assert not (tmp_path / "jobs.parquet").exists()


def _raise_in_kernels(monkeypatch, exc):
    import hpcds1mpi.commands.kernels as kernels_command

    def boom(**kwargs):
        raise exc

    monkeypatch.setattr(kernels_command.command, "callback", boom)


def test_runtime_failure_exits_1_on_one_line(monkeypatch, capsys):
    from hpcds1mpi.errors import WriteError

    _raise_in_kernels(monkeypatch, WriteError("disk\nfull:   free   space"))
    code, err = _main(["kernels"], capsys)
    assert code == 1 and err == "hpcds1mpi: error: disk full: free space\n"


def test_file_name_too_long_is_one_line(monkeypatch, capsys):
    import errno

    _raise_in_kernels(monkeypatch, OSError(errno.ENAMETOOLONG, "File name too long", "x" * 5000))
    code, err = _main(["kernels"], capsys)
    assert code == 2 and err.count("\n") == 1 and "5000 characters" in err


def test_a_bug_keeps_its_traceback(monkeypatch):
    import errno

    import pytest

    from hpcds1mpi.cli import main

    _raise_in_kernels(monkeypatch, OSError(errno.EIO, "Input/output error", "f"))
    with pytest.raises(OSError):
        main(["kernels"])
    _raise_in_kernels(monkeypatch, ValueError("a bug"))
    with pytest.raises(ValueError):
        main(["kernels"])


def test_exit_codes_per_error_class():
    """2 usage, 1 runtime (errors.py's docstring): every class, by its family."""
    from hpcds1mpi import errors

    runtime = {"RuntimeFailure", "LaunchError", "SchedulerError", "LockError", "WriteError",
               "SweepInterrupted", "ResultMismatch"}
    classes = {name: cls for name, cls in vars(errors).items()
               if isinstance(cls, type) and issubclass(cls, errors.HpcdsError)}
    assert runtime <= set(classes)
    for name, cls in classes.items():
        assert cls.exit_code == (errors.RUNTIME if name in runtime else errors.USAGE), name


def test_ctrl_c_is_one_line_and_130(monkeypatch, capsys):
    _raise_in_kernels(monkeypatch, KeyboardInterrupt())
    code, err = _main(["kernels"], capsys)
    # click ends the ^C line with a blank one, then turns the interrupt into an Abort.
    assert code == 130 and err.strip() == "hpcds1mpi: aborted"


def test_a_usage_error_under_mpiexec_is_one_line_not_one_per_rank():
    proc = run_mpi(3, [hpcds1mpi_exe(), "run", "--no-such-option"], timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.count("hpcds1mpi: error:") == 1, proc.stderr


@pytest.fixture(autouse=True)
def _sigint_restored():
    """main() ignores SIGINT once it reports an interrupt (the process ends next); this test
    process must keep its Ctrl-C."""
    import signal

    handler = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, handler)


def test_ctrl_c_ignores_a_second_interrupt_once_it_is_said(monkeypatch, capsys):
    import signal

    _raise_in_kernels(monkeypatch, KeyboardInterrupt())
    code, err = _main(["kernels"], capsys)
    assert code == 130 and signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_a_second_sigint_while_python_shuts_down_adds_nothing():
    """`timeout -s INT` signals the command, then its process group: the second SIGINT had
    landed in Python's shutdown and added "Exception ignored in ... KeyboardInterrupt" and a
    traceback after the one line."""
    code = ("import atexit, os, signal\n"
            "from hpcds1mpi import cli\n"
            "def interrupted(*args, **kwargs):\n    raise KeyboardInterrupt\n"
            "cli.cli.main = interrupted\n"
            "def second():\n    os.kill(os.getpid(), signal.SIGINT)\n"
            "    sum(range(10 ** 6))  # Python checks for the signal here\n"
            "atexit.register(second)\n"
            "cli.main(['kernels'])\n")
    _interrupted_in_one_line(code)


def test_a_ctrl_c_python_would_ignore_still_stops_the_command_without_a_traceback():
    """A Ctrl-C landing in a weak-reference callback (the import system's module locks, early
    in a command) is printed by Python as "Exception ignored in ... KeyboardInterrupt" and
    dropped: the command went on. It is delivered again instead."""
    code = ("import time, weakref\n"
            "from hpcds1mpi import cli\n"
            "class A:\n    pass\n"
            "def work(*args, **kwargs):\n"
            "    a = A()\n"
            "    def cb(ref):\n        raise KeyboardInterrupt\n"
            "    ref = weakref.ref(a, cb)\n"
            "    del a  # cb runs now, where Python cannot raise\n"
            "    for _ in range(300):\n        time.sleep(0.01)\n"
            "    print('went on')\n"
            "cli.cli.main = work\n"
            "cli.main(['kernels'])\n")
    assert "went on" not in _interrupted_in_one_line(code).stdout


def _interrupted_in_one_line(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh Python; it must end as an interrupt: exit 130, the one line."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 130 and proc.stderr == "hpcds1mpi: interrupted\n", proc.stderr
    return proc


def test_a_closed_stdout_is_a_quiet_exit_141(tmp_path):
    """`telemetry show t.h5 | head -1`: click's own handling of the broken pipe had exited 1
    without a word (a "runtime failure" to a pipefail script). Now no word, and the status
    a shell gives any tool stopped by SIGPIPE (cat big | head); never 0: the command may not
    have finished its work."""
    import os

    from hpcds1mpi.records import telemetry
    from tests.records.telemetry.rows import run_row

    t = tmp_path / "t.h5"
    telemetry.append(t, [run_row(i) for i in range(5)])
    for argv in (["telemetry", "show", str(t)], ["--help"]):
        read, write = os.pipe()
        os.close(read)  # the reader is gone before the first line
        proc = subprocess.run([hpcds1mpi_exe(), *argv], stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=120)
        os.close(write)
        assert proc.returncode == 141 and proc.stderr == "", (argv, proc.stderr)


def test_a_broken_pipe_that_is_not_stdout_keeps_its_traceback(monkeypatch):
    from hpcds1mpi.cli import main

    _raise_in_kernels(monkeypatch, BrokenPipeError(32, "Broken pipe"))
    with pytest.raises(BrokenPipeError):
        main(["kernels"])


def test_a_name_a_library_cannot_store_is_one_line_naming_it(monkeypatch, capsys):
    """Where no command refused a name with bytes that are not UTF-8 up front (learn's
    sources), pyarrow's / h5py's UnicodeEncodeError had ended in a traceback."""
    import os

    name = os.fsdecode(b"/data/t\xff.h5")
    monkeypatch.setattr(sys, "argv", ["hpcds1mpi", "kernels", name])
    _raise_in_kernels(monkeypatch, UnicodeEncodeError("utf-8", name, 7, 8,
                                                      "surrogates not allowed"))
    code, err = _main(["kernels"], capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith(
        "hpcds1mpi: error: /data/t\\xff.h5: a name with bytes that are not UTF-8"), err
    _raise_in_kernels(monkeypatch, UnicodeEncodeError("ascii", "é", 0, 1, "ordinal not in "
                                                      "range(128)"))
    with pytest.raises(UnicodeEncodeError):  # any other encoding error is a bug
        from hpcds1mpi.cli import main

        main(["kernels"])


def test_a_name_in_written_text_is_said_as_the_name_not_the_text_around_it(monkeypatch):
    """s28 tester Z8: a script whose PATH line held a folder with bytes that are not UTF-8
    was refused quoting 80 characters of the script (' pipefail\\nexport PATH=...')."""
    import os

    from hpcds1mpi.cli import _undecodable

    monkeypatch.setattr(sys, "argv", ["hpcds1mpi", "recommend", "--emit", "slurm"])
    folder = os.fsdecode(b"/tmp/nonutf\xff\xfe/venv/bin")
    for text in (f"set -o pipefail\nexport PATH='{folder}':$PATH\nexport OMP_NUM_THREADS=2\n",
                 f"cd {folder} && srun x"):
        at = text.index("\udcff")
        exc = UnicodeEncodeError("utf-8", text, at, at + 2, "surrogates not allowed")
        assert _undecodable(exc) == "/tmp/nonutf\\xff\\xfe/venv/bin"


# ------------------------------------------- an option given twice (tester S, s27 #8)

def _toy_cli():
    """A group with a subgroup, options of each sort: one value, a flag, multiple, count."""
    import click

    from hpcds1mpi.cli import refuse_repeated_options

    @click.group()
    def top():
        pass

    @top.group()
    def sub():
        pass

    @sub.command()
    @click.option("--sizes", help="Sizes, e.g. 64,128.")
    @click.option("--out")
    @click.option("--force/--no-force")
    @click.option("--kernel", multiple=True)
    @click.option("-v", "--verbose", count=True)
    def leaf(sizes, out, force, kernel, verbose):
        click.echo(f"{sizes} {out} {force} {kernel} {verbose}")

    return refuse_repeated_options(top)


@pytest.mark.parametrize("args, message", [
    (["--sizes", "64", "--sizes", "128"], "--sizes is given 2 times and takes one value (only "
     "the last would count); give it once (a list is one comma-separated value: --sizes A,B)"),
    (["--out", "a", "--out=b", "--out", "c"], "--out is given 3 times and takes one value"),
    (["--force", "--no-force"], "--force/--no-force is given 2 times; give it once"),
])
def test_a_one_value_option_given_twice_is_refused(args, message):
    from click.testing import CliRunner

    result = CliRunner().invoke(_toy_cli(), ["sub", "leaf", *args])
    assert result.exit_code == 2 and message in result.output, result.output


def test_options_that_add_up_may_repeat_and_help_still_answers():
    from click.testing import CliRunner

    cli = _toy_cli()
    result = CliRunner().invoke(cli, ["sub", "leaf", "--kernel", "a", "--kernel", "b", "-vv"])
    assert result.exit_code == 0 and result.output == "None None False ('a', 'b') 2\n"
    result = CliRunner().invoke(cli, ["sub", "leaf", "--out", "a", "--out", "b", "--help"])
    assert result.exit_code == 0 and "Usage:" in result.output
    assert _refusing_again_changes_nothing(cli)


def _refusing_again_changes_nothing(cli) -> bool:
    """Asking for a command again (LazyGroup does, per lookup) leaves its parser as it was:
    wrapped twice, each lookup would stack one more counting layer on the last."""
    from hpcds1mpi.cli import refuse_repeated_options

    leaf = cli.commands["sub"].commands["leaf"]
    before = leaf.make_parser
    refuse_repeated_options(cli)
    return leaf.make_parser is before


@pytest.mark.parametrize("argv, option", [
    (["sweep", "--kernel", "stencil", "--sizes", "64", "--sizes", "128", "--list"], "--sizes"),
    (["recommend", "--workload", "stencil", "--workload", "gemm", "--size", "64"],
     "--workload"),
    (["telemetry", "export", "t.h5", "--out", "a.csv", "--out", "b.csv"], "--out"),
])
def test_every_command_refuses_a_one_value_option_given_twice(argv, option, capsys):
    # Was: the last one silently won ("1 sizes (128..128)"; an answer for gemm, size 128).
    code, err = _main(argv, capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"hpcds1mpi: error: {option} is given 2 times"), err


@pytest.mark.parametrize("argv, said", [
    (["sweep", "--program", "/no/such/app {size}", "--sizes", "1"], "--command: program"),
    (["tune", "--command", "/no/such/app {size}", "--size", "1", "--launcher", "mpiexec"],
     "--program: program"),
])
def test_the_program_option_has_each_commands_name_and_the_others(argv, said, capsys,
                                                                   tmp_path, monkeypatch):
    """`sweep --program` answered "Did you mean '--no-progress'?", `tune --command` "Did you
    mean '--max-nodes'?": the one option is --command in sweep, --program in tune and
    recommend (s28 tester U 12b). Each now takes the other's name too."""
    monkeypatch.chdir(tmp_path)
    code, err = _main([*argv, "--out", "t.h5"], capsys)
    assert code == 2 and "No such option" not in err and said in err, err
    assert not (tmp_path / "t.h5").exists()


def test_recommend_takes_the_sweeps_name_of_the_program_option(capsys):
    """`recommend --command` answered "Did you mean '--max-nodes'?" (s28 tester U 12b)."""
    code, err = _main(["recommend", "--workload", "stencil", "--size", "64", "--command",
                       "./app {size}", "--program", "./app {size}"], capsys)
    assert code == 2 and "No such option" not in err and "is given 2 times" in err, err


def _with_stdout(argv: list[str], redirect: str, timeout: float = 120, cwd=None):
    """``hpcds1mpi ARGV REDIRECT`` run by a shell (``>&-``, ``> /dev/full``): its status and
    stderr."""
    import shlex

    return subprocess.run(["bash", "-c", shlex.join([hpcds1mpi_exe(), *argv]) + " " + redirect],
                          stderr=subprocess.PIPE, text=True, timeout=timeout, cwd=cwd)


def test_a_closed_stdout_runs_as_if_it_were_dev_null():
    """s32 tester T5: `kernels >&-` died after its work with an AttributeError traceback
    (sys.stdout is None); now it runs as if stdout were /dev/null (stdin and stderr too)."""
    for redirect in (">&-", ">&- 2>&- <&-"):
        proc = _with_stdout(["kernels"], redirect)
        assert proc.returncode == 0 and proc.stderr == "", (redirect, proc.stderr)


def test_a_full_stdout_is_one_line_not_a_traceback():
    """s32 tester T6: stdout on a full disk (/dev/full: ENOSPC on every write) was an OSError
    traceback from click.echo; now the disk-full line, exit 1 (a rerun may succeed)."""
    for argv in (["kernels"], ["--help"]):
        proc = _with_stdout(argv, "> /dev/full")
        assert proc.returncode == 1, (argv, proc.stderr)
        assert proc.stderr == ("hpcds1mpi: error: standard output not written, the disk is "
                               "full (No space left on device); free some space and rerun\n")


def test_a_full_disk_that_is_not_stdout_keeps_its_traceback(monkeypatch):
    """Only stdout's full disk is said here: a writer that let ENOSPC through is a bug."""
    from hpcds1mpi.cli import main

    _raise_in_kernels(monkeypatch, OSError(28, "No space left on device"))
    with pytest.raises(OSError):
        main(["kernels"])


def _cli_status_and_stderr(argv, stderr_file):
    """``hpcds1mpi ARGV`` in this process with its stderr to ``stderr_file``: the exit status."""
    from hpcds1mpi.cli import main

    sys.stderr = open(stderr_file, "w")  # pytest captures sys.stderr itself
    try:
        main(argv)
    except SystemExit as exc:
        return exc.code
    finally:
        sys.stderr.close()
        sys.stderr = sys.__stderr__
    return 0


def test_a_path_in_a_folder_the_user_cannot_enter_is_one_line_not_a_traceback(tmp_path):
    """s34 tester U1: Path.exists() raised PermissionError inside another user's 0700 folder,
    a traceback in ~15 commands; now the line names the folder, whose it is and what to do."""
    import os

    from tests.runtime.test_denied_access import as_nobody

    if os.geteuid() != 0:
        pytest.skip("becomes another user: needs root")
    import tempfile

    shared = tempfile.mkdtemp(prefix="hpcds1mpi-cli-", dir="/tmp")
    try:
        os.chmod(shared, 0o755)
        closed = os.path.join(shared, "priv")
        os.mkdir(closed, 0o700)
        cluster = os.path.join(closed, "cluster.toml")
        with open(cluster, "w") as fh:
            fh.write('[cluster]\nname = "lab"\n')
        stderr_file = os.path.join(shared, "stderr")
        open(stderr_file, "w").close()
        os.chmod(stderr_file, 0o666)
        # the child cannot import what root's Python keeps under /root: import it all here
        _cli_status_and_stderr(["cluster", "--cluster", cluster], stderr_file)
        status = as_nobody(_cli_status_and_stderr, ["cluster", "--cluster", cluster],
                           stderr_file)
        said = open(stderr_file).read()
    finally:
        import shutil

        shutil.rmtree(shared, ignore_errors=True)
    assert status == ("returned", 2), (status, said)
    assert said == (f"hpcds1mpi: error: {cluster}: permission denied (you cannot enter the "
                    f"folder {closed}: owner root, group root, mode drwx------); ask its owner "
                    f"to let you in (chmod o+x {closed}), or use a path outside it (for an "
                    "input, a copy you can read)\n")
