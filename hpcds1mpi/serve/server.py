"""Starting the service: where it listens, TLS, and the checks that keep it private by default.

The socket is bound here, not by uvicorn, so that a taken port is one line of error before any
work, ``--port 0`` gets a free port whose number is printed, and the listening line is printed
only once the socket accepts connections. A host that is not a loopback address is refused
without TLS (the bearer token would cross the network in clear) unless the caller insists
(``allow_plain_http``). Uvicorn serves the application on that socket: its connection cap
(``limit_concurrency``) bounds open connections and its keep-alive timeout drops idle ones. It
speaks HTTP/1.1 through httptools on uvloop (a third less CPU a request than h11 on asyncio),
with bounds on each request's head that httptools lacks, in bytes and in time
(:mod:`hpcds1mpi.serve.http_protocol`), so what is read before the application sees a request
stays bounded.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import ssl
import sys

from hpcds1mpi.errors import ConfigError

log = logging.getLogger("hpcds1mpi.serve")

#: Open connections uvicorn accepts before answering 503 itself (above the app's own cap).
CONNECTION_CAP = 512


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and addresses in 127.0.0.0/8 or ``::1``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_tls(certfile: str | None, keyfile: str | None) -> bool:
    """Whether TLS is on; the pair is loaded once here so a bad one is one line, not a
    traceback from inside the server.

    Raises:
        ConfigError: only one of the two given, or they cannot be loaded as a pair.
    """
    if not certfile and not keyfile:
        return False
    if not (certfile and keyfile):
        raise ConfigError("TLS needs both --certfile and --keyfile")
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(certfile, keyfile)
    except (OSError, ssl.SSLError) as exc:
        why = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or str(exc)
        raise ConfigError(f"cannot use --certfile {certfile} with --keyfile {keyfile} ({why}); "
                          "give a PEM certificate and its private key") from None
    return True


def check_host(host: str, tls: bool, allow_plain_http: bool) -> None:
    """Refuse to expose a plain-HTTP service beyond this machine unless asked to.

    Raises:
        ConfigError: ``host`` is not loopback, TLS is off and ``allow_plain_http`` is False.
    """
    if not is_loopback(host) and not tls and not allow_plain_http:
        raise ConfigError(f"--host {host} would send the token over plain HTTP; add "
                          "--certfile and --keyfile, or --allow-plain-http behind a TLS proxy")


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (0: any free port).

    Raises:
        ConfigError: the address cannot be resolved or bound (in use, not this machine's).
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as exc:
        raise ConfigError(f"--host {host}: cannot resolve it ({exc.strerror}); give an address "
                          "of this machine") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(1024)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port} ({exc.strerror}); pass another "
                          "--port or --host") from None
    sock.set_inheritable(True)
    return sock


def url(sock: socket.socket, host: str, tls: bool) -> str:
    """The base URL a client uses for the bound socket."""
    port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    return f"{'https' if tls else 'http'}://{shown}:{port}/"


def settle_heap() -> None:
    """Move what start-up built (the bundle, numpy, pandas, pydantic: ~1e6 objects) out of
    the garbage collector's reach, so that a full collection walks only what requests made.

    Measured (issue 18): without it, a full collection ran about once per 2,000 cached answers
    and paused the event loop 47-90 ms, which made the 50-client p99 (the 20 slowest requests,
    all waiting on that pause). ``gc.freeze`` is CPython's way to do this; the frozen objects
    live as long as the process anyway.
    """
    import gc

    gc.collect()
    gc.freeze()


def configure_logging() -> None:
    """Our refusals and uvicorn's errors on stderr, one line each (no access log: a busy
    portal would flood it; refusals are what an operator reads)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)


def run(app, sock: socket.socket, *, certfile: str | None, keyfile: str | None,
        head_timeout: float = 30.0) -> None:
    """Serve ``app`` on ``sock`` until SIGINT or SIGTERM (uvicorn's graceful shutdown);
    ``head_timeout``: seconds a request's head may take once begun (408 after)."""
    import uvicorn

    from hpcds1mpi.serve.http_protocol import bounded_protocol

    config = uvicorn.Config(app, ssl_certfile=certfile, ssl_keyfile=keyfile, log_config=None,
                            access_log=False, server_header=False, date_header=True,
                            limit_concurrency=CONNECTION_CAP, timeout_keep_alive=5,
                            lifespan="off", http=bounded_protocol(head_timeout),
                            loop="uvloop")
    class _Server(uvicorn.Server):
        def handle_exit(self, sig, frame):
            super().handle_exit(sig, frame)
            # SIGINT / SIGTERM is how a service is stopped: after the graceful shutdown it
            # exits 0 instead of uvicorn re-raising the signal (exit 130 or death by SIGTERM).
            getattr(self, "_captured_signals", []).clear()

    _Server(config).run(sockets=[sock])
