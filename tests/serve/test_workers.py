"""``serve --workers N``: by default one worker process computes new questions, ``--workers 0``
a thread of the server process, and ``--workers 2`` two processes; each answers what the
others answer, a worker that dies costs one 500 and the next request is answered,
and SIGINT stops the server and its workers (exit 0, no process left behind)."""

from __future__ import annotations

import signal
import threading
import time

import psutil
import pytest

from tests.serve.conftest import LAB, start_server

QUESTIONS = [{"workload": "stencil", "size": 160, "objective": "energy"},
             {"workload": "gemm", "size": 700, "emit": "slurm"},
             {"workload": "cg", "size": 40, "objective": "edp", "max_nodes": 2},
             {"workload": "stencil", "size": 4096}]


def _server_with(tmp_path_factory, name: str, workers: str):
    srv = start_server(tmp_path_factory.mktemp(name), "--cluster", str(LAB), "--workers", workers)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def pooled(tmp_path_factory):
    yield from _server_with(tmp_path_factory, "serve-workers", "2")


def _workers(srv) -> list[psutil.Process]:
    return [p for p in psutil.Process(srv.proc.pid).children(recursive=True)
            if "spawn_main" in " ".join(p.cmdline())]


@pytest.fixture(scope="module")
def threaded(tmp_path_factory):
    yield from _server_with(tmp_path_factory, "serve-thread", "0")


def test_one_worker_process_by_default_and_none_with_workers_0(server, threaded):
    assert len(_workers(server)) == 1
    assert "; 1 worker process\n" in server.extra["out"].read_text()
    assert _workers(threaded) == []
    assert "computing in a thread of this process" in threaded.extra["out"].read_text()
    for q in QUESTIONS:
        got = threaded.request("POST", "/v1/recommend", q)
        assert got[0] == 200 and got[:2] == server.request("POST", "/v1/recommend", q)[:2]


def test_two_workers_answer_as_one_does(pooled, server):
    assert len(_workers(pooled)) == 2
    assert "2 worker processes" in pooled.extra["out"].read_text()
    results: dict[int, tuple] = {}

    def ask(i: int) -> None:
        results[i] = pooled.request("POST", "/v1/recommend", QUESTIONS[i])

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(QUESTIONS))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for i, q in enumerate(QUESTIONS):
        status, data, _ = server.request("POST", "/v1/recommend", q)
        assert status == 200 and results[i][:2] == (200, data)
    # asked again: from the server's own cache, as with one thread
    assert pooled.request("POST", "/v1/recommend", QUESTIONS[0])[1] == results[0][1]


@pytest.mark.parametrize("path,body", [
    ("/v1/predict", {"workload": "gemm", "size": 512, "configs": [
        {"nodes": 1, "ranks_per_node": 2}, {"nodes": 9, "ranks_per_node": 1}]}),
    ("/v1/advise", {"script": (LAB.parent / "lab_stencil.sbatch").read_text()}),
    ("/v1/recommend", {"workload": "stencil", "size": 128, "partition": ["nowhere"]}),
])
def test_predict_advise_and_refusals_come_back_from_a_worker_alike(pooled, server, path, body):
    assert pooled.request("POST", path, body)[:2] == server.request("POST", path, body)[:2]


def test_a_dead_worker_costs_one_request_at_most(pooled):
    victim = _workers(pooled)[0]
    victim.kill()
    victim.wait(10)
    first = pooled.request("POST", "/v1/recommend", {"workload": "stencil", "size": 171})
    assert first[0] in (200, 500), first
    if first[0] == 500:
        assert "a worker process died" in first[1]["error"]
        assert "a worker process died; starting a new one" in pooled.log()
    for size in (172, 173):
        status, data, _ = pooled.request("POST", "/v1/recommend",
                                         {"workload": "stencil", "size": size})
        assert status == 200 and data["size"] == size
    deadline = time.monotonic() + 30
    while len(_workers(pooled)) != 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(_workers(pooled)) == 2


def test_sigint_stops_the_workers_too(tmp_path):
    srv = start_server(tmp_path, "--workers", "2")
    workers = _workers(srv)
    assert len(workers) == 2
    assert srv.request("POST", "/v1/recommend", QUESTIONS[0])[0] == 200
    assert srv.stop(signal.SIGINT) == 0
    gone, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive
    assert "Traceback" not in srv.log()


def test_an_error_that_cannot_be_rebuilt_travels_as_its_type_and_text(monkeypatch):
    """An exception that pickles but cannot be unpickled (its __init__ takes two arguments)
    would break the pool when the server rebuilds it: the worker sends a RuntimeError."""
    import pickle

    from hpcds1mpi.serve import workers

    class Stub:
        def answer_many(self, items):
            return [TwoArgs(422, "bad"), b"ok"]

    monkeypatch.setattr(workers, "_service", Stub(), raising=False)
    got = workers._answer_many([("recommend", 1), ("recommend", 2)])
    assert isinstance(got[0], RuntimeError) and "TwoArgs: 422: bad" in str(got[0])
    assert got[1] == b"ok"
    pickle.loads(pickle.dumps(got[0]))


class TwoArgs(Exception):
    """Module level, so it pickles; rebuilding it from its one stored argument fails."""

    def __init__(self, status, reason):
        super().__init__(f"{status}: {reason}")


def test_a_worker_answers_what_arrived_while_it_computed_as_one_batch():
    """The questions waiting in the pipe are one batch (at most ``limit``): the recommend
    questions in one call, a predict in its own; each answer goes back with its id."""
    from multiprocessing import Pipe

    from hpcds1mpi.serve.workers import serve_pipe

    server, worker = Pipe()
    server.send([("recommend", 1, 10), ("recommend", 2, 11)])
    server.send([("predict", 3, 12), ("recommend", 4, 13)])
    server.send([("recommend", 5, 14)])
    server.send(None)
    seen = []

    def answer_many(items):
        seen.append(items)
        return [f"{kind}{req}".encode() for kind, req in items]

    serve_pipe(worker, 4, answer_many)
    assert seen == [[("recommend", 1), ("recommend", 2), ("recommend", 4)], [("predict", 3)],
                    [("recommend", 5)]]
    got = [server.recv() for _ in seen]
    assert got[0] == [(10, b"recommend1"), (11, b"recommend2"), (13, b"recommend4")]
    assert got[1:] == [[(12, b"predict3")], [(14, b"recommend5")]]


def test_a_worker_that_cannot_start_is_an_error_at_start_not_started_again(tmp_path, caplog):
    """Its reason (here the worker's one-line ModelError) is the start's one error, exit 1
    (s32 tester T2: a RuntimeError traceback after a log line saying the same)."""
    from hpcds1mpi.errors import RuntimeFailure
    from hpcds1mpi.serve.workers import Workers

    with pytest.raises(RuntimeFailure, match="a worker process did not start: .*no-such-bundle"):
        Workers(1, str(tmp_path / "no-such-bundle"), None, tmp_path / "state")
    assert "a worker process failed to start" not in caplog.text  # said once, by the error
    assert "starting a new one" not in caplog.text


def _loaded_numba(proc: psutil.Process) -> bool:
    return any("llvmlite" in m.path for m in proc.memory_maps(grouped=True))


def test_the_compiled_forest_is_loaded_where_answers_are_computed(server, threaded):
    """numba (~130 MB a process) is loaded by the process that computes: the worker, or the
    server itself with --workers 0; never by an HTTP process whose workers compute."""
    assert _loaded_numba(_workers(server)[0])
    assert not _loaded_numba(psutil.Process(server.proc.pid))
    assert _loaded_numba(psutil.Process(threaded.proc.pid))


def test_a_worker_started_later_refuses_a_bundle_changed_on_disk(tmp_path):
    """A worker that died was replaced by one loading whatever bundle was on disk then, and
    answered from it while /v1/models named the old one; a damaged one failed every request
    with 500 while /v1/health said ok. Now the new worker refuses (one log line), computing
    requests are 503 with the reason, and health says degraded."""
    import shutil

    from hpcds1mpi.decide.model_bundle import DEFAULT_MODEL

    bundle = shutil.copytree(DEFAULT_MODEL, tmp_path / "bundle")
    srv = start_server(tmp_path / "srv", "--cluster", str(LAB), "--model", str(bundle))
    try:
        assert srv.request("GET", "/v1/health", token=None)[:2] == (200, {"status": "ok"})
        (bundle / "members.pkl").write_bytes(b"damaged")  # another, or a broken, bundle
        victim = _workers(srv)[0]
        victim.kill()
        victim.wait(10)
        deadline = time.monotonic() + 120
        while "a worker process failed to start" not in srv.log() \
                and time.monotonic() < deadline:
            time.sleep(0.2)
        status, data, _ = srv.request("POST", "/v1/recommend",
                                      {"workload": "stencil", "size": 181})
        assert status == 503 and "changed on disk" in data["error"], data
        status, data, _ = srv.request("GET", "/v1/health", token=None)
        assert status == 503 and data["status"] == "degraded" and "changed on disk" in \
            data["reason"]
        log = srv.log()
        assert log.count("a worker process failed to start: the model bundle") == 1
        assert "Traceback" not in log
    finally:
        srv.stop()


def test_a_worker_refuses_a_bundle_other_than_the_servers(tmp_path):
    import shutil

    from hpcds1mpi.decide.model_bundle import DEFAULT_MODEL
    from hpcds1mpi.errors import ModelError
    from hpcds1mpi.serve.service import Service, bundle_digest

    bundle = shutil.copytree(DEFAULT_MODEL, tmp_path / "bundle")
    digest = bundle_digest(bundle)
    assert Service(str(bundle), str(LAB), tmp_path / "a", expect_digest=digest).digest == digest
    (bundle / "README.txt").write_text("another bundle\n")
    with pytest.raises(Exception, match="changed on disk since the server started"):
        Service(str(bundle), str(LAB), tmp_path / "b", expect_digest=digest)
    bundle.rename(tmp_path / "moved")  # s39 tester G4: gone was said as changed
    with pytest.raises(ModelError) as err:
        Service(str(bundle), str(LAB), tmp_path / "c", expect_digest=digest)
    assert str(err.value) == f"cannot read model bundle {bundle} (No such file or directory); " \
        "it was there when the server started: put it back and restart serve"
