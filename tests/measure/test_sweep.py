"""The sweep driver: plans, bad input, and the acceptance sweep under ``mpiexec -n 4``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hpcds1mpi.measure import sweep
from hpcds1mpi.records import telemetry
from hpcds1mpi.cluster import Partition
from hpcds1mpi.errors import ConfigError, UnknownKernelError
from tests.helpers import REPO, run_cli, run_mpi, hpcds1mpi_exe

FAULTS = str(REPO / "tests" / "fault_kernels.py")
TWO_CORES = Partition(name="local", cores_per_node=2, memory_gb=8.0)


@pytest.fixture(autouse=True, scope="module")
def _fault_kernels():
    from hpcds1mpi import kernels

    kernels.load_plugin(FAULTS)


def _plan(**sweep_keys) -> dict:
    kernels = sweep_keys.pop("kernel", [{"name": "fault_sleep"}])
    return {"sweep": dict(sweep_keys), "kernel": kernels}


# ---------------------------------------------------------------------------------- plans


def test_parse_ints_forms():
    assert sweep.parse_ints("1,2,4", "x") == [1, 2, 4]
    assert sweep.parse_ints("1..8", "x") == [1, 2, 4, 8]
    assert sweep.parse_ints("3..12", "x") == [3, 6, 12]
    assert sweep.parse_ints([4, 1, 4], "x") == [1, 4]
    for bad in ("", [], "8..2", "0", [0], "a,b", [True]):
        with pytest.raises(ConfigError):
            sweep.parse_ints(bad, "x")


def test_build_plan_counts_and_valid_only():
    plan = sweep.build_plan(_plan(sizes=[1, 2], ranks_per_node=[1, 2, 4], threads=[1, 2],
                                  precisions=["fp64", "fp32"]), TWO_CORES)
    assert len(plan.runs) == 2 * 3 * 2 * 2
    valid = sweep.build_plan(_plan(sizes=[1], valid_only=True), TWO_CORES)
    # ranks x threads <= 2 cores: (1,1), (1,2), (2,1); the kernel's declared fp64 and fp32.
    assert {(r.config.ranks_per_node, r.config.threads) for r in valid.runs} == {(1, 1), (1, 2), (2, 1)}
    assert {r.config.precision for r in valid.runs} == {"fp64", "fp32"}
    assert len({r.run_id for r in plan.runs}) == len(plan.runs)


def test_run_id_is_stable_and_distinct():
    a = sweep.build_plan(_plan(sizes=[1, 2], threads=[1]), TWO_CORES)
    b = sweep.build_plan(_plan(sizes=[1, 2], threads=[1]), TWO_CORES)
    assert [r.run_id for r in a.runs] == [r.run_id for r in b.runs]


@pytest.mark.parametrize("doc, match", [
    (_plan(kernel=[{"name": "nope"}]), "unknown kernel"),
    (_plan(sizes=[]), "empty"),
    (_plan(threads="4..2"), "contradictory"),
    (_plan(min_repeats=5, max_repeats=2), "contradictory"),
    (_plan(precisions=["fp128"]), "unknown"),
    (_plan(sizes=[1], ranks_per_node=[4], valid_only=True), "no configuration"),
    (_plan(timeout=0), "timeout"),
])
def test_bad_plans_raise(doc, match):
    with pytest.raises(ConfigError, match=match):
        sweep.build_plan(doc, TWO_CORES)


def test_unknown_kernel_is_its_own_error():
    with pytest.raises(UnknownKernelError):
        sweep.build_plan(_plan(kernel=[{"name": "nope"}]), TWO_CORES)


def test_reference_plan_names_every_builtin_kernel():
    import tomllib

    from hpcds1mpi.kernels import BUILTIN_MODULES

    doc = sweep.load_plan_file(str(REPO / "plans" / "reference.toml"))
    assert sorted(k["name"] for k in doc["kernel"]) == sorted(BUILTIN_MODULES)
    assert doc["sweep"]["valid_only"] is True
    assert tomllib  # the plan is valid TOML (load_plan_file parsed it)


def test_list_prints_count_and_estimate(tmp_path):
    """--list on the reference plan (restricted to the kernels that exist yet)."""
    from hpcds1mpi import kernels

    text = (REPO / "plans" / "reference.toml").read_text()
    head, *entries = text.split("[[kernel]]")
    keep = [e for e in entries if e.split('"')[1] in kernels.names()]
    plan = tmp_path / "ref.toml"
    plan.write_text(head + "".join("[[kernel]]" + e for e in keep))
    proc = run_cli(["sweep", "--plan", str(plan), "--list"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "total:" in proc.stdout and "rough estimate" in proc.stdout
    doc = sweep.load_plan_file(str(plan))
    built = sweep.build_plan(doc, TWO_CORES)
    assert f"total: {len(built.runs)} configurations" in proc.stdout
    for name in {r.workload for r in built.runs}:
        sizes = {r.size for r in built.runs if r.workload == name}
        assert len(sizes) >= 8, name
        configs = {(r.config.ranks_per_node, r.config.threads) for r in built.runs
                   if r.workload == name}
        assert configs <= {(1, 1), (1, 2), (2, 1)}


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
    telemetry.append(existing, [{"run_id": "x", "machine_id": "m", "workload": "w",
                                 "status": "ok"}])
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
    import h5py

    with h5py.File(existing, "a") as f:
        f.attrs["schema_version"] = 999
    before = existing.read_bytes()
    proc = run_cli(base + ["--kernel", "fault_sleep", "--sizes", "1", "--threads", "1",
                           "--ranks-per-node", "1"], timeout=60)
    assert "schema_version" in _one_line_error(proc)
    assert existing.read_bytes() == before
    # An existing file without --resume is refused.
    plain = tmp_path / "plain.h5"
    telemetry.append(plain, [{"run_id": "x", "machine_id": "m", "workload": "w"}])
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
             & (df["precision"] == "fp64")].set_index("ranks")["runtime_s"]
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
    """GPU code paths on CPU (HPCDS1MPI_FAKE_GPU=1): the run is ok, has no GPU sensor
    (gpu_source none) and its modelled power counts the GPU as busy for the whole run."""
    out = tmp_path / "g.h5"
    proc = run_mpi(1, [hpcds1mpi_exe(), "sweep", "--kernel-module", FAULTS, "--kernel",
                       "stencil", "--sizes", "16", "--devices", "cpu,gpu", "--threads", "1",
                       "--ranks-per-node", "1", "--precisions", "fp64", "--out", str(out),
                       "--no-progress"], timeout=120, env={"HPCDS1MPI_FAKE_GPU": "1"})
    assert proc.returncode == 0, proc.stderr
    df = telemetry.read_runs(out).set_index("device")
    assert (df["status"] == "ok").all()
    assert df.loc["gpu", "gpu_source"] == "none" and df.loc["cpu", "gpu_source"] == ""
    assert df.loc["gpu", "avg_power_w"] > df.loc["cpu", "avg_power_w"] + 300  # 400 W default
    assert "GPUs x" in df.loc["gpu", "power_model"]
