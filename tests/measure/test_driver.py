"""The in-process driver: bad input, the acceptance sweep under ``mpiexec -n 4``, the
communicator it is given, and faults: random kill -9 with resume, a crashed run retried, a
concurrent writer."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.measure.plan import build_plan
from hpcds1mpi.records import telemetry
from tests.helpers import REPO, hpcds1mpi_exe, mpiexec, run_cli, run_mpi, wait_for_start
from tests.records.telemetry.rows import run_row

FAULTS = str(REPO / "tests" / "fault_kernels.py")


@pytest.fixture(autouse=True, scope="module")
def _fault_kernels():
    from hpcds1mpi import kernels

    kernels.load_plugin(FAULTS)


# ---------------------------------------------------------------------------------- bad input


def _one_line_error(proc):
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("hpcds1mpi: error:")]
    assert len(errors) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return errors[0]


def test_bad_input_one_line_and_file_untouched(tmp_path):
    existing = tmp_path / "t.h5"
    telemetry.append(existing, [run_row(0, "m", workload="w")])  # a valid row (s37 P4)
    before = existing.read_bytes()
    base = ["sweep", "--kernel-module", FAULTS, "--out", str(existing), "--resume",
            "--no-progress"]
    line = _one_line_error(run_cli(base + ["--kernel", "nope"], timeout=60))
    assert "unknown kernel" in line
    line = _one_line_error(run_cli(base + ["--kernel", "fault_sleep", "--threads", "8..2"],
                                   timeout=60))
    assert "contradictory" in line
    line = _one_line_error(run_cli(base + ["--kernel", "fault_sleep", "--sizes", ""],
                                   timeout=60))
    assert "empty" in line
    # More ranks than launched: says how many to launch (on every rank count).
    proc = run_mpi(2, [hpcds1mpi_exe(), *base, "--kernel", "fault_sleep", "--sizes", "1",
                       "--ranks-per-node", "1,4", "--threads", "1"], timeout=60)
    line = _one_line_error(proc)
    assert "mpiexec -n 4" in line
    assert existing.read_bytes() == before
    # A non-HDF5 file and a wrong-schema file for --resume.
    text = tmp_path / "notes.h5"
    text.write_text("not telemetry")
    proc = run_cli(["sweep", "--kernel-module", FAULTS, "--kernel", "fault_sleep", "--sizes",
                    "1", "--threads", "1", "--ranks-per-node", "1", "--out", str(text),
                    "--resume", "--no-progress"], timeout=60)
    assert "not an HDF5" in _one_line_error(proc)
    assert text.read_text() == "not telemetry"
    with h5py.File(existing, "a") as f:
        f.attrs["schema_version"] = 999
    before = existing.read_bytes()
    proc = run_cli(base + ["--kernel", "fault_sleep", "--sizes", "1", "--threads", "1",
                           "--ranks-per-node", "1"], timeout=60)
    assert "schema_version" in _one_line_error(proc)
    assert existing.read_bytes() == before
    # An existing file without --resume is refused.
    plain = tmp_path / "plain.h5"
    telemetry.append(plain, [run_row(0, "m", workload="w")])
    before = plain.read_bytes()
    proc = run_cli(["sweep", "--kernel-module", FAULTS, "--kernel", "fault_sleep", "--sizes",
                    "1", "--ranks-per-node", "1", "--out", str(plain), "--no-progress"],
                   timeout=60)
    assert "--resume" in _one_line_error(proc)
    assert plain.read_bytes() == before


# ---------------------------------------------------------------------------------- acceptance

ACCEPTANCE_PLAN = """
[sweep]
min_time = 0.0
min_repeats = 3
max_repeats = 3
warmup = 1
timeout = 240
ranks_per_node = [1, 2, 4]
threads = [1, 2]
precisions = ["fp64", "fp32"]

[[kernel]]
name = "{first}"
sizes = {first_sizes}

[[kernel]]
name = "{second}"
sizes = {second_sizes}
"""


@pytest.fixture(scope="module")
def acceptance_sweep(tmp_path_factory):
    from hpcds1mpi import kernels

    available = kernels.names()
    if "stencil" in available and "gemm" in available:
        first, first_sizes, second, second_sizes = "stencil", [16, 128], "gemm", [64]
    else:  # the real kernels not there yet: the row/status contract still holds
        first, first_sizes, second, second_sizes = "fault_sleep", [1, 20], "fault_wrong", [1]
    tmp = tmp_path_factory.mktemp("acceptance")
    plan = tmp / "plan.toml"
    plan.write_text(ACCEPTANCE_PLAN.format(first=first, first_sizes=first_sizes, second=second,
                                           second_sizes=second_sizes))
    out = tmp / "t.h5"
    proc = run_mpi(4, [hpcds1mpi_exe(), "sweep", "--plan", str(plan), "--out", str(out),
                       "--kernel-module", FAULTS], timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    expected = {(k, s, r, t, p)
                for k, sizes in ((first, first_sizes), (second, second_sizes))
                for s in sizes for r in (1, 2, 4) for t in (1, 2) for p in ("fp64", "fp32")}
    return out, expected, first, max(first_sizes), proc


def test_acceptance_rows_exact_and_status_set(acceptance_sweep):
    out, expected, _, _, proc = acceptance_sweep
    df = telemetry.read_runs(out)
    got = [(r.workload, int(r.size), int(r.ranks), int(r.threads), r.precision)
           for r in df.itertuples()]
    assert len(got) == len(set(got)) == len(expected)
    assert set(got) == expected
    assert df["status"].isin(["ok", "failed", "timeout", "oom", "unsupported", "wrong"]).all()
    ok = df[df["status"] == "ok"]
    assert len(ok) > 0
    assert (ok["repeats"] == 3).all()
    assert (ok["runtime_min_s"] <= ok["runtime_s"]).all() and (ok["runtime_s"] <= ok["runtime_max_s"]).all()
    assert (ok["cpu_s"] > 0).all() and (ok["peak_rss_mb"] > 10).all()
    assert (ok["energy_source"] == "modelled").all() and (ok["energy_j"] > 0).all()
    assert ok["machine_id"].nunique() == 1
    assert (ok[ok["ranks"] == 1]["mpi_fraction"] < 0.5).all()
    assert ok["work_flops"].notna().all()
    ranks = telemetry.read_detail(out, "ranks")
    # One per-rank row for every rank of every run that ran.
    assert len(ranks) == int(df[df["repeats"] > 0]["ranks"].sum())
    # Binding: distinct cores where ranks x threads fit the 2 cores, "unbound" otherwise.
    row = df[(df["ranks"] == 2) & (df["threads"] == 1)].iloc[0]
    if len(os.sched_getaffinity(0)) >= 2:
        assert row["binding"] in ("r0:0;r1:1", f"r0:{sorted(os.sched_getaffinity(0))[0]};r1:"
                                  f"{sorted(os.sched_getaffinity(0))[1]}")
    assert "configs" in proc.stderr  # the progress bar ran


def test_acceptance_four_ranks_faster_than_one(acceptance_sweep):
    out, _, first, size, _ = acceptance_sweep
    if first != "stencil":
        pytest.skip("stencil kernel not available")
    df = telemetry.read_runs(out)
    sel = df[(df["workload"] == "stencil") & (df["size"] == size) & (df["threads"] == 1)
             & (df["precision"] == "fp64")].set_index("ranks")["runtime_min_s"]
    # The fastest repeat, not the median of 3: one repeat slowed by a neighbour (a shared CI
    # host, hyperthreads) must not decide (s30 flake hunt: 1 and 4 ranks were 5 % apart here).
    cores = len(os.sched_getaffinity(0))
    if cores < 4:
        pytest.skip(f"only {cores} cores: 4 ranks oversubscribe; measured stencil {size}^3 "
                    f"1 rank {sel[1]:.4f} s, 2 ranks {sel[2]:.4f} s, 4 ranks {sel[4]:.4f} s")
    assert sel[4] < sel[1]


@pytest.mark.slurm
def test_two_node_sweep_under_slurm(slurm, tmp_path):
    """Inside a 2-node allocation: node identity from SLURM_NODEID, a 1-node and a 2-node
    sub-communicator, and the Slurm partition recorded."""
    out = tmp_path / "t.h5"
    log = tmp_path / "job.out"
    script = tmp_path / "job.sh"
    script.write_text("\n".join([
        "#!/bin/bash", "#SBATCH -N2 --ntasks-per-node=1", "#SBATCH --time=3",
        f"#SBATCH --output={log}", "set -eu",
        f"srun --mpi=pmi2 --kill-on-bad-exit=1 {hpcds1mpi_exe()} sweep "
        f"--kernel-module {FAULTS} --kernel fault_sleep "
        f"--sizes 5 --nodes 1,2 --ranks-per-node 1 --threads 1 --precisions fp64 "
        f"--out {out} --no-progress", ""]))
    _, state, text = slurm.run_job(lambda: slurm.sbatch(script, cwd=tmp_path), log, timeout=180)
    assert state == "COMPLETED", text or state
    df = telemetry.read_runs(out).set_index("nodes")
    assert sorted(df.index) == [1, 2] and (df["status"] == "ok").all(), df["error"].tolist()
    assert df.loc[2, "ranks"] == 2 and df.loc[1, "ranks"] == 1
    assert df.loc[2, "partition"] == "debug"
    ranks = telemetry.read_detail(out, "ranks")
    two = ranks[ranks["run_id"] == df.loc[2, "run_id"]]
    assert len(two) == 2 and set(two["local_rank"]) == {0}  # one rank on each node


def test_fake_gpu_run_records_gpu_columns(tmp_path):
    """GPU code paths on CPU (HPCDS1MPI_FAKE_GPU=1): the run is ok, is marked as the fake
    device (gpu_source fake: was "none", as a real GPU without NVML, so a model took it for a
    GPU measurement) and its modelled power counts the GPU as busy for the whole run."""
    out = tmp_path / "g.h5"
    proc = run_mpi(1, [hpcds1mpi_exe(), "sweep", "--kernel-module", FAULTS, "--kernel",
                       "stencil", "--sizes", "16", "--devices", "cpu,gpu", "--threads", "1",
                       "--ranks-per-node", "1", "--precisions", "fp64", "--out", str(out),
                       "--no-progress"], timeout=120, env={"HPCDS1MPI_FAKE_GPU": "1"})
    assert proc.returncode == 0, proc.stderr
    df = telemetry.read_runs(out).set_index("device")
    assert (df["status"] == "ok").all()
    assert df.loc["gpu", "gpu_source"] == "fake" and df.loc["cpu", "gpu_source"] == ""
    assert df.loc["gpu", "avg_power_w"] > df.loc["cpu", "avg_power_w"] + 300  # 400 W default
    assert "GPUs x" in df.loc["gpu", "power_model"]


COMM_SELF_SCRIPT = """
import sys
from hpcds1mpi import kernels
from hpcds1mpi.cluster import Partition
from hpcds1mpi.measure.driver import run_inprocess
from hpcds1mpi.measure.plan import build_plan
from hpcds1mpi.runtime.mpi import get_mpi, world

kernels.load_plugin(sys.argv[2])
part = Partition(name="local", cores_per_node=2, memory_gb=8.0)
plan = build_plan({"sweep": {"sizes": [1, 2], "ranks_per_node": [1], "threads": [1],
                             "precisions": ["fp64"], "min_time": 0.0, "max_repeats": 1},
                   "kernel": [{"name": "fault_sleep"}]}, part)
rank = world().Get_rank()
summary = run_inprocess(get_mpi().COMM_SELF, plan, f"{sys.argv[1]}/rank{rank}.h5", part,
                        progress=False)
assert summary["configs"] == 2, summary
"""


def test_driver_sweeps_on_the_communicator_it_is_given(tmp_path):
    """Two ranks, each sweeping on its own COMM_SELF: two files, each written by its rank
    alone with one-rank runs (a driver that took COMM_WORLD itself would write one file)."""
    script = tmp_path / "self.py"
    script.write_text(COMM_SELF_SCRIPT)
    proc = run_mpi(2, [sys.executable, str(script), str(tmp_path), FAULTS], timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for rank in (0, 1):
        df = telemetry.read_runs(tmp_path / f"rank{rank}.h5")
        assert sorted(df["size"]) == [1, 2] and (df["status"] == "ok").all()
        assert (df["ranks"] == 1).all()
        assert telemetry.read_detail(tmp_path / f"rank{rank}.h5", "ranks")["rank"].tolist() == [0, 0]


# ---------------------------------------------------------------------------------- faults


def _popen(nranks: int, args: list[str], env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([mpiexec(), "-n", str(nranks), hpcds1mpi_exe(), "sweep", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, env={**os.environ, **(env or {})})


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # mpiexec and every rank, at once
    except ProcessLookupError:
        pass
    proc.communicate(timeout=30)


def _finished(path: Path) -> dict:
    df = telemetry.read_runs(path)
    return {r.run_id: r.status for r in df.itertuples() if r.status != "interrupted"}


@pytest.mark.mpi
def test_twenty_random_kills_lose_nothing_and_never_duplicate(tmp_path):
    out = tmp_path / "t.h5"
    # 4..128 ms: enough work that the plan is not done before the last kill on a fast machine.
    sizes = "4..128"
    args = ["--kernel-module", FAULTS, "--kernel", "fault_sleep", "--sizes", sizes,
            "--ranks-per-node", "1,2", "--threads", "1", "--precisions", "fp64,fp32",
            "--min-time", "0", "--max-repeats", "1", "--warmup", "1", "--out", str(out),
            "--resume", "--no-progress", "--snapshot-every", "0"]
    from hpcds1mpi import kernels

    kernels.load_plugin(FAULTS)
    doc = {"sweep": {"sizes": sizes, "ranks_per_node": "1,2", "threads": "1",
                     "precisions": "fp64,fp32"}, "kernel": [{"name": "fault_sleep"},
                                                              {"name": "fault_wrong"}]}
    args[3] = "fault_sleep,fault_wrong"
    expected = {r.run_id for r in build_plan(doc, Partition("p", 2, 8.0)).runs}
    rng = random.Random(1234)
    finished_before: dict = {}
    kills_mid_write = 0
    for kill in range(20):
        # Odd kills land inside the n-th snapshot write of this launch: the writer holds each
        # snapshot half-written for 50 ms so the poll below sees it on a fast machine too.
        proc = _popen(2, args, {"HPCDS1MPI_TEST_SNAPSHOT_PAUSE": "0.05"} if kill % 2 else None)
        if kill % 2:
            target, seen, was_there = rng.randint(1, 4), 0, False
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and proc.poll() is None:
                there = bool(list(tmp_path.glob(".t.h5.tmp-*")))
                if there and not was_there:
                    seen += 1
                    if seen == target:
                        kills_mid_write += 1
                        break
                was_there = there
                time.sleep(0.0002)
        else:
            time.sleep(rng.uniform(0.5, 3.0))
        _kill_group(proc)
        if not out.exists():  # killed before the writer created it: nothing ran yet
            assert not finished_before
            continue
        with h5py.File(out, "r") as f:  # the snapshot itself always opens
            assert f.attrs["schema_version"] == telemetry.SCHEMA_VERSION
        finished = _finished(out)
        lost = set(finished_before) - set(finished)
        assert not lost, f"kill {kill}: lost finished runs {lost}"
        assert all(finished[k] == v for k, v in finished_before.items())
        finished_before = finished
    assert kills_mid_write >= 5
    assert len(finished_before) >= 10  # the kills landed while runs were being finished
    proc = _popen(2, args)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()[-2000:]
    df = telemetry.read_runs(out)
    assert len(df) == len(expected) and set(df["run_id"]) == expected  # each exactly once
    assert set(finished_before) <= set(df["run_id"])
    with h5py.File(out, "r") as f:  # exactly once in the file itself, not only after reading
        ids = [x.decode() for x in f["runs/run_id"][()]]
    assert len(ids) == len(set(ids)) == len(expected)
    # A kill of the sweep is no fault of a run: every interrupted run was run again.
    assert set(df["status"]) <= {"ok", "wrong"}
    assert (df[df["workload"] == "fault_wrong"]["status"] == "wrong").all()
    assert not telemetry.journal_path(out).exists() and not telemetry.lock_path(out).exists()


@pytest.mark.mpi
def test_resume_after_kill_reruns_the_interrupted_run(tmp_path):
    out = tmp_path / "t.h5"
    args = ["--kernel-module", FAULTS, "--kernel", "fault_sleep", "--sizes", "5,3000",
            "--ranks-per-node", "1", "--threads", "1", "--precisions", "fp64",
            "--min-time", "0", "--max-repeats", "1", "--warmup", "0", "--out", str(out),
            "--no-progress"]

    def kill_during_the_long_run():
        proc = _popen(1, args + (["--resume"] if out.exists() else []))
        wait_for_start(out, 3000)  # the long run has started
        time.sleep(0.3)
        _kill_group(proc)

    kill_during_the_long_run()
    df = telemetry.read_runs(out).set_index("size")
    assert df.loc[5, "status"] == "ok" and df.loc[3000, "status"] == "interrupted"
    proc = _popen(1, args + ["--resume"])
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()[-2000:]
    assert b"ok 1; 1 already done" in err  # the interrupted run ran again, the ok one did not
    df = telemetry.read_runs(out).set_index("size")
    assert df.loc[3000, "status"] == "ok" and df.loc[3000, "attempt"] == 2
    assert len(df) == 2


def test_runs_to_do_reruns_interrupted_and_crashed_only_when_asked():
    from hpcds1mpi.measure.driver import _runs_to_do
    from hpcds1mpi.records.telemetry import Store

    doc = {"sweep": {"sizes": "1,2,3,4", "ranks_per_node": "1", "threads": "1",
                     "precisions": "fp64"}, "kernel": [{"name": "fault_sleep"}]}
    from hpcds1mpi import kernels

    kernels.load_plugin(FAULTS)
    plan = build_plan(doc, Partition("p", 2, 8.0))
    store = Store()
    statuses = ["ok", "interrupted", "crashed", None]
    for spec, status in zip(plan.runs, statuses):
        if status:
            store.runs[("m", spec.run_id)] = {"status": status, "runtime_s": 0.5}
            store.attempts[("m", spec.run_id)] = 1
    assert _runs_to_do(plan, store, "m") == [1, 3]
    plan.retry_crashed = True
    assert _runs_to_do(plan, store, "m") == [1, 2, 3]
    store.attempts[("m", plan.runs[2].run_id)] = plan.max_attempts
    assert _runs_to_do(plan, store, "m") == [1, 3]


@pytest.mark.mpi
def test_concurrent_writer_gets_lock_error(tmp_path):
    out = tmp_path / "t.h5"
    first = _popen(1, ["--kernel-module", FAULTS, "--kernel", "fault_sleep", "--sizes",
                       "400,401,402,403", "--ranks-per-node", "1", "--threads", "1",
                       "--precisions", "fp64", "--min-time", "0", "--max-repeats", "1",
                       "--out", str(out), "--no-progress"])
    deadline = time.monotonic() + 60
    while not telemetry.writer_alive(out) and time.monotonic() < deadline:
        time.sleep(0.05)
    second = run_cli(["sweep", "--kernel-module", FAULTS, "--kernel", "fault_sleep", "--sizes",
                      "1", "--ranks-per-node", "1", "--threads", "1", "--out", str(out),
                      "--resume", "--no-progress"], timeout=60)
    assert second.returncode != 0
    assert "being written by another process" in second.stderr
    assert len(second.stderr.strip().splitlines()) == 1
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err.decode()[-2000:]
    df = telemetry.read_runs(out)
    assert sorted(df["size"]) == [400, 401, 402, 403] and (df["status"] == "ok").all()


@pytest.mark.mpi
def test_disk_full_ends_the_sweep_with_one_line_and_keeps_every_finished_run(small_disk):
    """No hang (rank 1 used to spin while rank 0's error path wrote again), no traceback, exit 1;
    once space is back, --resume completes the plan with each run exactly once."""
    from tests.helpers import fill_disk

    out = small_disk / "t.h5"
    args = ["--kernel-module", FAULTS, "--kernel", "fault_sleep", "--sizes", "1..64",
            "--ranks-per-node", "1,2", "--threads", "1", "--precisions", "fp64,fp32",
            "--min-time", "0", "--max-repeats", "1", "--warmup", "0", "--out", str(out),
            "--no-progress", "--snapshot-every", "0"]
    for leave in (0, 120 * 1024):  # full at the start; full after a few runs
        filler = fill_disk(small_disk, leave)
        proc = run_mpi(2, [hpcds1mpi_exe(), "sweep", *args, "--resume"], timeout=60)
        # (stdout too: a launcher's own report of a rank that ended early goes there)
        assert proc.returncode == 1, proc.stderr + proc.stdout
        ours = [ln for ln in proc.stderr.splitlines() if ln.startswith("hpcds1mpi")]
        assert len(ours) == 1 and "No space left on device" in ours[0], \
            f"leave={leave}: stderr {proc.stderr!r} stdout {proc.stdout[-2000:]!r}"
        assert "Traceback" not in proc.stderr
        assert not list(small_disk.glob(".t.h5.tmp-*"))  # the torn snapshot gave its space back
        filler.unlink()
        if leave:
            finished = _finished(out)
            assert finished and set(finished.values()) == {"ok"}
    proc = run_mpi(2, [hpcds1mpi_exe(), "sweep", *args, "--resume"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    df = telemetry.read_runs(out)
    assert len(df) == len(set(df["run_id"])) == 2 * 2 * 7 and (df["status"] == "ok").all()
    assert all(df.set_index("run_id").loc[k, "status"] == v for k, v in finished.items())


@pytest.mark.mpi
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_of_an_in_process_sweep_is_one_line_and_interrupted(tmp_path, sig):
    """The terminal's Ctrl-C reaches mpiexec and every rank (their process group); SIGTERM
    reaches mpiexec, which passes it on. Non-zero exit, no traceback, no rank left, the run
    in flight interrupted (re-run by --resume)."""
    import psutil

    out = tmp_path / "t.h5"
    args = ["--kernel-module", FAULTS, "--kernel", "fault_sleep", "--sizes", "5,4000",
            "--ranks-per-node", "2", "--threads", "1", "--precisions", "fp64", "--min-time",
            "0", "--max-repeats", "1", "--warmup", "0", "--out", str(out), "--no-progress"]
    proc = _popen(2, args)
    wait_for_start(out, 4000)  # the long run has started
    ranks = [p.pid for p in psutil.Process(proc.pid).children(recursive=True)]
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    err = err.decode()
    assert proc.returncode != 0 and "Traceback" not in err, err
    ours = [ln for ln in err.splitlines() if ln.startswith("hpcds1mpi")]
    assert len(ours) <= 1, err
    if sig == signal.SIGINT:  # rank 0 says it: the other ranks no longer abort it first
        assert len(ours) == 1 and "interrupted" in ours[0] and str(out) in ours[0] \
            and "--resume" in ours[0], err
    time.sleep(0.2)
    assert not [p for p in ranks if psutil.pid_exists(p)
                and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    df = telemetry.read_runs(out).set_index("size")
    assert df.loc[5, "status"] == "ok" and df.loc[4000, "status"] == "interrupted"


@pytest.mark.mpi
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_plain_sweep_stopped_by_sigterm_or_sigint_says_one_line_and_exits_1(tmp_path, sig):
    """scancel / a walltime send SIGTERM: a sweep started without mpiexec had exited 143
    with nothing said (README: exit 1 and a line). MPICH's own "Abort(1) on node 0 ..."
    line from MPI_Abort may follow it (silencing it made a rank-0-in-a-collective test flaky)."""
    out = tmp_path / "t.h5"
    args = ["--kernel-module", FAULTS, "--kernel", "fault_sleep", "--sizes", "5,4000",
            "--ranks-per-node", "1", "--threads", "1", "--precisions", "fp64", "--min-time",
            "0", "--max-repeats", "1", "--warmup", "0", "--out", str(out), "--no-progress"]
    proc = subprocess.Popen([hpcds1mpi_exe(), "sweep", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_for_start(out, 4000)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.returncode is None:
            _kill_group(proc)
    err = err.decode()
    name = "SIGTERM" if sig == signal.SIGTERM else "SIGINT"
    assert proc.returncode == 1, err
    ours = [ln for ln in err.splitlines() if ln.startswith("hpcds1mpi")]
    assert ours == [f"hpcds1mpi: error: rank 0: interrupted ({name}); the sweep ended, every "
                    f"finished run is kept in {out}, rerun with --resume"], err
    assert "Traceback" not in err
    df = telemetry.read_runs(out).set_index("size")
    assert df.loc[5, "status"] == "ok" and df.loc[4000, "status"] == "interrupted"


@pytest.mark.mpi
def test_ctrl_c_while_rank_0_waits_in_mpi_still_says_it_in_one_line(tmp_path):
    """Rank 0 stuck in a collective never sees the interrupt; the other rank used to abort at
    once with nothing said. It now waits a bounded time for rank 0, then says it itself."""
    out = tmp_path / "t.h5"
    args = ["--kernel-module", FAULTS, "--kernel", "fault_hang", "--sizes", "5,4000",
            "--ranks-per-node", "2", "--threads", "1", "--precisions", "fp64", "--min-time",
            "0", "--max-repeats", "1", "--warmup", "0", "--timeout", "600", "--out", str(out),
            "--no-progress"]
    proc = _popen(2, args)
    try:
        wait_for_start(out, 4000)
        time.sleep(0.5)  # inside the kernel: rank 0 in its Barrier
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.returncode is None:
            _kill_group(proc)
    err = err.decode()
    ours = [ln for ln in err.splitlines() if ln.startswith("hpcds1mpi")]
    assert proc.returncode != 0 and "Traceback" not in err, err
    assert len(ours) == 1 and "interrupted" in ours[0] and "--resume" in ours[0], err
    assert telemetry.read_runs(out).set_index("size").loc[4000, "status"] == "interrupted"


@pytest.mark.mpi
def test_more_ranks_x_threads_than_cpus_is_said_once_on_stderr(tmp_path):
    cpus = len(os.sched_getaffinity(0))
    out = tmp_path / "t.h5"
    proc = run_mpi(2, [hpcds1mpi_exe(), "sweep", "--kernel-module", FAULTS, "--kernel",
                       "fault_sleep", "--sizes", "1,2", "--ranks-per-node", "2", "--threads",
                       f"1,{cpus}", "--precisions", "fp64", "--min-time", "0", "--max-repeats",
                       "1", "--warmup", "0", "--out", str(out), "--no-progress"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    said = [ln for ln in proc.stderr.splitlines() if "oversubscribed" in ln]
    assert len(said) == 1 and f"2 x {cpus}" in said[0], proc.stderr


def test_oversubscribed_line_counts_the_node_cpus_and_under_srun_says_how_to_launch(capsys):
    """Was: under srun the line named one task's CPU ("than its 1 cpu(s)") for a node whose
    step holds 2, and gave no way to measure the configuration bound."""
    from hpcds1mpi.measure.driver import say_oversubscribed

    plan = build_plan({"sweep": {"sizes": [1], "ranks_per_node": [1, 2], "threads": [1, 2],
                                 "precisions": ["fp64"]}, "kernel": [{"name": "stencil"}]},
                      Partition("p", 2, 8.0))
    todo = list(range(len(plan.runs)))
    say_oversubscribed(plan, todo, 2, 2, env={})
    plain = capsys.readouterr().err
    assert "1 of 4 configuration(s)" in plain and "its 2 cpu(s)" in plain
    assert "srun" not in plain
    say_oversubscribed(plan, todo, 1, 1, env={"SLURM_STEP_ID": "0"})
    line = capsys.readouterr().err
    assert line.count("\n") == 1 and "3 of 4" in line
    assert "`srun --cpus-per-task=4` (or --cpu-bind=none)" in line


def test_resume_measures_an_ok_run_without_a_runtime_again():
    """Was: `sweep --resume` counted every ok row as done, a damaged one (NaN or non-positive
    runtime_s, which train refuses) included, so the advice to re-measure could not work."""
    from types import SimpleNamespace

    from hpcds1mpi.measure import driver

    runs = [SimpleNamespace(run_id=f"r{i}") for i in range(6)]
    rows = {"r0": {"status": "ok", "runtime_s": 0.5}, "r1": {"status": "ok", "runtime_s": float("nan")},
            "r2": {"status": "ok", "runtime_s": 0.0}, "r3": {"status": "ok", "runtime_s": None},
            "r4": {"status": "interrupted"}, "r5": {"status": "oom", "runtime_s": float("nan")}}
    store = SimpleNamespace(runs={("m", k): v for k, v in rows.items()}, attempts={})
    plan = SimpleNamespace(runs=runs, retry_crashed=False, max_attempts=1)
    assert driver._runs_to_do(plan, store, "m") == [1, 2, 3, 4]
    assert [driver.settled(rows[f"r{i}"]) for i in range(6)] == [True, False, False, False,
                                                                  False, True]


def test_resume_refuses_a_kernel_whose_name_the_file_holds_a_programs_runs_under(tmp_path):
    """Tester S, s27 #1: `sweep --kernel gemm --resume` into a file of a program labelled gemm
    was accepted, and two `gemm 64 N1xR1xT1` rows of two programs were learnt as one."""
    import json

    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.measure.driver import refuse_program_names

    out = tmp_path / "t.h5"
    plan = json.dumps({"command": "./app {size}", "label": "fault_sleep", "sizes": "1"})
    with telemetry.TelemetryWriter(out, attrs={"plan": plan}):
        pass
    kernel = build_plan({"kernel": [{"name": "fault_sleep", "sizes": [1], "threads": [1],
                                     "ranks_per_node": [1], "precisions": ["fp64"]}]},
                        Partition(name="local", cores_per_node=2, memory_gb=8.0))
    with pytest.raises(ConfigError, match=r"holds runs labelled 'fault_sleep' from --command "
                                          r"'\./app \{size\}'; the kernel fault_sleep's runs"):
        refuse_program_names(kernel, str(out))
    other = tmp_path / "other.h5"
    with telemetry.TelemetryWriter(other, attrs={"plan": plan.replace("fault_sleep", "app")}):
        pass
    refuse_program_names(kernel, str(other))  # another name: nothing to refuse
    refuse_program_names(kernel, str(tmp_path / "new.h5"))


# ---------------------------------------------------------------------------------- long names


def _sweep_or_fail(nranks: int, args: list[str], timeout: float = 90.0
                   ) -> tuple[int, str]:
    """A real ``mpiexec -n nranks`` sweep: its exit code and stderr; one that hangs (a rank
    left waiting in a collective) is killed, every rank with it, and fails the test."""
    proc = _popen(nranks, args)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        pytest.fail(f"sweep {' '.join(args)[-120:]} hung past {timeout}s (a rank waiting)")
    return proc.returncode, err.decode(errors="replace")


def _named(tmp_path: Path, length: int) -> Path:
    """A telemetry file in ``tmp_path`` whose name takes ``length`` bytes."""
    return tmp_path / ("k" * (length - 3) + ".h5")


LONG_NAME_SWEEP = ["--kernel", "fault_sleep", "--kernel-module", FAULTS, "--precisions",
                   "fp64", "--ranks-per-node", "1", "--threads", "1", "--no-progress", "--out"]


@pytest.mark.mpi
def test_a_two_rank_sweep_into_a_255_byte_name_runs_resumes_and_keeps_the_files_mode(tmp_path):
    """s32 tester T1: the journal's name (NAME.journal, 257 bytes for a legal 249-byte NAME)
    was too long; wording that error raised again on rank 0, which never reached the bcast
    that rank 1 waited in: the sweep hung. s32 tester T8: --resume turned a 0600 file 0644."""
    out = _named(tmp_path, 255)
    code, err = _sweep_or_fail(2, ["--sizes", "1", *LONG_NAME_SWEEP, str(out)])
    assert code == 0, err
    os.chmod(out, 0o600)
    code, err = _sweep_or_fail(2, ["--sizes", "1,2", *LONG_NAME_SWEEP, str(out), "--resume"])
    assert code == 0, err
    assert sorted(telemetry.read_runs(out)["size"]) == [1, 2]
    assert out.stat().st_mode & 0o7777 == 0o600
    assert os.listdir(tmp_path) == [out.name]  # journal, lock, temporaries: all gone


@pytest.mark.mpi
def test_a_name_too_long_for_the_file_system_is_refused_by_every_rank_in_one_line(tmp_path):
    out = _named(tmp_path, 256)
    code, err = _sweep_or_fail(2, ["--sizes", "1", *LONG_NAME_SWEEP, str(out)])
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    assert "file name too long (a name of 256 bytes, at most 255)" in lines[0]
    assert os.listdir(tmp_path) == []
