"""``/healthz`` and ``/metrics`` over HTTP (``studybot run --health-port N``).

Health is a set of named async checks (gateway connected, scheduler alive, database
writable); any failing or raising check makes ``/healthz`` answer 503 with which one, so an
orchestrator restarts the bot and an operator sees why.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from bot.log import get_logger
from bot.metrics import Metrics

__all__ = ["Check", "HealthServer"]

log = get_logger(__name__)
Check = Callable[[], Awaitable[bool]]
CHECK_TIMEOUT = 3.0


class HealthServer:
    def __init__(
        self, metrics: Metrics, checks: Mapping[str, Check], *, host: str = "127.0.0.1", port: int
    ) -> None:
        self._metrics = metrics
        self._checks = dict(checks)
        self._host = host
        self._port = port
        self._runner: web.AppRunner | None = None
        self.port = port

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/metrics", self._metrics_view)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._host, self._port)
        await site.start()
        addresses = self._runner.addresses
        if addresses:
            self.port = int(addresses[0][1])  # the real port when asked for port 0
        log.info("health and metrics on http://%s:%d/healthz", self._host, self.port)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def results(self) -> dict[str, bool]:
        async def run(name: str, check: Check) -> tuple[str, bool]:
            try:
                return name, bool(await asyncio.wait_for(check(), CHECK_TIMEOUT))
            except Exception:
                log.warning("health check %s failed", name, exc_info=True)
                return name, False

        pairs = await asyncio.gather(*(run(n, c) for n, c in self._checks.items()))
        return dict(pairs)

    async def _healthz(self, request: web.Request) -> web.Response:
        checks = await self.results()
        healthy = all(checks.values())
        body = {"status": "ok" if healthy else "unhealthy", "checks": checks}
        return web.Response(
            text=json.dumps(body),
            status=200 if healthy else 503,
            content_type="application/json",
        )

    async def _metrics_view(self, request: web.Request) -> web.Response:
        response = web.Response(body=self._metrics.exposition())
        response.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return response
