"""The HTTP/1.1 protocol the service speaks: uvicorn's httptools one, with a bound on the head.

httptools (llhttp, Node's parser) costs the HTTP process about a third less CPU a request than
h11 (``benchmarks/results/serve.md``), but unlike h11 it sets no limit on a request's head:
a client could stream header bytes without end and the server would keep them all. This
protocol counts the bytes of the head as they arrive and, past :data:`HEAD_LIMIT` (h11's
16 KiB, what the service accepted before), answers ``431`` with a one-line reason, logs it and
closes the connection. A head that arrives whole is measured by its parts (request target,
header names and values); one still arriving is counted by the chunks received while it is
incomplete, so what is held is bounded by the limit plus one chunk.
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


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """:class:`HttpToolsProtocol` that refuses a request head over :data:`HEAD_LIMIT` bytes."""

    def connection_made(self, transport) -> None:  # type: ignore[override]
        self._head_bytes = 0
        self._in_head = True
        self._finished_one = False
        self._parts = 0
        self._refused = False
        super().connection_made(transport)

    def on_message_begin(self) -> None:
        self._parts = 0
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        self._parts += len(url)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._parts += len(name) + len(value) + 4  # ": " and the line end
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        if self._parts > HEAD_LIMIT:
            self._refuse_head()
            raise _HeadTooLarge  # uvicorn's parser-error path then stops reading
        super().on_headers_complete()

    def send_400_response(self, msg: str) -> None:
        if not self._refused:  # a refused head has had its answer
            super().send_400_response(msg)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_head, self._head_bytes, self._finished_one = True, 0, True

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
            self._refuse_head()

    def _refuse_head(self) -> None:
        self._refused = True
        reason = (f"request line and headers over {HEAD_LIMIT} bytes; send fewer or "
                  "shorter headers")
        client = "%s:%d" % self.client if self.client else "?"
        log.warning("refused a request from %s: 431 %s", client, reason)
        body = json.dumps({"error": reason}).encode()
        self.transport.write(b"".join([
            b"HTTP/1.1 431 Request Header Fields Too Large\r\n",
            b"content-type: application/json\r\n",
            b"content-length: " + str(len(body)).encode() + b"\r\n",
            b"connection: close\r\n\r\n", body]))
        self.transport.close()
