"""Starting ``hpcds1mpi serve``: loopback by default, no plain HTTP beyond it, TLS with a
certificate and key (a self-signed pair made by the openssl program), a taken port or a bad
pair is one line and exit 2 before any loading, nothing written outside the state directory,
and Ctrl-C stops it cleanly."""

from __future__ import annotations

import os
import signal
import socket
import ssl
import subprocess

import pytest

from hpcds1mpi.serve.server import is_loopback, settle_heap
from tests.helpers import hpcds1mpi_exe, run_cli, system_program
from tests.serve.conftest import start_server


@pytest.mark.parametrize("host,loop", [("127.0.0.1", True), ("127.1.2.3", True), ("::1", True),
                                       ("localhost", True), ("0.0.0.0", False), ("::", False),
                                       ("10.0.0.5", False), ("example.org", False)])
def test_is_loopback(host, loop):
    assert is_loopback(host) is loop


def test_settle_heap_takes_what_is_loaded_out_of_collections():
    import gc

    import pandas

    assert pandas.DataFrame  # something big loaded, as the bundle is in a server
    before = gc.get_freeze_count()
    try:
        settle_heap()
        assert gc.get_freeze_count() > max(before, 50_000)
        assert all(n == 0 for n in gc.get_count()[1:])  # nothing left to age into gen 2
    finally:
        gc.unfreeze()


def _refused(tmp_path, *args, words: str):
    port = [] if "--port" in args else ["--port", "0"]  # an option given twice is refused
    proc = run_cli(["serve", *port, "--state-dir", str(tmp_path / "state"), *args], timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in proc.stderr
    assert not proc.stdout


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_plain_http_beyond_loopback_is_refused(tmp_path, host):
    _refused(tmp_path, "--host", host, words="would send the token over plain HTTP")


def test_half_a_tls_pair_is_refused(tmp_path):
    _refused(tmp_path, "--certfile", str(tmp_path / "cert.pem"), words="needs both")


def test_an_unusable_tls_pair_is_refused(tmp_path):
    (tmp_path / "cert.pem").write_text("not a certificate\n")
    (tmp_path / "key.pem").write_text("not a key\n")
    _refused(tmp_path, "--certfile", str(tmp_path / "cert.pem"), "--keyfile",
             str(tmp_path / "key.pem"), words="cannot use --certfile")


def test_a_taken_port_is_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        proc = run_cli(["serve", "--port", str(port), "--state-dir", str(tmp_path / "s")],
                       timeout=60)
    assert proc.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_short_environment_token_is_refused(tmp_path):
    proc = run_cli(["serve", "--port", "0", "--state-dir", str(tmp_path)], timeout=60,
                   env={"HPCDS1MPI_SERVE_TOKEN": "1234"})
    assert proc.returncode == 2 and "at least 16" in proc.stderr


@pytest.fixture(scope="module")
def tls_pair(tmp_path_factory):
    openssl = system_program("openssl")
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True,
                   timeout=60)
    return cert, key


def test_tls_serves_https_only(tmp_path, tls_pair):
    cert, key = tls_pair
    trusting = ssl.create_default_context(cafile=str(cert))
    srv = start_server(tmp_path, "--certfile", str(cert), "--keyfile", str(key),
                       env={"HPCDS1MPI_SERVE_TOKEN": "t" * 32}, tls_context=trusting)
    try:
        assert srv.extra["url"].startswith("https://127.0.0.1:")
        status, data, _ = srv.request("GET", "/v1/models")
        assert status == 200 and data["places"] == ["local/local"]
        assert srv.request("POST", "/v1/recommend", {"workload": "stencil", "size": 128})[0] \
            == 200
        assert srv.request("GET", "/v1/models", token="u" * 32)[0] == 401
        # A client that does not trust the certificate is stopped by TLS itself.
        srv.tls_context = ssl.create_default_context()
        with pytest.raises(ssl.SSLCertVerificationError):
            srv.request("GET", "/v1/health", token=None)
        # Plain HTTP to the TLS port gets no HTTP answer.
        with socket.create_connection((srv.host, srv.port), timeout=10) as sock:
            sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
            try:
                reply = sock.recv(4096)
            except ConnectionResetError:
                reply = b""
        assert b'"status":"ok"' not in reply
        assert not (srv.state / "token").exists()  # the environment's token: no file made
    finally:
        assert srv.stop() == 0


def test_nothing_written_outside_the_state_dir_and_sigterm_stops_it(tmp_path):
    srv = start_server(tmp_path)
    try:
        for body, status in (({"workload": "stencil", "size": 128, "emit": "slurm"}, 200),
                             ({"workload": "unknown_app", "size": 5, "emit": "slurm",
                               "program": "./app --n {size}"}, 200),
                             # no script can be written: refused, as the command exits 2
                             ({"workload": "gemm", "size": 99999, "emit": "pbs"}, 422)):
            assert srv.request("POST", "/v1/recommend", body)[0] == status, body
        assert srv.request("POST", "/v1/predict", {"workload": "gemm", "size": 512, "configs": [
            {"nodes": 1, "ranks_per_node": 2}]})[0] == 200
        written = [os.path.join(d, f) for d, _, fs in os.walk(srv.home) for f in fs]
        assert written == []
        # The token, and numba's cache of the compiled forest the service scores with.
        assert sorted(p.name for p in srv.state.iterdir()) == ["numba", "token"]
        cached = [f for _, _, fs in os.walk(srv.state / "numba") for f in fs]
        assert cached and all(f.endswith((".nbi", ".nbc")) for f in cached), cached
    finally:
        assert srv.stop(signal.SIGTERM) == 0  # a service manager's stop is a clean exit
    assert "Traceback" not in srv.log()


@pytest.mark.parametrize("args,words", [
    (["--port", "70000"], "give a TCP port in 0..65535"),
    (["--max-body", "10"], "give a size in bytes"),
    (["--max-pending", "0"], "give a request count"),
    (["--model", "/nonexistent/bundle"], "model bundle /nonexistent/bundle not found"),
    (["--cluster", "/nonexistent.toml"], "cluster file not found"),
])
def test_bad_options_are_one_line_and_write_no_token(tmp_path, args, words):
    _refused(tmp_path, *args, words=words)
    assert not (tmp_path / "state" / "token").exists()


def test_a_file_as_state_dir_is_refused(tmp_path):
    (tmp_path / "file").write_text("mine\n")
    proc = run_cli(["serve", "--port", "0", "--state-dir", str(tmp_path / "file")], timeout=60)
    assert proc.returncode == 2 and "is not a directory" in proc.stderr
    assert (tmp_path / "file").read_text() == "mine\n"


@pytest.mark.parametrize("workers", ["1", "0"])
def test_a_full_disk_under_the_state_dir_is_one_line_and_writes_no_token(small_disk, workers):
    """s32 tester T2: on a full disk numba's cache, written while the bundle warms up (in the
    worker, or in the server with --workers 0), failed with a traceback ending in "a worker
    process did not start"; now the disk-full line, exit 1, and no token."""
    from tests.helpers import fill_disk

    state = small_disk / "state"
    fill_disk(small_disk, leave=0)
    proc = run_cli(["serve", "--port", "0", "--workers", workers, "--state-dir", str(state)],
                   timeout=180)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1 and "Traceback" not in proc.stderr, \
        proc.stderr
    assert f"{state}: serve cannot write its token and caches there, the disk is full" \
        in lines[0] and "free some space and rerun" in lines[0]
    assert not (state / "token").exists()


def test_a_full_stdout_is_not_blamed_on_the_state_dir(tmp_path):
    """s32 review: `serve ... > /dev/full` said the state folder's disk was full."""
    with open("/dev/full", "w") as full:
        proc = subprocess.run([hpcds1mpi_exe(), "serve", "--port", "0", "--workers", "0",
                               "--state-dir", str(tmp_path / "state")], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=180)
    assert proc.returncode == 1 and "standard output not written" in proc.stderr, proc.stderr
    assert "serve cannot write its token" not in proc.stderr
