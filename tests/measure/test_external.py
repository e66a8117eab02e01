"""External-program mode: one launch per configuration, exit classified, FOM read."""

from __future__ import annotations

import sys

import pytest

from hpcds1mpi.measure import external
from hpcds1mpi.measure import sweep
from hpcds1mpi.records import telemetry
from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError
from tests.helpers import run_cli

pytestmark = pytest.mark.mpi

APP = """
import os, sys
size = int(sys.argv[1])
rank = int(os.environ.get("PMI_RANK", "0"))
if size == 13:
    sys.exit(3)                                   # a plain failure
if size == 17:
    print("Killed: out of memory", file=sys.stderr); sys.exit(137)
if size == 19:
    import time; time.sleep(60)                   # hangs past the timeout
if rank == 0:
    print(f"threads={os.environ['OMP_NUM_THREADS']} prec={os.environ['HPCDS1MPI_PRECISION']}")
    print(f"GFLOPS: {size * 1.5}")
"""


def test_external_sweep_statuses_fom_and_resume(tmp_path):
    app = tmp_path / "app.py"
    app.write_text(APP)
    out = tmp_path / "app.h5"
    args = ["sweep", "--command", f"{sys.executable} {app} {{size}}", "--label", "myapp",
            "--sizes", "10,13,17,19", "--ranks-per-node", "1,2", "--threads", "2",
            "--precisions", "fp32", "--timeout", "3", "--fom-regex", r"GFLOPS: ([0-9.]+)",
            "--out", str(out), "--no-progress"]
    proc = run_cli(args, timeout=200)
    assert proc.returncode == 0, proc.stderr
    df = telemetry.read_runs(out)
    assert len(df) == 8 and (df["workload"] == "myapp").all() and (df["kind"] == "external").all()
    by = {(int(r.size), int(r.ranks)): r for r in df.itertuples()}
    for ranks in (1, 2):
        assert by[(10, ranks)].status == "ok" and by[(10, ranks)].fom == pytest.approx(15.0)
        assert by[(13, ranks)].status == "failed" and "exit code 3" in by[(13, ranks)].error
        assert by[(17, ranks)].status == "oom"
        assert by[(19, ranks)].status == "timeout"
        assert 2.5 < by[(19, ranks)].runtime_s < 20
    ok = by[(10, 2)]
    assert ok.runtime_s > 0 and ok.cpu_s > 0 and ok.energy_source == "modelled"
    assert "-n 2" in ok.command and str(app) in ok.command
    # Resume: nothing is launched again, nothing duplicated.
    proc = run_cli(args + ["--resume"], timeout=60)
    assert proc.returncode == 0 and "8 already done" in proc.stderr
    assert len(telemetry.read_runs(out)) == 8


def test_placeholders_and_env_reach_the_program(tmp_path):
    spec = sweep.RunSpec("x", 42, Configuration(1, 2, 3, "cpu", "bf16"), 0, (("command", "c"),))
    assert external.format_command("app --n {size} -t {threads} -p {precision} -r {ranks}",
                                   spec) == ["app", "--n", "42", "-t", "3", "-p", "bf16", "-r", "2"]
    with pytest.raises(ConfigError, match="placeholder"):
        external.format_command("app {nope}", spec)


def test_classify_exit_codes():
    base = {"stdout": "", "stderr": "", "timed_out": False}
    assert external.classify({**base, "exit_code": 0}, 5)[0] == "ok"
    assert external.classify({**base, "exit_code": 1, "stderr": "bad\n"}, 5) == \
        ("failed", "exit code 1: bad")
    assert external.classify({**base, "exit_code": 137}, 5)[0] == "oom"
    assert external.classify({**base, "exit_code": 1, "stderr": "std::bad_alloc"}, 5)[0] == "oom"
    assert external.classify({**base, "exit_code": -9, "timed_out": True}, 5)[0] == "timeout"


def test_command_needs_sizes_and_no_plan(tmp_path):
    proc = run_cli(["sweep", "--command", "true", "--out", str(tmp_path / "x.h5")], timeout=60)
    assert proc.returncode != 0 and "--sizes" in proc.stderr
    assert not (tmp_path / "x.h5").exists()
