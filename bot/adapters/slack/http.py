"""HTTP mode's endpoint: slack-bolt's own request handling, minus one misreading.

slack-bolt's ``parse_body`` treats any form body that contains the substring ``payload`` as an
interactivity payload, and when there is no ``payload=`` field it parses the request as ``{}``:
bolt then finds no listener and answers 404. A slash command whose text, channel name or team
domain happens to say "payload" (``/study run print(payload)`` in ``#payload-team``) would
silently fail over HTTP, while Socket Mode, which receives already-parsed dicts, works. So the
events endpoint builds the request itself and, only in that case, parses the form as a form.
Signature verification is untouched: it reads the raw body.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import parse_qsl

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_internals import build_async_context
from slack_bolt.request.async_request import AsyncBoltRequest

__all__ = ["bolt_request", "events_app"]


def bolt_request(body: str, *, headers: Mapping[str, str], query: str = "") -> AsyncBoltRequest:
    """An HTTP-mode request as bolt builds it, with form bodies that mention "payload" fixed."""
    request = AsyncBoltRequest(body=body, query=query, headers=dict(headers))
    is_json = request.content_type == "application/json" or body.startswith("{")
    if not request.body and "payload" in body and not is_json:
        form = dict(parse_qsl(body, keep_blank_values=True))
        if "payload" not in form:
            request.body = form
            request.context = build_async_context(AsyncBoltContext({}), form)
    return request


def events_app(app: AsyncApp, path: str) -> web.Application:
    """An aiohttp application serving ``POST path`` for ``app`` (what ``app.web_app`` does)."""

    async def handle(request: web.Request) -> web.Response:
        incoming = bolt_request(
            await request.text(), headers=request.headers, query=request.query_string
        )
        return await to_aiohttp_response(await app.async_dispatch(incoming))

    web_app = web.Application()
    web_app.add_routes([web.post(path, handle)])
    return web_app
