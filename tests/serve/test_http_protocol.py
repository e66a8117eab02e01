"""The bound on a request's head (``serve/http_protocol``), on the real server: a head over the
limit, at once or a byte stream at a time, is refused with 431 and logged, and the server
answers the next client; heads under the limit and pipelined requests are served."""

from __future__ import annotations

import json
import socket
import time

from hpcds1mpi.serve.http_protocol import HEAD_LIMIT
from tests.serve.conftest import read_until_closed

OK = json.dumps({"workload": "stencil", "size": 140}).encode()


def _head(server, extra: bytes = b"", body: bytes = OK) -> bytes:
    return (b"POST /v1/recommend HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
            + server.token.encode() + b"\r\nContent-Type: application/json\r\n"
            + extra + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n")


def _send_quietly(sock: socket.socket, data: bytes) -> None:
    try:
        sock.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server refused and closed before reading all of it


def test_a_huge_header_is_431_logged_and_the_server_moves_on(server):
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        _send_quietly(sock, _head(server, b"X-Big: " + b"a" * (4 * HEAD_LIMIT) + b"\r\n") + OK)
        reply = read_until_closed(sock)
    assert reply.startswith(b"HTTP/1.1 431"), reply[:200]
    assert b"over 16384 bytes" in reply
    assert "431 request line and headers over 16384 bytes" in server.log()
    assert server.request("POST", "/v1/recommend", {"workload": "stencil", "size": 140})[0] == 200


def test_a_head_that_never_ends_is_refused_while_it_streams(server):
    """No line end, ever: the server must not keep reading (httptools alone would)."""
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        _send_quietly(sock, b"POST /v1/recommend HTTP/1.1\r\nX-Slow: ")
        sent = 0
        while sent < 8 * HEAD_LIMIT:
            try:
                sock.sendall(b"b" * 1024)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += 1024
            time.sleep(0.001)
        reply = read_until_closed(sock)
    assert reply.startswith(b"HTTP/1.1 431"), reply[:200]


def test_many_small_headers_over_the_limit_are_refused(server):
    many = b"".join(b"X-H%d: %s\r\n" % (i, b"c" * 90) for i in range(HEAD_LIMIT // 90))
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        _send_quietly(sock, _head(server, many) + OK)
        reply = read_until_closed(sock)
    assert reply.startswith(b"HTTP/1.1 431"), reply[:200]


def test_heads_under_the_limit_and_pipelined_requests_are_answered(server):
    near = b"X-Near: " + b"d" * (HEAD_LIMIT - 400) + b"\r\n"
    with socket.create_connection((server.host, server.port), timeout=60) as sock:
        # Three requests in one write, the middle one with a head just under the limit: all
        # answered (the bytes of a chunk that ends a request are not held against the next).
        sock.sendall(_head(server) + OK + _head(server, near) + OK
                     + _head(server, b"Connection: close\r\n") + OK)
        reply = read_until_closed(sock, timeout=60)
    assert reply.count(b"HTTP/1.1 200") == 3, reply[:300]


def _closed_within(sock, seconds: float, poke: bytes = b"") -> tuple[float, bytes]:
    """(seconds until the server closed ``sock``, what it sent), sending ``poke`` every 0.3 s."""
    t0, got = time.monotonic(), b""
    sock.settimeout(0.3)
    while time.monotonic() - t0 < seconds:
        try:
            if poke:
                sock.sendall(poke)
            more = sock.recv(65536)
        except socket.timeout:
            continue
        except (BrokenPipeError, ConnectionResetError):
            break
        if not more:
            break
        got += more
    return time.monotonic() - t0, got


def test_a_head_trickled_a_byte_at_a_time_is_408_after_the_timeout(tight_server):
    """A byte every 0.3 s keeps a connection busy (no keep-alive timeout runs mid-request):
    the head must be whole within --body-timeout (2 s here) of its first bytes."""
    with socket.create_connection((tight_server.host, tight_server.port), timeout=30) as sock:
        sock.sendall(b"POST /v1/recommend HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        waited, reply = _closed_within(sock, 20, poke=b"z")
    assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
    assert b"request head not received within 2 s" in reply
    assert 1.5 < waited < 15
    assert "408 request head not received within 2 s" in tight_server.log()
    assert tight_server.request("POST", "/v1/recommend", {"workload": "stencil",
                                                          "size": 140})[0] == 200


def test_a_whole_head_is_not_timed_and_keep_alive_still_answers(tight_server):
    """Two requests 2.5 s apart on one keep-alive connection (past the 2 s head time, within
    the 5 s keep-alive): both answered, no 408."""
    conn = tight_server.connection()
    try:
        for _ in range(2):
            conn.request("GET", "/v1/health")
            resp = conn.getresponse()
            assert resp.status == 200
            resp.read()
            time.sleep(2.5)
    finally:
        conn.close()


def test_a_connection_that_sends_nothing_is_closed_after_the_timeout(tight_server):
    with socket.create_connection((tight_server.host, tight_server.port), timeout=30) as sock:
        waited, got = _closed_within(sock, 20)
    assert 1.5 < waited < 15 and got == b"", (waited, got)
    assert "no request within 5 s" in tight_server.log()  # the keep-alive, longer than 2 s


def test_blank_lines_between_requests_do_not_keep_a_connection(tight_server):
    """The parser skips CR/LF without beginning a request, and each byte reset uvicorn's
    keep-alive timer: a blank line every 0.3 s after an answer held the connection for ever."""
    with socket.create_connection((tight_server.host, tight_server.port), timeout=30) as sock:
        sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200"), first
        waited, got = _closed_within(sock, 20, poke=b"\r\n")
    assert 1.5 < waited < 15, (waited, got)
    assert tight_server.request("GET", "/v1/health", token=None)[0] == 200


def test_a_malformed_request_is_a_one_line_json_400_with_its_reason_logged(server):
    """s39 tester G4: uvicorn answered these with the plain text "Invalid HTTP request
    received." and logged no reason."""
    heads = {b"POST /v1/recommend HTTP/1.1\r\nContent-Length: x\r\n\r\n":
             "Invalid character in Content-Length",
             b"POST /v1/recommend HTTP/1.1\r\nContent-Length: -1\r\n\r\n":
             "Invalid character in Content-Length",
             b"POST /v1/recommend HTTP/1.1\r\nContent-Length: " + b"1" + b"0" * 30 + b"\r\n\r\n":
             "Content-Length overflow",
             b"POST /v1/recommend HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}":
             "Duplicate Content-Length",
             b"POST /v1/recommend HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
             b"Content-Length: 2\r\n\r\n{}": "Content-Length can't be present with",
             b"FOO /v1/recommend HTTP/1.1\r\nHost: x\r\n\r\n": "Invalid method encountered"}
    for head, why in heads.items():
        with socket.create_connection((server.host, server.port), timeout=30) as sock:
            _send_quietly(sock, head)
            reply = read_until_closed(sock)
        status, _, body = reply.partition(b"\r\n\r\n")
        assert status.startswith(b"HTTP/1.1 400") and b"application/json" in status, reply
        error = json.loads(body)["error"]
        assert error.startswith(f"malformed HTTP request ({why}") and "\n" not in error, error
        assert f"400 malformed HTTP request ({why}" in server.log()
    assert server.request("POST", "/v1/recommend", {"workload": "stencil", "size": 140})[0] == 200
