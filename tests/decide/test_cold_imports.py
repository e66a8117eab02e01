"""A cold ``recommend`` imports neither pandas nor pyarrow nor pydantic (issue 19: they cost a
fresh process about 0.5 s of its 1 s), for the questions users ask: the shipped bundle, a
cluster file with a 10,000-candidate grid, a GPU, a constraint, an unknown workload."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers import REPO

HEAVY = ("pandas", "pyarrow", "pydantic")

#: Runs the CLI in this process and reports which heavy packages it loaded.
_PROBE = (
    "import json, sys\n"
    "from hpcds1mpi.cli import main\n"
    "watch = set(json.loads(sys.argv[2]))\n"
    "sys.argv = ['hpcds1mpi', *json.loads(sys.argv[1])]\n"
    "try:\n"
    "    main()\n"
    "except SystemExit as exc:\n"
    "    code = exc.code\n"
    "else:\n"
    "    code = 0\n"
    "heavy = sorted({m.split('.')[0] for m in sys.modules} & watch)\n"
    "print('\\nPROBE ' + json.dumps({'code': code, 'heavy': heavy}))\n"
)


def _heavy_modules(args: list[str]) -> dict:
    proc = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args), json.dumps(HEAVY)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    line = [x for x in proc.stdout.splitlines() if x.startswith("PROBE ")]
    assert line, proc.stderr[-2000:]
    return json.loads(line[-1][len("PROBE "):])


@pytest.mark.parametrize("args, allowed", [
    (["--workload", "stencil", "--size", "300"], []),
    # A cluster file is checked by its pydantic schema (schemas/cluster.py): a user's file
    # deserves the full check; the scoring of its 10,000-candidate grid needs no pandas.
    (["--workload", "gemm", "--size", "2048", "--cluster",
      str(REPO / "benchmarks" / "clusters" / "gpu64.toml"), "--device", "gpu", "--json"],
     ["pydantic"]),
    (["--workload", "fft", "--size", "128", "--max-nodes", "1", "--deadline", "0.5",
      "--objective", "balanced", "--json"], []),
    (["--workload", "myapp", "--size", "100", "--json"], []),
], ids=["shipped", "gpu-cluster-10k", "constraints", "unknown-workload"])
def test_recommend_imports_no_pandas_pyarrow_or_pydantic(args, allowed, tmp_path, monkeypatch):
    monkeypatch.setenv("HPCDS1MPI_HISTORY", str(tmp_path / "failures.json"))
    monkeypatch.setenv("HPCDS1MPI_CACHE", str(tmp_path / "cache"))
    got = _heavy_modules(["recommend", *args])
    assert got["code"] in (0, None)
    heavy = [m for m in got["heavy"] if m not in allowed]
    assert heavy == [], f"recommend imported {heavy}"


def test_the_probe_sees_an_import():
    """The probe itself can fail: a command that imports pandas is reported."""
    proc = subprocess.run([sys.executable, "-c", "import pandas\n" + _PROBE,
                           json.dumps(["--version"]), json.dumps(HEAVY)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    line = [x for x in proc.stdout.splitlines() if x.startswith("PROBE ")]
    assert "pandas" in json.loads(line[-1][len("PROBE "):])["heavy"]
