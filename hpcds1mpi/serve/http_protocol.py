"""The HTTP/1.1 protocol the service speaks: uvicorn's httptools one, with bounds on the head.

httptools (llhttp, Node's parser) costs the HTTP process about a third less CPU a request than
h11 (``benchmarks/results/serve.md``), but unlike h11 it sets no limit on a request's head:
a client could stream header bytes without end and the server would keep them all. This
protocol counts the bytes of the head as they arrive and, past :data:`HEAD_LIMIT` (h11's
16 KiB, what the service accepted before), answers ``431`` with a one-line reason, logs it and
closes the connection. A head that arrives whole is measured by its parts (request target,
header names and values); one still arriving is counted by the chunks received while it is
incomplete, so what is held is bounded by the limit plus one chunk.

Nor does it bound the *time* a head takes, and uvicorn's keep-alive timer runs only from the
end of a response to the next byte, whatever that byte is: a client sending a byte of a head
every few seconds, one that connects and sends nothing, or one that sends a blank line every
few seconds between requests (the parser skips those without starting a request) held its
connection for ever, and 512 such clients would take every connection. So a head begun must
be whole within :attr:`BoundedHttpToolsProtocol.head_timeout` seconds (``serve
--body-timeout``, the time a body gets too) or is answered ``408``, and a connection waiting
for a request (from its opening, or from the end of a response) that begins none within that
time or uvicorn's keep-alive, whichever is longer, is closed; each is logged.
"""

from __future__ import annotations

import json
import logging

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger("hpcds1mpi.serve")

#: Most bytes of a request line and headers read before refusing with 431.
HEAD_LIMIT = 16 * 1024


class _HeadTooLarge(Exception):
    """Raised in a parser callback to stop parsing a refused request."""


class _ReasonKeepingParser:
    """httptools' parser, keeping why it refused a request (``error``): uvicorn answers every
    parser error with the same plain text, "Invalid HTTP request received." (s39 tester G4)."""

    def __init__(self, parser):
        self._parser = parser
        self.error: str | None = None

    def feed_data(self, data: bytes) -> None:
        import httptools

        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            raise
        except httptools.HttpParserError as exc:
            self.error = str(exc).rstrip(".") or type(exc).__name__
            raise

    def __getattr__(self, name: str):
        return getattr(self._parser, name)


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """:class:`HttpToolsProtocol` that refuses a request head over :data:`HEAD_LIMIT` bytes
    or not whole within :attr:`head_timeout` seconds of the connection's waiting for it."""

    #: Seconds from a connection's opening or a response's end to a head's end
    #: (:func:`bounded_protocol` sets it).
    head_timeout: float = 30.0

    def connection_made(self, transport) -> None:  # type: ignore[override]
        self._head_bytes = 0
        self._in_head = False  # from a request's first byte to the end of its head
        self._finished_one = False
        self._parts = 0
        self._refused = False
        self._head_timer = None
        super().connection_made(transport)
        self.parser = _ReasonKeepingParser(self.parser)
        self._start_head_timer()  # waiting for the first request

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # Waiting for the next request, unless a pipelined one's head is already read.
        if not self.transport.is_closing() and not self.pipeline and not self._in_head:
            self._start_head_timer()

    def connection_lost(self, exc) -> None:
        self._stop_head_timer()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        self._in_head, self._parts = True, 0
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        self._parts += len(url)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._parts += len(name) + len(value) + 4  # ": " and the line end
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._stop_head_timer()
        if self._parts > HEAD_LIMIT:
            self._refuse(431, "Request Header Fields Too Large",
                         f"request line and headers over {HEAD_LIMIT} bytes; send fewer or "
                         "shorter headers")
            raise _HeadTooLarge  # uvicorn's parser-error path then stops reading
        super().on_headers_complete()

    def send_400_response(self, msg: str) -> None:
        """A request the parser refused (a method it does not know, a Content-Length that is
        not one whole number, or one beside chunked encoding): the one-line JSON refusal
        every other answers with, its reason logged (uvicorn's is a fixed plain text)."""
        if self._refused:  # a refused head has had its answer
            return
        why = getattr(self.parser, "error", None)
        self._refuse(400, "Bad Request",
                     f"malformed HTTP request{f' ({why})' if why else ''}; send one HTTP/1.1 "
                     "request with a known method and at most one Content-Length, a whole "
                     "number")

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._head_bytes, self._finished_one = 0, True

    def data_received(self, data: bytes) -> None:
        self._finished_one = False
        super().data_received(data)
        if self._refused or not self._in_head or self.parser is None \
                or self.transport.is_closing():
            return
        # A chunk that also ended a request holds an unknown share of the next head: not
        # counted (the bound is then one chunk looser, never unbounded).
        if not self._finished_one:
            self._head_bytes += len(data)
        if self._head_bytes > HEAD_LIMIT:
            self._refuse(431, "Request Header Fields Too Large",
                         f"request line and headers over {HEAD_LIMIT} bytes; send fewer or "
                         "shorter headers")
        else:  # a head has begun and is not whole yet
            self._start_head_timer()

    def _start_head_timer(self) -> None:
        if self._head_timer is None:
            # Waiting with no head begun, a connection keeps at least uvicorn's keep-alive.
            wait = self.head_timeout if self._in_head else \
                max(self.head_timeout, self.timeout_keep_alive)
            self._head_timer = self.loop.call_later(wait, self._head_too_slow)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if self._refused or self.transport.is_closing():
            return
        if self._in_head:
            self._refuse(408, "Request Timeout",
                         f"request head not received within {self.head_timeout:g} s")
        elif not self.cycle or self.cycle.response_complete:  # idle: no request to answer
            self._refused = True
            log.warning("closed a connection from %s: no request within %g s",
                        self._client_text(), max(self.head_timeout, self.timeout_keep_alive))
            self.transport.close()

    def _client_text(self) -> str:
        return "%s:%d" % tuple(self.client[:2]) if self.client else "?"

    def _refuse(self, status: int, phrase: str, reason: str) -> None:
        """Answer ``status`` with ``{"error": reason}``, log it, close the connection."""
        self._refused = True
        self._stop_head_timer()
        log.warning("refused a request from %s: %d %s", self._client_text(), status, reason)
        body = json.dumps({"error": reason}).encode()
        self.transport.write(b"".join([
            f"HTTP/1.1 {status} {phrase}\r\n".encode(),
            b"content-type: application/json\r\n",
            b"content-length: " + str(len(body)).encode() + b"\r\n",
            b"connection: close\r\n\r\n", body]))
        self.transport.close()


def bounded_protocol(head_timeout: float) -> type:
    """:class:`BoundedHttpToolsProtocol` with ``head_timeout`` seconds for a head (uvicorn
    builds the protocol itself, from a class)."""
    return type("BoundedHttpToolsProtocol", (BoundedHttpToolsProtocol,),
                {"head_timeout": float(head_timeout)})
