"""The HTTP application: routes, the token check, body and concurrency limits, refusals logged.

Every ``/v1`` route but ``/v1/health`` needs ``Authorization: Bearer <token>``
(:func:`hpcds1mpi.serve.auth.refusal`). A POST body must be ``application/json`` and at most
``max_body`` bytes (413 from the declared length before anything is read, else as soon as the
stream passes the limit); it is then checked by :mod:`hpcds1mpi.serve.schemas` (422 with one
line). A question answered before is answered from the service's cache at once (the very
bytes of a body checked before skip parsing too); one being computed is waited for, not
computed twice; new ones are answered together, as many as are queued
(:mod:`hpcds1mpi.serve.batching`). At most ``max_pending`` requests wait for or run a
computation; the next one is answered 503 with ``Retry-After`` rather than queued without
bound. When no worker process can compute (each refused a bundle that changed on disk since
the start, :mod:`hpcds1mpi.serve.workers`), a computing request is 503 with that reason and
``/v1/health`` says ``degraded`` (503) with it. Each refusal (401, 404, 405, 408,
413, 415, 422, 503, and a client that went away mid-request) is logged on ``hpcds1mpi.serve`` with
its reason; neither a token nor a body is ever logged. A body not sent within ``body_timeout``
seconds is 408.

Nothing here runs a job, opens a path named by a request or writes a file: the answers are
computed from the bundle in memory (:class:`hpcds1mpi.serve.service.Service`), and the console
(``/`` and ``/static/``) is the package's own files, served without a token because it holds
none: the page asks for it.
"""

from __future__ import annotations

import asyncio
import logging
from importlib import resources

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from hpcds1mpi.errors import ConfigError, HpcdsError, RuntimeFailure
from hpcds1mpi.measure.printable import printable
from hpcds1mpi.serve import schemas
from hpcds1mpi.serve.auth import refusal
from hpcds1mpi.serve.batching import DEFAULT_LIMIT, MicroBatch
from hpcds1mpi.serve.service import BATCHED_KINDS
from hpcds1mpi.serve.workers import NoWorker

log = logging.getLogger("hpcds1mpi.serve")

#: Largest request body, bytes (a batch script for /v1/advise fits many times over).
DEFAULT_MAX_BODY = 256 * 1024
#: Requests that may wait for or run a computation at once; more get 503.
DEFAULT_MAX_PENDING = 64
#: Seconds a client has to send its body once its headers are in (408 after).
DEFAULT_BODY_TIMEOUT = 30.0

#: Sent with every response: the console loads only its own files, nothing frames it, and the
#: browser neither sniffs types nor sends a referrer (the URL fragment may hold the token).
SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'none'; script-src 'self'; style-src 'self'; "
                                 b"img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
                                 b"form-action 'none'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


class _SecurityHeaders:
    """Pure ASGI middleware adding :data:`SECURITY_HEADERS` to every response."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []),
                                                  *SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _static_dir() -> str:
    return str(resources.files("hpcds1mpi.serve") / "static")


def shown_path(request: Request) -> str:
    """The request's path as the log shows it: percent-decoded, so its control characters
    escaped (``\\x1b``): an unauthenticated client's ESC[2K must not erase and forge a line
    in the operator's terminal (s39 tester G2)."""
    return printable(request.url.path)


def refused(request: Request, status: int, reason: str, headers: dict | None = None
            ) -> JSONResponse:
    """The refusal answer, ``{"error": reason}``, logged with the request line."""
    client = request.client.host if request.client else "?"
    log.warning("refused %s %s from %s: %d %s", printable(request.method), shown_path(request),
                client, status, printable(reason))
    return JSONResponse({"error": reason}, status_code=status, headers=headers)


async def read_body(request: Request, limit: int) -> bytes:
    """The body, at most ``limit`` bytes.

    Raises:
        RequestError: 413 past the limit (declared or streamed), 415 when not JSON.
    """
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/json":
        raise schemas.RequestError(415, "send the body as Content-Type: application/json")
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise schemas.RequestError(413, f"body of {int(declared)} bytes is over the limit of "
                                        f"{limit} bytes")
    chunks, total = [], 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > limit:
            raise schemas.RequestError(413, f"body is over the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def _within(awaitable, seconds: float):
    """``await awaitable``, TimeoutError after ``seconds``. ``asyncio.timeout`` (3.11) where
    there is one: ``wait_for`` wraps the read in a task of its own, two more event-loop turns
    for every request (measured: a fifth of the application's time on a cached answer)."""
    timeout = getattr(asyncio, "timeout", None)
    if timeout is None:  # Python 3.10
        return await asyncio.wait_for(awaitable, seconds)
    async with timeout(seconds):
        return await awaitable


def create_app(service, token: str, *, max_body: int = DEFAULT_MAX_BODY,
               max_pending: int = DEFAULT_MAX_PENDING,
               body_timeout: float = DEFAULT_BODY_TIMEOUT, workers=None,
               batch_limit: int = DEFAULT_LIMIT) -> Starlette:
    """The ASGI application over ``service``.

    Args:
        service: a :class:`~hpcds1mpi.serve.service.Service` (loaded once, shared).
        token: the bearer token every ``/v1`` call but health must carry.
        max_body: largest request body, bytes.
        max_pending: most requests waiting for or running a computation.
        body_timeout: seconds a client has to send its whole body (a slow client holds a
            connection, not the server).
        workers: a :class:`~hpcds1mpi.serve.workers.Workers` computing new answers in other
            processes; None: the service's one worker thread.
        batch_limit: most new questions answered in one call
            (:class:`~hpcds1mpi.serve.batching.MicroBatch`: what is queued, no waiting).
    """
    state = {"pending": 0}
    inflight: dict[tuple, asyncio.Future] = {}
    schema_doc = schemas.schema_document()

    def authorised(request: Request):
        why = refusal(request.headers.get("authorization"), token)
        if why is None:
            return None
        return refused(request, 401, why, {"WWW-Authenticate": 'Bearer realm="hpcds1mpi"'})

    digest = getattr(workers, "digest", None)
    if digest is not None and digest != getattr(service, "digest", digest):
        raise ConfigError(f"the model bundle {service.model_dir} changed while serve started "
                          "(its workers loaded another); start serve again")
    if workers is None:  # the service's one computing thread
        submit = MicroBatch(service.answer_many, service.executor.submit, limit=batch_limit,
                            together=BATCHED_KINDS).submit
    else:  # worker processes, each batching what reaches it; answers kept here
        workers.store = service.store
        submit = workers.submit

    def _computation(kind: str, req) -> asyncio.Future:
        """The computation of ``req``'s answer: queued for the next micro-batch, or the one
        already running for the same question (a burst of one question computes it once).
        Shielded by the caller, so a client that goes away does not cancel it for others."""
        key = service.key(kind, req)
        running = inflight.get(key)
        if running is None:
            running = asyncio.wrap_future(submit(kind, req))
            inflight[key] = running
            running.add_done_callback(lambda _: inflight.pop(key, None))
        return running

    async def compute(request: Request, kind: str) -> Response:
        """Read, check and answer one POST: the shared path of every computing route."""
        denied = authorised(request)
        if denied is not None:
            return denied
        try:
            try:
                body = await _within(read_body(request, max_body), body_timeout)
            except asyncio.TimeoutError:
                raise schemas.RequestError(408, f"body not received within {body_timeout:g} "
                                                "s") from None
            hit = service.cached_body(kind, body)  # these very bytes, checked before
            if hit is not None:
                return Response(hit, media_type="application/json")
            req = schemas.parse(schemas.REQUESTS[kind], body)
        except schemas.RequestError as exc:
            return refused(request, exc.status, exc.reason)
        except ClientDisconnect:
            refused(request, 499, "client disconnected before its body was read")
            return Response(status_code=400)
        service.remember_body(kind, body, req)
        hit = service.cached(kind, req)
        if hit is not None:
            return Response(hit, media_type="application/json")
        if state["pending"] >= max_pending:
            return refused(request, 503, f"busy: {max_pending} requests in progress; retry "
                                         "shortly", {"Retry-After": "1"})
        state["pending"] += 1
        try:
            body = await asyncio.shield(_computation(kind, req))
        except NoWorker as exc:  # none can compute (refused a changed bundle): not a bug
            return refused(request, 503, " ".join(str(exc).split()))
        except RuntimeFailure as exc:
            log.error("failed %s %s: %s", request.method, shown_path(request), printable(exc))
            return JSONResponse({"error": " ".join(str(exc).split())}, status_code=500)
        except HpcdsError as exc:  # the request cannot be answered: the command's exit 2
            return refused(request, 422, " ".join(schemas.request_wording(str(exc)).split()))
        except Exception:  # a bug: its traceback goes to the log, not to the client
            log.exception("internal error on %s %s", request.method, shown_path(request))
            return JSONResponse({"error": "internal error (logged by the server)"},
                                status_code=500)
        finally:
            state["pending"] -= 1
        return Response(body, media_type="application/json")

    async def recommend(request: Request) -> Response:
        return await compute(request, "recommend")

    async def predict(request: Request) -> Response:
        return await compute(request, "predict")

    async def advise_route(request: Request) -> Response:
        return await compute(request, "advise")

    async def health(request: Request) -> Response:
        why = workers.unable() if workers is not None else None
        if why is None:
            return JSONResponse(schemas.checked("health", {"status": "ok"}))
        return JSONResponse(schemas.checked("health", {"status": "degraded", "reason": why}),
                            status_code=503)

    async def models(request: Request) -> Response:
        return authorised(request) or JSONResponse(schemas.checked("models", service.models()))

    async def schema(request: Request) -> Response:
        return authorised(request) or JSONResponse(schema_doc)

    async def index(request: Request) -> Response:
        return FileResponse(f"{_static_dir()}/index.html", media_type="text/html")

    async def http_error(request: Request, exc: HTTPException) -> Response:
        headers = dict(exc.headers or {})
        reason = str(exc.detail)
        if exc.status_code == 405 and "Allow" in headers:  # RFC 9110: say which methods
            allowed = sorted(m.strip() for m in headers["Allow"].split(","))
            headers["Allow"] = ", ".join(allowed)
            reason = (f"method {request.method} is not allowed on {shown_path(request)}; use "
                      f"{' or '.join(allowed)}")
        return refused(request, exc.status_code, reason, headers or None)

    routes = [
        Route("/", index, methods=["GET"]),
        Route("/v1/health", health, methods=["GET"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/schema", schema, methods=["GET"]),
        Route("/v1/recommend", recommend, methods=["POST"]),
        Route("/v1/predict", predict, methods=["POST"]),
        Route("/v1/advise", advise_route, methods=["POST"]),
        Mount("/static", StaticFiles(directory=_static_dir()), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error})
    app.add_middleware(_SecurityHeaders)
    return app
