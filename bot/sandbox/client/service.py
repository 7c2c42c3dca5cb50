"""``studybot sandbox serve --listen HOST:PORT``: the sandbox manager as an HTTP service.

For running snippets on machines other than the bot's, on a private network. One process holds
one local :class:`Sandbox` (manager, fork server, jails, exactly as the bot would embed it) and
answers:

- ``POST /run`` ``{"code", "timeout", "graph"}`` -> the run's result (the wire form of
  :class:`RunResult`, files in base64); ``503`` with ``{"error", "busy"}`` when no turn came;
- ``GET /healthz`` -> ``{"available", "reason", "status"}`` (no token needed: load balancers);
- ``GET /metrics`` -> Prometheus text: runs by outcome, run seconds, in flight, refusals.

Every request but ``/healthz`` needs ``Authorization: Bearer <SANDBOX_TOKEN>``, compared in
constant time; the service refuses to start without a token. It holds no bot secret: the token
only admits runs, and it is never passed on to the manager or a jail.
"""

from __future__ import annotations

import contextlib
import hmac
import time
from typing import Any

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from bot.log import get_logger
from bot.sandbox.client import Sandbox
from bot.sandbox.errors import SandboxBusy, SandboxUnavailable, SnippetRejected
from bot.sandbox.exercise import ExerciseJob

__all__ = ["make_app"]

log = get_logger(__name__)

_MAX_REQUEST = 1024 * 1024  # a snippet is at most RUN_MAX_BYTES (64 KiB); JSON adds a little


class _Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.runs = Counter(
            "sandbox_runs", "Snippet runs by outcome", ["outcome"], registry=self.registry
        )
        self.seconds = Histogram(
            "sandbox_run_seconds", "Run time in the service, queueing included",
            registry=self.registry,
        )  # fmt: skip
        self.in_flight = Gauge("sandbox_in_flight", "Runs in progress", registry=self.registry)
        self.refused = Counter(
            "sandbox_refused", "Requests refused by reason", ["reason"], registry=self.registry
        )


def make_app(sandbox: Sandbox, token: str) -> web.Application:
    """The aiohttp application around a started ``sandbox``; ``token`` admits requests."""
    if not token:
        raise ValueError("a sandbox service needs a token (SANDBOX_TOKEN)")
    expected = f"Bearer {token}".encode()
    metrics = _Metrics()

    def authorised(request: web.Request) -> bool:
        given = request.headers.get("Authorization", "").encode()
        return hmac.compare_digest(given, expected)

    async def run(request: web.Request) -> web.Response:
        if not authorised(request):
            metrics.refused.labels(reason="token").inc()
            return web.json_response({"error": "missing or wrong token"}, status=401)
        try:
            body: Any = await request.json()
        except ValueError:
            return web.json_response({"error": "the body is not JSON"}, status=400)
        if not isinstance(body, dict) or not isinstance(body.get("code"), str):
            return web.json_response({"error": 'expected {"code": str, ...}'}, status=400)
        timeout = body.get("timeout")
        graph = body.get("graph")
        graph_names = tuple(str(n) for n in graph) if isinstance(graph, list) else None
        job: ExerciseJob | None = None
        if body.get("exercise") is not None:
            try:  # the typed job, checked whole at this boundary
                job = ExerciseJob.from_wire(body["exercise"])
            except ValueError as exc:
                return web.json_response({"error": f"exercise: {exc}"}, status=400)
        metrics.in_flight.inc()
        started = time.perf_counter()
        try:
            result = await sandbox.run(
                body["code"],
                timeout=float(timeout) if isinstance(timeout, int | float) else None,
                graph=graph_names,
                background=body.get("background") is True,
                exercise=job,
            )
        except SnippetRejected as exc:
            metrics.refused.labels(reason="rejected").inc()
            return web.json_response({"error": exc.reason, "rejected": True}, status=422)
        except SandboxBusy as exc:
            metrics.refused.labels(reason="busy").inc()
            return web.json_response({"error": exc.reason, "busy": True}, status=503)
        except SandboxUnavailable as exc:
            metrics.refused.labels(reason="unavailable").inc()
            return web.json_response({"error": exc.reason}, status=503)
        finally:
            metrics.in_flight.dec()
            metrics.seconds.observe(time.perf_counter() - started)
        metrics.runs.labels(outcome=result.outcome.value).inc()
        return web.json_response({"result": result.to_wire()})

    async def healthz(_: web.Request) -> web.Response:
        status: dict[str, Any] = {}
        if sandbox.available:
            with contextlib.suppress(SandboxUnavailable):
                status = await sandbox.status()
        body = {
            "available": sandbox.available,
            "reason": sandbox.unavailable_reason,
            "status": status,
        }
        return web.json_response(body, status=200 if sandbox.available else 503)

    async def metrics_text(request: web.Request) -> web.Response:
        if not authorised(request):
            return web.json_response({"error": "missing or wrong token"}, status=401)
        return web.Response(body=generate_latest(metrics.registry), content_type="text/plain")

    app = web.Application(client_max_size=_MAX_REQUEST)
    app.router.add_post("/run", run)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_text)
    return app
