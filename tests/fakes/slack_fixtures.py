"""Helpers and pytest fixtures for running a real slack-bolt ``AsyncApp`` against ``FakeSlack``.

The three ways Slack reaches an app, behind one interface::

    async with bolt_delivery("socket", app, fake) as deliver:   # or "in_process", "http"
        ack = await deliver(fake.slash_command(text="quiz"))
        assert ack.status == 200 and ack.latency < 3

* ``in_process``: sign the request and call ``app.async_dispatch`` with it, built as the bot's
  HTTP endpoint builds it (``bot.adapters.slack.http.bolt_request``);
* ``http``: serve the bot's HTTP endpoint (``bot.adapters.slack.http.events_app``) on an
  ephemeral 127.0.0.1 port and POST the signed body to ``/slack/events``;
* ``socket``: connect ``AsyncSocketModeHandler`` to the fake (``apps.connections.open`` -> ws ->
  ``hello``) and send the payload as an envelope; the result is the client's ack.

:class:`AckResult` normalises the app's immediate answer: ``payload`` is what Socket Mode would
carry in the ack (bolt's own rule: a JSON body as a dict, any other non-empty body as
``{"text": body}``, an empty body as ``None``), so one assertion works in all three modes.

To use the fixture in a test module: ``from tests.fakes.slack_fixtures import slack_fake_fixture``
(the fixture is named ``slack_fake``; importing its function registers it).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

import aiohttp
import pytest_asyncio
from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack.http import bolt_request, events_app
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_requests import SlackRequest

__all__ = [
    "DELIVERY_MODES",
    "AckResult",
    "Delivery",
    "DeliveryMode",
    "bolt_delivery",
    "dispatch_signed",
    "make_bolt_app",
    "post_signed",
    "serve_bolt_app",
    "slack_fake_fixture",
    "socket_mode_handler",
]

DeliveryMode = Literal["in_process", "http", "socket"]
DELIVERY_MODES: tuple[DeliveryMode, ...] = ("in_process", "http", "socket")


@dataclass(frozen=True)
class AckResult:
    """The app's immediate answer to one delivered request."""

    mode: DeliveryMode
    status: int
    body: str
    payload: dict[str, Any] | None
    latency: float

    @property
    def text(self) -> str | None:
        return None if self.payload is None else self.payload.get("text")


def _payload_of(body: str, content_type: str) -> dict[str, Any] | None:
    """What bolt's Socket Mode adapter would put in the ack for this HTTP response."""
    if not body:
        return None
    if content_type.startswith("application/json"):
        parsed = json.loads(body)
        return parsed if isinstance(parsed, dict) else {"value": parsed}
    return {"text": body}


def make_bolt_app(fake: FakeSlack, **kwargs: Any) -> AsyncApp:
    """An ``AsyncApp`` wired as production should wire it, but pointed at ``fake``."""
    client = AsyncWebClient(token=fake.bot_token, base_url=fake.api_url)
    kwargs.setdefault("name", "studybot-test")
    return AsyncApp(client=client, signing_secret=fake.signing_secret, **kwargs)


async def dispatch_signed(
    app: AsyncApp,
    request: SlackRequest,
    signing_secret: str,
    *,
    valid: bool = True,
    timestamp: int | None = None,
) -> BoltResponse:
    """Sign ``request`` and run it through ``app.async_dispatch`` (HTTP mode, in process)."""
    headers, body = request.signed(signing_secret, valid=valid, timestamp=timestamp)
    return await app.async_dispatch(bolt_request(body, headers=dict(headers)))


@asynccontextmanager
async def serve_bolt_app(app: AsyncApp, path: str = "/slack/events") -> AsyncIterator[str]:
    """Serve the bot's events endpoint for ``app`` on an ephemeral port; yields its URL."""
    runner = web.AppRunner(events_app(app, path), shutdown_timeout=1.0, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        await runner.cleanup()


async def post_signed(
    url: str,
    request: SlackRequest,
    signing_secret: str,
    *,
    valid: bool = True,
    timestamp: int | None = None,
    session: aiohttp.ClientSession | None = None,
) -> tuple[int, str, str]:
    """POST the signed request to ``url``; returns ``(status, body, content_type)``."""
    headers, body = request.signed(signing_secret, valid=valid, timestamp=timestamp)
    own = session is None
    session = session or aiohttp.ClientSession()
    try:
        async with session.post(url, data=body.encode(), headers=headers) as resp:
            return resp.status, await resp.text(), resp.content_type
    finally:
        if own:
            await session.close()


@asynccontextmanager
async def socket_mode_handler(
    app: AsyncApp, fake: FakeSlack, *, ping_interval: float = 10.0
) -> AsyncIterator[AsyncSocketModeHandler]:
    """Connect an ``AsyncSocketModeHandler`` to the fake; closes it on exit.

    The handler must be built inside a running loop (its client creates an aiohttp session and
    a task in ``__init__``). Yields once the fake has accepted the websocket and sent ``hello``.
    """
    before = len(fake.socket_connections)
    handler = AsyncSocketModeHandler(app, app_token=fake.app_token, ping_interval=ping_interval)
    try:
        await handler.connect_async()
        await fake.wait_for_socket_connection(count=before + 1)
        yield handler
    finally:
        await handler.close_async()


class Delivery:
    """Deliver a :class:`SlackRequest` to the app and return its :class:`AckResult`."""

    mode: DeliveryMode

    async def __call__(self, request: SlackRequest) -> AckResult:
        raise NotImplementedError


class _InProcess(Delivery):
    mode: DeliveryMode = "in_process"

    def __init__(self, app: AsyncApp, signing_secret: str) -> None:
        self._app = app
        self._secret = signing_secret

    async def __call__(self, request: SlackRequest) -> AckResult:
        start = time.monotonic()
        resp = await dispatch_signed(self._app, request, self._secret)
        content_type = (resp.headers.get("content-type") or [""])[0]
        return AckResult(
            self.mode,
            resp.status,
            resp.body,
            _payload_of(resp.body, content_type),
            time.monotonic() - start,
        )


class _Http(Delivery):
    mode: DeliveryMode = "http"

    def __init__(self, url: str, signing_secret: str, session: aiohttp.ClientSession) -> None:
        self.url = url
        self._secret = signing_secret
        self._session = session

    async def __call__(self, request: SlackRequest) -> AckResult:
        start = time.monotonic()
        status, body, content_type = await post_signed(
            self.url, request, self._secret, session=self._session
        )
        return AckResult(
            self.mode, status, body, _payload_of(body, content_type), time.monotonic() - start
        )


class _Socket(Delivery):
    mode: DeliveryMode = "socket"

    def __init__(self, fake: FakeSlack, ack_timeout: float) -> None:
        self._fake = fake
        self._ack_timeout = ack_timeout

    async def __call__(self, request: SlackRequest) -> AckResult:
        handle = await self._fake.socket_send_request(request)
        ack = await handle.ack(timeout=self._ack_timeout)
        body = "" if ack.payload is None else json.dumps(ack.payload)
        return AckResult(self.mode, 200, body, ack.payload, ack.latency)


@asynccontextmanager
async def bolt_delivery(
    mode: DeliveryMode, app: AsyncApp, fake: FakeSlack, *, ack_timeout: float = 3.0
) -> AsyncIterator[Delivery]:
    """Set up ``mode`` for ``app`` (server or socket connection) and yield a :class:`Delivery`.

    In ``socket`` mode a request the app does not ack (bolt sends no ack for a non-200, e.g. an
    unhandled request) fails with ``AssertionError`` after ``ack_timeout`` (Slack's limit is 3 s).
    """
    if mode == "in_process":
        yield _InProcess(app, fake.signing_secret)
    elif mode == "http":
        async with serve_bolt_app(app) as url, aiohttp.ClientSession() as session:
            yield _Http(url, fake.signing_secret, session)
    elif mode == "socket":
        async with socket_mode_handler(app, fake):
            yield _Socket(fake, ack_timeout)
    else:
        raise ValueError(f"unknown delivery mode {mode!r}")


@pytest_asyncio.fixture(name="slack_fake")
async def slack_fake_fixture() -> AsyncIterator[FakeSlack]:
    """A started :class:`FakeSlack` with default ids and tokens."""
    async with FakeSlack() as fake:
        yield fake
