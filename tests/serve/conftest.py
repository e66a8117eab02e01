"""A real ``hpcds1mpi serve`` in a fresh process, on a free loopback port, for the serve tests.

The server is the installed console script (``tests.helpers.hpcds1mpi_exe``), started with
``--port 0`` (the kernel picks a free port; the server prints it once it listens) and its own
state directory and HOME, so a test can check that nothing is written outside the state dir.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers import hpcds1mpi_exe

START_TIMEOUT = 120.0
#: The cluster the shared server offers (tests/serve/data/lab.toml: 4 nodes of the hardware
#: the shipped bundle was measured on).
LAB = Path(__file__).resolve().parent / "data" / "lab.toml"


@dataclass
class Server:
    """A running server: its URL parts, token, process and the file its stderr goes to."""

    proc: subprocess.Popen
    host: str
    port: int
    token: str
    state: Path
    home: Path
    log_path: Path
    tls_context: ssl.SSLContext | None = None
    extra: dict = field(default_factory=dict)

    def connection(self, timeout: float = 60.0) -> http.client.HTTPConnection:
        if self.tls_context is not None:
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout,
                                               context=self.tls_context)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def request(self, method: str, path: str, body=None, *, token: str | None = "default",
                headers: dict | None = None, raw: bytes | None = None):
        """(status, parsed JSON or text, headers) of one request on a fresh connection."""
        hdrs = dict(headers or {})
        if token == "default":
            token = self.token
        if token is not None:
            hdrs["Authorization"] = f"Bearer {token}"
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
        if data is not None:
            hdrs.setdefault("Content-Type", "application/json")
        conn = self.connection()
        try:
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            text = resp.read().decode()
            try:
                payload = json.loads(text)
            except ValueError:
                payload = text
            return resp.status, payload, {k.lower(): v for k, v in resp.getheaders()}
        finally:
            conn.close()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGINT) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def read_until_closed(sock: socket.socket, timeout: float = 30.0) -> bytes:
    """Everything the server sends on ``sock`` until it closes it (or ``timeout`` passes)."""
    sock.settimeout(timeout)
    deadline = time.monotonic() + timeout
    chunks = []
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, socket.timeout):
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def start_server(tmp: Path, *args: str, env: dict | None = None,
                 tls_context: ssl.SSLContext | None = None) -> Server:
    """Start ``hpcds1mpi serve --port 0 --state-dir tmp/state ARGS`` and wait until it listens."""
    tmp.mkdir(parents=True, exist_ok=True)
    state, home = tmp / "state", tmp / "home"
    home.mkdir(exist_ok=True)
    full_env = {k: v for k, v in os.environ.items() if k != "HPCDS1MPI_SERVE_TOKEN"}
    full_env.update({"HOME": str(home), "XDG_STATE_HOME": str(home / ".local" / "state")})
    full_env.pop("SLURM_JOB_ID", None)
    full_env.update(env or {})
    log_path = tmp / "server.log"
    out_path = tmp / "server.out"
    with open(log_path, "wb") as err, open(out_path, "wb") as out:
        proc = subprocess.Popen([hpcds1mpi_exe(), "serve", "--port", "0", "--state-dir",
                                 str(state), *args], stdout=out, stderr=err, env=full_env)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        text = out_path.read_text()
        if "listening on " in text:
            break
        if proc.poll() is not None:
            raise AssertionError(f"serve exited {proc.returncode}: {log_path.read_text()}")
        time.sleep(0.1)
    else:
        proc.kill()
        raise AssertionError(f"serve did not start in {START_TIMEOUT} s: {log_path.read_text()}")
    url = text.split("listening on ")[1].split()[0]
    hostport = url.split("://")[1].rstrip("/")
    host, port = hostport.rsplit(":", 1)
    token = full_env.get("HPCDS1MPI_SERVE_TOKEN") or (state / "token").read_text().strip()
    return Server(proc, host.strip("[]"), int(port), token, state, home, log_path, tls_context,
                  {"url": url, "out": out_path})


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """One server with the shipped bundle, the lab cluster and default limits, shared by the
    serve tests."""
    srv = start_server(tmp_path_factory.mktemp("serve"), "--cluster", str(LAB))
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def tight_server(tmp_path_factory):
    """A server with small limits: 4 KiB bodies, one pending request, 2 s to send a body, no
    answer cache."""
    srv = start_server(tmp_path_factory.mktemp("serve-tight"), "--max-body", "4096",
                       "--max-pending", "1", "--body-timeout", "2", "--cache", "0")
    yield srv
    srv.stop()
