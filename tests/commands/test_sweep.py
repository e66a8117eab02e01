"""The sweep command: how a program's launches are started (launcher, srun plugin)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hpcds1mpi.schemas.sweep_defaults import UNCAPPED
from tests.helpers import hpcds1mpi_exe

# srun stand-in: write its own argv, drop the options, run the program once.
FAKE_SRUN = """#!/bin/sh
echo "$@" >> "$SRUN_LOG"
while [ $# -gt 0 ]; do
  case "$1" in -c|-n|-N) shift 2;; -*) shift;; *) break;; esac
done
[ $# -gt 0 ] && exec "$@"
echo "slurm 23.02 (fake)"
"""

CLUSTER = """[clusters.site]
mpi = "pmix"
[clusters.site.partitions.p]
cores_per_node = 2
memory_gb = 8
max_nodes = 1
"""


def _sweep(tmp_path, *extra: str, cluster: bool = True) -> tuple[subprocess.CompletedProcess, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "srun").write_text(FAKE_SRUN)
    (bin_dir / "srun").chmod(0o755)
    (tmp_path / "c.toml").write_text(CLUSTER)
    log = tmp_path / "srun.log"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SRUN_LOG": str(log)}
    args = [hpcds1mpi_exe(), "sweep", "--command", f"{sys.executable} -c pass", "--label", "p",
            "--sizes", "1", "--launcher", "srun", "--out", str(tmp_path / "t.h5"),
            "--no-progress", *extra]
    if cluster:
        args += ["--cluster", str(tmp_path / "c.toml")]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    return proc, log.read_text() if log.exists() else ""


def test_a_programs_srun_launch_uses_the_cluster_files_plugin(tmp_path):
    proc, log = _sweep(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "--mpi=pmix" in log.split() and "--mpi=pmi2" not in log
    from hpcds1mpi.records.telemetry import read_runs

    # The run says what bound it: srun's --cpu-bind=cores (it is in the launch line).
    assert "--cpu-bind=cores" in log.split()
    assert list(read_runs(tmp_path / "t.h5")["binding"]) == ["srun --cpu-bind=cores"]


@pytest.mark.parametrize("given, expected", [("none", "--mpi=none"), ("pmi2", "--mpi=pmi2")])
def test_mpi_overrides_the_cluster_file(tmp_path, given, expected):
    proc, log = _sweep(tmp_path, "--mpi", given)
    assert proc.returncode == 0, proc.stderr
    assert expected in log.split()


def test_without_a_cluster_file_the_plugin_is_pmi2(tmp_path):
    proc, log = _sweep(tmp_path, cluster=False)
    assert proc.returncode == 0, proc.stderr
    assert "--mpi=pmi2" in log.split()


def test_mpi_is_refused_for_an_in_process_sweep(tmp_path):
    proc = subprocess.run([hpcds1mpi_exe(), "sweep", "--kernel", "stencil", "--sizes", "8",
                           "--mpi", "pmix", "--out", str(tmp_path / "t.h5")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--mpi" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "t.h5").exists()


# ---- choosing the launcher: bad input is one line, nothing launched, nothing written ----------

def _digest(path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("extra, code, words", [
    (["--mpiexec", "/no/such/mpirun"], 2, "--mpiexec '/no/such/mpirun' not found"),
    (["--mpiexec", "/bin/ls"], 2, "is not an MPI launcher"),
    (["--mpiexec", "/tmp"], 2, "is not an executable file"),
    (["--launcher-args", "--bind-to 'core"], 2, "--launcher-args"),
    (["--launcher-args", "-l", "--launcher", "srun", "--mpiexec", "mpiexec.mpich"], 2,
     "cannot be combined with --launcher srun"),
    (["--command", "touch {mark} 'x"], 2, "cannot be parsed"),
    (["--command", "/no/such/app {size}"], 2, "program '/no/such/app' not found"),
    (["--command", "no-such-app-xyz {size}"], 2, "is not on PATH"),
    (["--command", "{notexec} {size}"], 2, "is not an executable file"),
    # was: the same input run and recorded as size 1 and size 2, "ok 4" (s28 tester T7)
    (["--command", "touch {mark}"], 2, "nothing would differ between sizes 1, 2"),
    (["--command", "touch {mark}", "--workdir", "{tmp}"], 2,
     "nothing would differ between sizes 1, 2"),
    (["--workdir", "{tmp}/missing-{size}"], 2, "is not a folder"),
    (["--time-regex", "HPL"], 2, "--time-regex needs a group"),
])
def test_bad_launch_input_is_refused_before_anything_runs(tmp_path, extra, code, words):
    mark = tmp_path / "launched"
    notexec = tmp_path / "app.sh"
    notexec.write_text("#!/bin/sh\ntouch " + str(mark) + "\n")
    out = tmp_path / "t.h5"
    out.write_bytes(b"an earlier file, kept as it was")
    before = _digest(out)
    argv = ["sweep", "--command", f"touch {mark} {{size}}", "--sizes", "1,2",
            "--ranks-per-node", "1,2", "--out", str(out), "--resume", "--no-progress"]
    for i, token in enumerate(extra):
        extra[i] = token.replace("{mark}", str(mark)).replace("{notexec}", str(notexec)) \
            .replace("{tmp}", str(tmp_path))
    if extra[0] == "--command":
        argv[2] = extra[1]
        extra = extra[2:]
    proc = subprocess.run([hpcds1mpi_exe(), *argv, *extra], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == code, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert words in proc.stderr, proc.stderr
    assert not mark.exists() and _digest(out) == before


@pytest.mark.parametrize("argv, inner", [
    (["hpcds1mpi", "sweep", "--launch", "2", "--kernel", "gemm", "--out", "x.h5"],
     ["--kernel", "gemm", "--out", "x.h5"]),
    (["hpcds1mpi", "sweep", "--launch=2", "--launcher", "mpiexec", "--mpi=pmix", "--out", "x.h5"],
     ["--out", "x.h5"]),
    (["hpcds1mpi", "sweep", "--mpi", "pmi2", "--launcher=srun", "--launch", "1", "--mpiexec",
      "/usr/bin/mpirun", "--out", "x.h5"], ["--mpiexec", "/usr/bin/mpirun", "--out", "x.h5"]),
])
def test_the_supervisors_own_options_are_not_passed_to_the_sweep_it_launches(argv, inner):
    from hpcds1mpi.commands.sweep import _strip_launch

    assert _strip_launch(argv) == inner


@pytest.mark.mpi
def test_a_supervised_sweep_with_a_named_launcher_runs(tmp_path):
    # It used to exit 2: the inner sweep was handed --launcher, which it refuses without --launch.
    out = tmp_path / "x.h5"
    proc = subprocess.run([hpcds1mpi_exe(), "sweep", "--launch", "1", "--launcher", "mpiexec",
                           "--kernel", "gemm", "--sizes", "32", "--ranks-per-node", "1",
                           "--threads", "1", "--precisions", "fp64", "--min-time", "0.01",
                           "--out", str(out), "--no-progress"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    from hpcds1mpi.records import telemetry

    assert len(telemetry.read_runs(out)) > 0


@pytest.mark.parametrize("command", ["sweep", "tune"])
def test_an_out_inside_a_file_is_a_usage_line_before_any_launch(tmp_path, command):
    """sweep said 'free space' with exit 1; tune launched, recorded the run as crashed and
    pointed at a file that could not exist."""
    (tmp_path / "afile").write_text("kept")
    argv = (["sweep", "--kernel", "stencil", "--sizes", "8", "--ranks-per-node", "1",
             "--threads", "1", "--precisions", "fp64"] if command == "sweep" else
            ["tune", "--kernel", "stencil", "--size", "8", "--budget", "1", "--launcher",
             "mpiexec"])
    proc = subprocess.run([hpcds1mpi_exe(), *argv, "--min-time", "0", "--max-repeats", "1",
                           "--out", str(tmp_path / "afile" / "x.h5")], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "afile is not a directory" in proc.stderr and "crashed" not in proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize("how", [["--kernel", "stencil"], ["--kernel", "stencil", "--launch", "2"],
                                 ["--command", "true {size}", "--label", "tt"]])
def test_an_out_inside_a_bundle_is_a_usage_line_before_any_launch(tmp_path, how):
    """sweep --out MODEL/t.h5 wrote its telemetry into the bundle, which learn and train then
    refused (s47 left, as tester M11 for the commands with --model)."""
    import shutil

    from tests.badinput.harness import snapshot
    from tests.helpers import REPO

    model = tmp_path / "bm"
    model.mkdir()
    shutil.copy(REPO / "hpcds1mpi" / "data" / "default_model" / "manifest.json", model)
    before = snapshot(tmp_path)
    proc = subprocess.run([hpcds1mpi_exe(), "sweep", *how, "--sizes", "8", "--ranks-per-node",
                           "1", "--max-repeats", "1", "--out", str(model / "t.h5"),
                           "--no-progress"], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"--out {model / 't.h5'} is inside the model bundle {model}" in proc.stderr
    assert "choose a path outside it" in proc.stderr and not proc.stdout
    assert snapshot(tmp_path) == before


# ---- srun's plugin and what the pre-flight says -------------------------------------------------

#: srun stand-in that knows its plugins: `--mpi=list` names none and pmi2; a launch with any
#: other plugin fails as Slurm's does.
LISTING_SRUN = """#!/bin/sh
printf "%s\\n" "$*" >> "$SRUN_LOG"
if [ "$1" = --mpi=list ]; then printf 'MPI plugin types are...\\n\\tnone\\n\\tpmi2\\n'; exit 0; fi
case " $* " in *" --mpi=none "*|*" --mpi=pmi2 "*) ;; *)
  echo "srun: error: Invalid MPI type, --mpi=list for acceptable types" >&2; exit 1;; esac
while [ $# -gt 0 ]; do case "$1" in -c|-n|-N) shift 2;; -*) shift;; *) break;; esac; done
exec "$@"
"""


def _listing_sweep(tmp_path, mpi: str, ranks: str) -> tuple[subprocess.CompletedProcess, list]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "srun").write_text(LISTING_SRUN)
    (bin_dir / "srun").chmod(0o755)
    log = tmp_path / "srun.log"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("SLURM_")},
           "PATH": f"{bin_dir}:{os.environ['PATH']}", "SRUN_LOG": str(log), "SLURM_JOB_ID": "7"}
    proc = subprocess.run([hpcds1mpi_exe(), "sweep", "--command", "true", "--sizes", "1",
                           "--ranks-per-node", ranks, "--launcher", "srun", "--mpi", mpi,
                           "--max-repeats", "1", "--out", str(tmp_path / "t.h5"),
                           "--no-progress"], env=env, capture_output=True, text=True,
                          timeout=120)
    return proc, log.read_text().splitlines() if log.exists() else []


@pytest.mark.parametrize("ranks", ["1", "2"])
def test_an_srun_plugin_srun_lacks_is_one_line_exit_2_before_anything_runs(tmp_path, ranks):
    """It recorded a failed run and exited 0 (one rank), or blamed --mpiexec (two)."""
    proc, log = _listing_sweep(tmp_path, "bogus", ranks)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert ("srun has no --mpi plugin 'bogus'; `srun --mpi=list` names none, pmi2: pass one "
            "with --mpi") in proc.stderr
    assert log == ["--mpi=list"] and not (tmp_path / "t.h5").exists()


def test_no_progress_hides_the_bar_not_what_the_preflight_found(tmp_path):
    """--no-progress had hidden the pre-flight too: the program's MPI, the probe, and the
    launcher's own additions (Open MPI's --oversubscribe / --allow-run-as-root)."""
    proc, log = _listing_sweep(tmp_path, "pmi2", "1")
    assert proc.returncode == 0, proc.stderr
    assert "hpcds1mpi sweep: program MPI: " in proc.stderr
    assert "hpcds1mpi sweep: a one-task srun --mpi=pmi2 step ran" in proc.stderr
    assert "configs," not in proc.stderr  # the bar itself stays hidden
    from hpcds1mpi.records.telemetry import read_runs

    assert list(read_runs(tmp_path / "t.h5")["status"]) == ["ok"]


def test_resume_with_other_measurement_settings_says_the_recorded_runs_are_kept(tmp_path):
    from tests.helpers import run_cli

    plan = tmp_path / "p.toml"
    text = ('[sweep]\nranks_per_node = [1]\nthreads = [1]\nprecisions = ["fp64"]\n'
            'min_time = 0.0\nmin_repeats = {}\n[[kernel]]\nname = "stencil"\nsizes = [32]\n')
    out = tmp_path / "t.h5"
    plan.write_text(text.format(2))
    assert run_cli(["sweep", "--plan", str(plan), "--out", str(out), "--no-progress"],
                   timeout=120).returncode == 0
    plan.write_text(text.format(1))
    proc = run_cli(["sweep", "--plan", str(plan), "--out", str(out), "--resume",
                    "--no-progress"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    said = [ln for ln in proc.stderr.splitlines() if "measurement settings differ" in ln]
    assert len(said) == 1 and "min_repeats 2 -> 1" in said[0] and "kept as measured" in said[0]


def test_list_says_one_rank_in_the_singular():
    from tests.helpers import run_cli

    proc = run_cli(["sweep", "--kernel", "gemm", "--sizes", "64", "--ranks-per-node", "1",
                    "--threads", "1", "--list"], timeout=60)
    assert proc.returncode == 0 and "launch with at least 1 rank\n" in proc.stdout, proc.stdout


@pytest.mark.parametrize("seconds, shown", [(30.0, "30 s"), (3 * 86400.0, "3.0 days"),
                                            (1e12, "more than a year")])
def test_list_s_estimate_is_in_a_unit_a_reader_takes_in(capsys, seconds, shown):
    """Was: `{estimate / 60:.1f} min` whatever the size ("0.5 min", "4320.0 min")."""
    from types import SimpleNamespace

    from hpcds1mpi.commands.sweep import _print_list

    plan = SimpleNamespace(runs=[SimpleNamespace(workload="gemm", size=64)], max_ranks=1,
                           races=[])
    _print_list(plan, seconds)
    assert f"rough estimate: {shown} (" in capsys.readouterr().out


# ------------------------------- one name, one program (tester S, s27 #1)

FAULTS = os.path.join(os.path.dirname(__file__), "..", "fault_kernels.py")
QUICK = ["--ranks-per-node", "1", "--threads", "1", "--precisions", "fp64",
         "--no-progress"]
ONCE = ["--min-repeats", "1", "--max-repeats", "1", "--min-time", "0", "--warmup", "0"]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([hpcds1mpi_exe(), *args], capture_output=True, text=True,
                          timeout=120)


def _kernel_sweep(out, *extra: str) -> subprocess.CompletedProcess:
    return _run("sweep", "--kernel-module", FAULTS, "--kernel", "fault_sleep", "--sizes", "1",
                *QUICK, "--out", str(out), *extra)


def _program_sweep(out, program: str, label: str, *extra: str, sizes: str = "1"
                   ) -> subprocess.CompletedProcess:
    return _run("sweep", "--command", program, "--label", label, "--sizes", sizes, *QUICK,
                *ONCE, "--out", str(out), *extra)


def _refused(proc, *fragments: str) -> None:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_a_program_labelled_with_a_kernels_name_is_refused(tmp_path):
    proc = _program_sweep(tmp_path / "t.h5", "true {size}", "stencil")
    _refused(proc, "--label 'stencil' is the name of a kernel", "choose another --label")
    assert not (tmp_path / "t.h5").exists()


def test_a_kernel_resumed_into_a_file_of_a_program_under_its_name_is_refused(tmp_path):
    out = tmp_path / "t.h5"
    assert _program_sweep(out, "true {size}", "fault_sleep").returncode == 0
    before = out.read_bytes()
    _refused(_kernel_sweep(out, "--resume"), "holds runs labelled 'fault_sleep' from --command "
             "'true {size}'", "sweep the kernel into another --out")
    assert out.read_bytes() == before


def test_a_program_resumed_into_a_file_of_a_kernel_under_its_label_is_refused(tmp_path):
    out = tmp_path / "t.h5"
    assert _kernel_sweep(out).returncode == 0
    before = out.read_bytes()
    _refused(_program_sweep(out, "true {size}", "fault_sleep", "--resume"),
             "holds runs of 'fault_sleep' from the kernel", "give another --label")
    assert out.read_bytes() == before


def test_another_command_under_a_label_is_refused_after_a_kernel_sweep_in_between(tmp_path):
    # The file's plan attribute named the kernel's plan then, and the command check read it only.
    out = tmp_path / "t.h5"
    assert _program_sweep(out, "true {size}", "app").returncode == 0
    assert _kernel_sweep(out, "--resume").returncode == 0
    before = out.read_bytes()
    _refused(_program_sweep(out, "echo {size}", "app", "--resume"),
             "holds runs of 'app' from --command 'true {size}'")
    assert out.read_bytes() == before


def test_a_merged_file_without_plans_is_judged_by_its_runs_launches(tmp_path):
    shard, merged = tmp_path / "s.h5", tmp_path / "m.h5"
    assert _program_sweep(shard, "true {size}", "app").returncode == 0
    assert _run("telemetry", "merge", str(shard), "--out", str(merged)).returncode == 0
    # merge keeps the sweep's plan now (s30 tester O2): the command is read from it
    _refused(_program_sweep(merged, "echo {size}", "app", "--resume"),
             "the file was measured with --command 'true {size}' (now 'echo {size}')")
    proc = _program_sweep(merged, "true {size}", "app", "--resume", sizes="1,2")
    assert proc.returncode == 0 and "(ok 1; 1 already done)" in proc.stderr, proc.stderr


def test_a_program_sweep_s_list_does_not_ask_for_ranks_to_start_it_under():
    """Was: "launch with at least 4 ranks" for a --command sweep, which launches each run
    itself (four copies of the sweep would have run; s27 tester Q, 7)."""
    from tests.helpers import run_cli

    proc = run_cli(["sweep", "--command", "true {size}", "--label", "tt", "--sizes", "1,2",
                    "--ranks-per-node", "1,2", "--threads", "1", "--list"], timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "launch with at least" not in proc.stdout
    assert "each launched by the sweep itself (up to 2 ranks; start the sweep alone" \
        in proc.stdout and "no rough time: a program has no work model" in proc.stdout


def test_a_sweep_whose_every_run_timed_out_asks_for_more_time_not_another_command(tmp_path):
    """Was: "fix the command" when the command was right and --timeout too short (Q, 6)."""
    from hpcds1mpi.commands.sweep import _refuse_all_failed
    from hpcds1mpi.errors import RuntimeFailure

    with pytest.raises(RuntimeFailure, match=r"timed out \(2; in o.h5\): raise --timeout"):
        _refuse_all_failed({"statuses": {"timeout": 2}}, "o.h5")
    with pytest.raises(RuntimeFailure, match=r"fix what they name \(the command, its input or "
                                              r"--setup\)"):
        _refuse_all_failed({"statuses": {"timeout": 1, "failed": 1}}, "o.h5")
    _refuse_all_failed({"statuses": {"timeout": 1, "ok": 1}}, "o.h5")


def test_a_program_sweep_says_when_configurations_oversubscribe_the_node(tmp_path):
    """Was: 4 ranks on a 2-core node under MPICH recorded ok without a word (152.8 s against
    0.2-0.4 s at 1-2 ranks; s27 tester Q, 8); the kernels' sweep says it."""
    from hpcds1mpi.cluster import detect_local
    from tests.helpers import run_cli

    cores = next(iter(detect_local().partitions.values())).cores_per_node
    proc = run_cli(["sweep", "--command", "true {size}", "--label", "tt", "--sizes", "1",
                    "--ranks-per-node", f"1,{2 * cores}", "--threads", "1", "--min-repeats",
                    "1", "--max-repeats", "1", "--min-time", "0", "--no-progress", "--list"],
                   timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr  # --list: planned, nothing said or run
    # a program whose MPI is unknown: `true` links none, so its ranks are refused (s33 D2)
    (tmp_path / "stand_in.sh").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "stand_in.sh").chmod(0o755)
    proc = run_cli(["sweep", "--command", "./stand_in.sh {size}", "--label", "tt", "--sizes", "1",
                    "--ranks-per-node", f"1,{2 * cores}", "--threads", "1", "--min-repeats",
                    "1", "--max-repeats", "1", "--min-time", "0", "--no-progress",
                    "--out", str(tmp_path / "o.h5")], timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"1 of 2 configuration(s) put more ranks x threads on a node than its {cores} " \
        f"cpu(s) (up to {2 * cores} x 1); they run unbound and oversubscribed" in proc.stderr


@pytest.mark.parametrize("extra", [
    ["--sizes", "150"],  # one size: {size} is only its label
    ["--sizes", "150,250", "--workdir", "runs/{size}"],  # each size's folder holds its input
])
def test_a_size_that_reaches_the_program_or_one_size_alone_is_swept(extra):
    proc = _run("sweep", "--command", "cp2k.psmp -i h2o.inp", "--label", "cp2k", *extra,
                "--list")
    assert proc.returncode == 0, proc.stderr


def test_a_refused_mpiexec_names_the_programs_own_launcher(tmp_path):
    """s32 tester X1: the refusal of a launcher that is none named no launcher that works;
    it now names the one of the program's MPI (Debian's hpcc: Open MPI)."""
    from tests.helpers import run_cli, system_program

    hpcc = system_program("hpcc")
    proc = run_cli(["sweep", "--program", f"{hpcc} {{size}}", "--sizes", "1",
                    "--ranks-per-node", "1", "--mpiexec", "/bin/echo",
                    "--out", str(tmp_path / "t.h5")], timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "is not an MPI launcher" in proc.stderr
    assert "use its launcher: --mpiexec /usr/bin/mpirun.openmpi" in proc.stderr


def test_an_r_programs_mpi_is_read_and_the_wrong_launcher_refused(tmp_path):
    """s32 tester W1: `Rscript mc.R` was "an unknown MPI", swept by the wheel's MPICH mpiexec
    as 1-rank copies recorded ok; its Rmpi links Open MPI, so that launcher is refused."""
    from tests.helpers import run_cli, system_program

    system_program("Rscript")
    script = tmp_path / "mc.R"
    script.write_text("library(Rmpi)\nn <- as.integer(commandArgs(trailingOnly=TRUE)[1])\n"
                      "cat('elapsed', 0.1, 's\\n')\nmpi.quit()\n")
    proc = run_cli(["sweep", "--program", f"Rscript {script} {{size}}", "--sizes", "10",
                    "--ranks-per-node", "1,2", "--time-regex", r"elapsed ([0-9.]+) s",
                    "--out", str(tmp_path / "t.h5")], timeout=180, cwd=tmp_path)
    assert proc.returncode != 0 and "an R program: the Rmpi of" in proc.stderr, proc.stderr
    assert "use its launcher: --mpiexec /usr/bin/mpirun.openmpi" in proc.stderr
    assert not (tmp_path / "t.h5").exists()


def _gemm_given_min_time(tmp_path, min_time: float, size: int):
    """A plan's sweep of gemm ``size`` (1 rank, 1 thread, fp64, no warm-up) with ``min_time``
    and no ``max_repeats``: the finished process and the telemetry file."""
    from tests.helpers import run_cli

    plan, out = tmp_path / "p.toml", tmp_path / "t.h5"
    plan.write_text(f'[sweep]\nmin_time = {min_time}\nwarmup = 0\nranks_per_node = [1]\n'
                    'threads = [1]\nprecisions = ["fp64"]\n[[kernel]]\nname = "gemm"\n'
                    f'sizes = [{size}]\n')
    proc = run_cli(["sweep", "--plan", str(plan), "--out", str(out), "--no-progress"],
                   timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc, out


def test_a_min_time_given_alone_is_measured_and_said(tmp_path):
    """A plan's ``min_time = 2`` had measured gemm 64 for 0.013 s: the default 5 repeats
    capped it, silently (s38 tester B6). Now each run measures it, and one line says why."""
    import h5py

    # gemm 256 takes about a millisecond a repeat: 0.5 s is reached within the lifted cap.
    proc, out = _gemm_given_min_time(tmp_path, 0.5, 256)
    said = [ln for ln in proc.stderr.splitlines() if "given without max_repeats" in ln]
    assert len(said) == 1 and said[0].startswith("hpcds1mpi sweep: note: min_time 0.5 s")
    with h5py.File(out) as f:
        assert f["runs/measured_s"][0] >= 0.5 and 5 < f["runs/repeats"][0] <= UNCAPPED


def test_a_min_time_given_alone_stops_at_the_lifted_cap(tmp_path):
    """The lifted cap is bounded: every repeat is a row of the repeats tables, and a 0.01-ms
    kernel asked for 5 s would otherwise store hundreds of thousands (s38 review of B6)."""
    import h5py

    proc, out = _gemm_given_min_time(tmp_path, 5, 16)
    assert f"{UNCAPPED:,} at most" in proc.stderr
    with h5py.File(out) as f:
        assert f["runs/repeats"][0] == UNCAPPED and f["runs/measured_s"][0] < 5


def test_the_summary_line_shows_a_newline_in_out_escaped():
    """One line, the name's newline as ``\\n`` (s39 tester D11)."""
    from hpcds1mpi.commands.sweep import _summary_line

    line = _summary_line({"configs": 1, "statuses": {"ok": 1}, "sweep_s": 1.0,
                          "measured_s": 0.5}, "t\n1.h5")
    assert "\n" not in line and " into t\\n1.h5 (ok 1" in line


# ------------------------------- a program's label without --label (s41 tester A1)

def _unlabelled_sweep(tmp_path, name: str, *extra: str) -> subprocess.CompletedProcess:
    app = tmp_path / name
    app.write_text("#!/bin/sh\necho $1\n")
    app.chmod(0o755)
    return _run("sweep", "--command", f"{app} {{size}}", "--sizes", "1", *QUICK, *ONCE,
                "--out", str(tmp_path / f"{name}.h5"), *extra)


def _workloads(out) -> set[str]:
    import h5py

    with h5py.File(out) as f:
        return {w.decode() if isinstance(w, bytes) else str(w) for w in f["runs/workload"][:]}


def test_two_programs_swept_without_label_are_two_workloads_each_said(tmp_path):
    """Both had been 'external', silently, and trained as one workload: recommend answered a
    Meep question with NEURON's script (s41 tester A1)."""
    for name in ("first_app", "second_app"):
        proc = _unlabelled_sweep(tmp_path, name)
        assert proc.returncode == 0, proc.stderr
        said = [ln for ln in proc.stderr.splitlines() if "workload label" in ln]
        assert said == [f"hpcds1mpi sweep: workload label {name!r}, the program's file name: "
                        "give --label NAME for another"], proc.stderr
        assert _workloads(tmp_path / f"{name}.h5") == {name}


def test_a_resume_without_label_keeps_the_label_its_file_ran_the_command_under(tmp_path):
    """A file swept before the label came from the file name holds 'external': a resume keeps
    its runs, rather than measuring them again under a second label."""
    assert _unlabelled_sweep(tmp_path, "app", "--label", "external").returncode == 0
    proc = _unlabelled_sweep(tmp_path, "app", "--resume")
    assert proc.returncode == 0, proc.stderr
    assert "workload label 'external', as " in proc.stderr and "(nothing new; 1 already done)" in \
        proc.stderr, proc.stderr
    assert _workloads(tmp_path / "app.h5") == {"external"}


def test_a_listing_with_mpi_outside_an_allocation_lists_and_a_real_sweep_refuses(tmp_path):
    """s44 review R2: `--mpi pmix --list` typed on a login node (no allocation: mpiexec would
    start the ranks there) had exited 2; the dry run is not where the sweep will run."""
    from tests.helpers import error_lines, run_cli

    env = {k: "" for k in os.environ if k.startswith("SLURM_")}
    argv = ["sweep", "--command", "/bin/echo hi", "--sizes", "1", "--ranks-per-node", "1",
            "--mpi", "pmix", "--out", str(tmp_path / "l.h5"), "--no-progress"]
    listed = run_cli([*argv, "--list"], env=env, timeout=120, cwd=tmp_path)
    assert listed.returncode == 0 and "echo: 1 configurations" in listed.stdout, listed.stderr
    swept = run_cli(argv, env=env, timeout=120, cwd=tmp_path)
    assert swept.returncode == 2, swept.stderr
    (line,) = error_lines(swept.stderr)
    assert "outside a Slurm allocation mpiexec starts the ranks" in line
    assert not (tmp_path / "l.h5").exists()
