"""``benchmarks/serve.py``'s report: the latency bound comes from the busier of the two stages
(the HTTP process, or its worker processes), and a server without workers has one stage."""

from __future__ import annotations

from tests.benchmarks import load_benchmark

bench = load_benchmark("serve")


def _phase(total: float, own: float) -> dict:
    return {"requests": 10, "answered": 10, "cut_short": False, "errors": 0, "p50_ms": 1.0,
            "p90_ms": 2.0, "p99_ms": 3.0, "max_ms": 4.0, "throughput_rps": 5.0,
            "server_cpu_ms_per_request": total, "server_process_cpu_ms_per_request": own,
            "server_runq_wait_ms_per_request": 0.0, "client_cpu_ms_per_request": 0.1,
            "load_after": 0.5, "rss_after_mb": 100.0}


def _report(total: float, own: float) -> str:
    phases = {"distinct": _phase(total, own), "repeated": _phase(0.2, 0.2),
              "distinct again": _phase(total, own)}
    res = {"date": "d", "commit": "c", "dirty": "", "clients": 50, "cache": 1024, "cpus": 2,
           "load_before": 0.5, "load_after": 0.6, "rss_start_mb": 100.0,
           "phases": {"this": phases}, "baseline": {"requests": 1, "median_ms": 1.0,
                                                    "p99_ms": 2.0},
           "baseline_tree": None, "model": None, "workers": None,
           "goal": {"repeated": "met", "errors": "met", "distinct": "missed",
                    "memory_growth_mb": 0.0}}
    return bench.markdown(res)


def test_the_bound_is_the_busier_stage():
    text = _report(1.5, 0.5)  # HTTP process 0.5 ms, its worker 1.0 ms a question
    assert "S = 1.00 ms a question" in text and "50 x S = 50 ms" in text
    assert "| 1.50 ms (0.50) |" in text
    text = _report(1.5, 1.2)  # the HTTP process is the busier one
    assert "S = 1.20 ms a question" in text and "50 x S = 60 ms" in text


def test_a_server_without_workers_is_one_stage():
    assert "S = 1.70 ms a question" in _report(1.7, 1.7)


def test_a_baseline_tree_server_and_its_workers_import_that_tree(tmp_path, monkeypatch):
    """The baseline's spawned workers start fresh interpreters: the tree must come first on
    their path too (PYTHONPATH), not only in the shim of the server's own command."""
    import pytest

    seen = {}

    class Exited:
        returncode = 1

        def __init__(self, command, **kw):
            seen.update(kw, command=command)

        def poll(self):
            return 1

    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    monkeypatch.setattr(bench.subprocess, "Popen", Exited)
    tree = tmp_path / "tree"
    tree.mkdir()
    with pytest.raises(SystemExit, match="exited 1"):
        bench.start_server(tmp_path / "state", str(tree))
    assert seen["env"]["PYTHONPATH"] == f"{tree.resolve()}:/elsewhere"
    with pytest.raises(SystemExit):
        bench.start_server(tmp_path / "mine")
    assert seen["env"]["PYTHONPATH"] == "/elsewhere"
