"""A local fake of Slack's Web API and Socket Mode websocket, for tests.

``FakeSlack`` is an aiohttp server on an ephemeral 127.0.0.1 port. Point the real slack_sdk
``AsyncWebClient`` at ``fake.api_url`` and the real slack-bolt ``AsyncApp`` (HTTP mode or Socket
Mode) runs against it unchanged::

    async with FakeSlack() as fake:
        client = AsyncWebClient(token=fake.bot_token, base_url=fake.api_url)
        app = AsyncApp(client=client, signing_secret=fake.signing_secret, name="test")
        ...
        call = await fake.wait_for_call("chat.postMessage")
        assert call.args["channel"] == "C0STUDY"

It serves:

* ``/api/<method>``: the Web API; every call is recorded in :attr:`FakeSlack.calls`;
* ``/hooks/...``: the ``response_url`` s handed out in built requests
  (:attr:`FakeSlack.response_url_calls`);
* ``/upload/v1/<file_id>``: the upload URL from ``files.getUploadURLExternal``;
* ``/files-pri/<team>-<file_id>/[download/]<name>``: a file's ``url_private`` /
  ``url_private_download``, served only with the bot token (:attr:`FakeSlack.file_downloads`);
* ``/link/?ticket=...``: the Socket Mode websocket returned by ``apps.connections.open``.

It also keeps the state those calls imply (messages, ephemeral messages, views, the App Home,
files) so tests can assert on what a member would see, not only on what was called. Request
builders (``fake.slash_command(...)`` etc.) come from
:class:`~tests.fakes.slack_requests.SlackRequestBuilder`.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import json
import logging
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Self, TypeVar
from zoneinfo import ZoneInfo

from aiohttp import WSCloseCode, WSMsgType, web

from tests.fakes.slack_blockkit import MAX_BLOCKS_TEXT, block_text_length, check_blocks, check_view
from tests.fakes.slack_requests import EnvelopeType, SlackRequest, SlackRequestBuilder

__all__ = [
    "ApiCall",
    "FakeChannel",
    "FakeEphemeral",
    "FakeFile",
    "FakeMessage",
    "FakeSlack",
    "FakeUser",
    "FakeView",
    "FileDownload",
    "ResponseUrlCall",
    "SocketAck",
    "SocketConnection",
    "SocketEnvelope",
]

log = logging.getLogger(__name__)

T = TypeVar("T")
Json = dict[str, Any]
#: An override: gets the call, returns the response body (or ``None`` to fall through).
Handler = Callable[["ApiCall"], Json | None]

#: Arguments that arrive as JSON strings when a client form-encodes them.
_JSON_ARGS = frozenset({"blocks", "attachments", "view", "files", "metadata"})
MAX_TEXT = 40_000


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.lower() in ("1", "true", "yes")
    return bool(value)


def _error(code: str, *messages: str, **extra: Any) -> Json:
    body: Json = {"ok": False, "error": code, **extra}
    if messages:
        body["response_metadata"] = {"messages": [f"[ERROR] {m}" for m in messages]}
    return body


# ---------------------------------------------------------------------------- records and state


@dataclass
class ApiCall:
    """One Web API request as the fake received it."""

    method: str
    args: Json
    token: str | None
    http_method: str
    content_type: str
    at: float
    response: Json = field(default_factory=dict)
    status: int = 200

    @property
    def ok(self) -> bool:
        return bool(self.response.get("ok"))


@dataclass
class ResponseUrlCall:
    """One POST to a ``response_url`` the fake handed out.

    ``effect`` is what Slack would have done: ``ephemeral`` (the default), ``in_channel``,
    ``replace_original``, ``delete_original``, or ``rejected`` (unknown or used-up URL).
    """

    url: str
    kind: str
    body: Json
    user_id: str | None
    channel_id: str | None
    message_ts: str | None
    effect: str
    at: float

    @property
    def text(self) -> str | None:
        return self.body.get("text")

    @property
    def blocks(self) -> list[Json]:
        return list(self.body.get("blocks") or [])


@dataclass
class FakeMessage:
    """A message in a channel, as posted by the app (or by the fake, e.g. a shared file)."""

    channel: str
    ts: str
    text: str
    blocks: list[Json]
    user: str
    bot_id: str | None
    app_id: str | None
    team: str
    thread_ts: str | None = None
    metadata: Json | None = None
    files: list[Json] = field(default_factory=list)
    deleted: bool = False
    #: earlier versions (``to_api()`` snapshots), oldest first; appended to by chat.update.
    history: list[Json] = field(default_factory=list)

    def to_api(self) -> Json:
        msg: Json = {
            "type": "message",
            "user": self.user,
            "text": self.text,
            "ts": self.ts,
            "team": self.team,
            "blocks": copy.deepcopy(self.blocks),
        }
        if self.bot_id:
            msg["bot_id"] = self.bot_id
            msg["app_id"] = self.app_id
            msg["bot_profile"] = {"id": self.bot_id, "app_id": self.app_id, "name": "studybot"}
        if self.thread_ts:
            msg["thread_ts"] = self.thread_ts
        if self.metadata:
            msg["metadata"] = copy.deepcopy(self.metadata)
        if self.files:
            msg["files"] = copy.deepcopy(self.files)
        if self.history:
            msg["edited"] = {"user": self.user, "ts": self.history[-1].get("edited_ts", self.ts)}
        return msg

    def action_ids(self) -> list[str]:
        """Every ``action_id`` in the message's blocks, in order (buttons, selects, ...)."""
        out: list[str] = []
        for block in self.blocks:
            elements = list(block.get("elements") or [])
            if "accessory" in block:
                elements.append(block["accessory"])
            out.extend(e["action_id"] for e in elements if isinstance(e, dict) and "action_id" in e)
        return out


@dataclass
class FakeEphemeral:
    """A message only ``user`` sees: from chat.postEphemeral or an ephemeral response_url post."""

    channel: str | None
    user: str
    ts: str
    text: str | None
    blocks: list[Json]
    via: str


@dataclass
class FakeView:
    """A modal (views.open / views.push) or a home tab (views.publish)."""

    id: str
    type: str
    user_id: str | None
    payload: Json
    hash: str
    team_id: str
    app_id: str
    bot_id: str
    external_id: str = ""
    previous_view_id: str | None = None
    root_view_id: str | None = None
    history: list[Json] = field(default_factory=list)

    @property
    def callback_id(self) -> str:
        return str(self.payload.get("callback_id") or "")

    @property
    def private_metadata(self) -> str:
        return str(self.payload.get("private_metadata") or "")

    @property
    def blocks(self) -> list[Json]:
        return list(self.payload.get("blocks") or [])

    @property
    def title(self) -> str | None:
        title = self.payload.get("title")
        return title.get("text") if isinstance(title, dict) else None

    def to_api(self) -> Json:
        p = self.payload
        return {
            "id": self.id,
            "team_id": self.team_id,
            "type": self.type,
            "blocks": copy.deepcopy(p.get("blocks") or []),
            "private_metadata": p.get("private_metadata", ""),
            "callback_id": p.get("callback_id", ""),
            "state": {"values": {}},
            "hash": self.hash,
            "title": copy.deepcopy(p.get("title")),
            "clear_on_close": bool(p.get("clear_on_close", False)),
            "notify_on_close": bool(p.get("notify_on_close", False)),
            "close": copy.deepcopy(p.get("close")),
            "submit": copy.deepcopy(p.get("submit")),
            "previous_view_id": self.previous_view_id,
            "root_view_id": self.root_view_id or self.id,
            "app_id": self.app_id,
            "external_id": self.external_id,
            "app_installed_team_id": self.team_id,
            "bot_id": self.bot_id,
        }


@dataclass
class FakeFile:
    """A file from the files.getUploadURLExternal -> upload URL -> completeUploadExternal flow."""

    id: str
    filename: str
    length: int
    alt_txt: str | None = None
    snippet_type: str | None = None
    content: bytes | None = None
    title: str | None = None
    completed: bool = False
    channel_ids: list[str] = field(default_factory=list)
    initial_comment: str | None = None
    thread_ts: str | None = None
    #: set for files the fake serves (``add_user_file``): url_private points at the fake.
    url_base: str | None = None
    team_id: str = "T0STUDY"
    mimetype: str = "text/plain"

    @property
    def text(self) -> str:
        return (self.content or b"").decode()

    def to_api(self, user: str) -> Json:
        if self.url_base is not None:
            private = f"{self.url_base}/files-pri/{self.team_id}-{self.id}/{self.filename}"
            download = (
                f"{self.url_base}/files-pri/{self.team_id}-{self.id}/download/{self.filename}"
            )
        else:
            private = f"https://files.slack.invalid/files-pri/{self.id}/{self.filename}"
            download = private
        return {
            "id": self.id,
            "created": int(time.time()),
            "timestamp": int(time.time()),
            "name": self.filename,
            "title": self.title or self.filename,
            "mimetype": self.mimetype,
            "filetype": self.snippet_type or "text",
            "user": user,
            "size": len(self.content or b""),
            "mode": "hosted",
            "is_external": False,
            "url_private": private,
            "url_private_download": download,
            "permalink": f"https://slack.invalid/files/{user}/{self.id}/{self.filename}",
            "channels": list(self.channel_ids),
        }


@dataclass
class FileDownload:
    """One GET of a file's private URL: whether it carried the bot token, what it got."""

    file_id: str
    path: str
    authorized: bool
    status: int


@dataclass
class FakeUser:
    id: str
    name: str
    real_name: str = ""
    is_admin: bool = False
    is_owner: bool = False
    is_primary_owner: bool = False
    is_bot: bool = False
    tz: str = "UTC"
    deleted: bool = False

    def to_api(self, team_id: str) -> Json:
        now = datetime.now(ZoneInfo(self.tz))
        offset = now.utcoffset()
        return {
            "id": self.id,
            "team_id": team_id,
            "name": self.name,
            "deleted": self.deleted,
            "real_name": self.real_name or self.name,
            "tz": self.tz,
            "tz_label": now.tzname() or self.tz,
            "tz_offset": int(offset.total_seconds()) if offset else 0,
            "is_admin": self.is_admin,
            "is_owner": self.is_owner,
            "is_primary_owner": self.is_primary_owner,
            "is_restricted": False,
            "is_ultra_restricted": False,
            "is_bot": self.is_bot,
            "is_app_user": False,
            "updated": int(time.time()),
            "profile": {
                "real_name": self.real_name or self.name,
                "display_name": self.name,
                "real_name_normalized": self.real_name or self.name,
                "display_name_normalized": self.name,
                "team": team_id,
            },
        }


@dataclass
class FakeChannel:
    id: str
    name: str
    is_private: bool = False
    is_im: bool = False
    im_user: str | None = None
    # chat:write.public lets a bot post where it is not a member, but not upload files there
    bot_member: bool = True

    def to_api(self, creator: str) -> Json:
        base: Json = {
            "id": self.id,
            "created": 1_700_000_000,
            "is_archived": False,
            "is_org_shared": False,
            "context_team_id": None,
        }
        if self.is_im:
            return {**base, "is_im": True, "user": self.im_user, "is_open": True}
        return {
            **base,
            "name": self.name,
            "name_normalized": self.name,
            "is_channel": not self.is_private,
            "is_group": self.is_private,
            "is_im": False,
            "is_mpim": False,
            "is_private": self.is_private,
            "is_general": self.name == "general",
            "is_member": self.bot_member,
            "creator": creator,
            "topic": {"value": "", "creator": "", "last_set": 0},
            "purpose": {"value": "", "creator": "", "last_set": 0},
        }


@dataclass
class _Override:
    handler: Handler
    times: int | None


@dataclass
class _HookTarget:
    kind: str
    user_id: str
    channel_id: str | None
    message_ts: str | None
    uses: int = 0


# ---------------------------------------------------------------------------- socket mode records


@dataclass
class SocketAck:
    """What the client sent back for an envelope: ``{"envelope_id", "payload"?}``."""

    envelope_id: str
    payload: Json | None
    latency: float
    raw: Json


@dataclass
class SocketConnection:
    id: int
    ws: web.WebSocketResponse
    ticket: str
    opened_at: float
    closed_at: float | None = None
    pings_received: list[bytes] = field(default_factory=list)
    pongs_received: list[bytes] = field(default_factory=list)
    messages_received: list[Any] = field(default_factory=list)

    @property
    def open(self) -> bool:
        return self.closed_at is None and not self.ws.closed


class SocketEnvelope:
    """Handle on an envelope the fake sent over Socket Mode; ``await handle.ack()``."""

    def __init__(
        self,
        fake: FakeSlack,
        envelope_id: str,
        envelope_type: EnvelopeType,
        payload: Json,
        accepts_response_payload: bool,
        connection: SocketConnection,
    ) -> None:
        self._fake = fake
        self.envelope_id = envelope_id
        self.type = envelope_type
        self.payload = payload
        self.accepts_response_payload = accepts_response_payload
        self.connection = connection
        self.sent_at = time.monotonic()
        self.acks: list[SocketAck] = []

    @property
    def acked(self) -> bool:
        return bool(self.acks)

    async def ack(self, timeout: float = 3.0) -> SocketAck:  # noqa: ASYNC109
        """Wait for the client's ack (Slack's own limit is 3 s) and return it."""
        return await self._fake.wait_for(
            lambda: self.acks[0] if self.acks else None,
            timeout=timeout,
            what=f"an ack of {self.type} envelope {self.envelope_id}",
        )

    async def assert_not_acked(self, within: float = 0.3) -> None:
        """Fail if an ack arrives within ``within`` seconds (bolt does not ack a non-200)."""
        await asyncio.sleep(within)
        assert not self.acks, f"envelope {self.envelope_id} was acked: {self.acks[0].raw}"


# ---------------------------------------------------------------------------- the fake


class FakeSlack(SlackRequestBuilder):
    """Fake Slack Web API + Socket Mode server. Use as ``async with FakeSlack() as fake``.

    Pre-registered: users ``U0ALICE`` (alice, member) and ``U0ADMIN`` (ada, workspace admin), the
    bot user ``U0BOT``; channel ``C0STUDY`` (#study). Users and channels named in built requests
    are registered on the fly; anything else must be added with :meth:`add_user` /
    :meth:`add_channel` or the API answers ``user_not_found`` / ``channel_not_found`` like Slack.
    """

    host = "127.0.0.1"

    def __init__(
        self,
        *,
        bot_token: str = "xoxb-0000-fake-bot-token",
        app_token: str = "xapp-1-A0STUDY-0000-fake-app-token",
        signing_secret: str = "fake-signing-secret",
        team_id: str = "T0STUDY",
        team_domain: str = "studybot-test",
        app_id: str = "A0STUDY",
        bot_user_id: str = "U0BOT",
        bot_id: str = "B0BOT",
        trigger_ttl: float | None = 3.0,
        scopes: str = (
            "commands,chat:write,chat:write.public,users:read,usergroups:read,usergroups:write,"
            "channels:read,groups:read,im:write,files:write,files:read"
        ),
        check_block_kit: bool = True,
    ) -> None:
        super().__init__(
            team_id=team_id,
            team_domain=team_domain,
            app_id=app_id,
            bot_user_id=bot_user_id,
            bot_id=bot_id,
        )
        self.bot_token = bot_token
        self.app_token = app_token
        self.signing_secret = signing_secret
        #: seconds a trigger_id stays valid for views.open (Slack: 3); None disables the check.
        self.trigger_ttl = trigger_ttl
        self.scopes = scopes
        self.check_block_kit = check_block_kit
        #: Socket Mode knobs: Slack sends ``hello`` first and answers pings; turn these off to
        #: see how a client copes. slack_sdk needs neither: it does not wait for ``hello``; an
        #: unanswered ping makes aiohttp's heartbeat (= ping_interval) close the socket within
        #: half an interval and the SDK's monitor reconnects on its next tick (its own
        #: staleness check, 4 x ping_interval without a pong, would come later).
        self.send_hello = True
        self.answer_pings = True

        self.calls: list[ApiCall] = []
        self.response_url_calls: list[ResponseUrlCall] = []
        self.messages: list[FakeMessage] = []
        self.ephemerals: list[FakeEphemeral] = []
        self.views: dict[str, FakeView] = {}
        self.home_views: dict[str, FakeView] = {}
        self.files: dict[str, FakeFile] = {}
        #: GETs of files' private URLs (``add_user_file`` files), in order.
        self.file_downloads: list[FileDownload] = []
        self.users: dict[str, FakeUser] = {}
        self.channels: dict[str, FakeChannel] = {}
        self.usergroups: dict[str, list[str]] = {}
        self.usergroup_handles: dict[str, str] = {}  # id -> handle, for usergroups.list
        self.socket_connections: list[SocketConnection] = []
        self.socket_envelopes: list[SocketEnvelope] = []
        #: acks for envelope ids the fake never sent (a bug in the client if non-empty).
        self.socket_unexpected_acks: list[Json] = []

        self._overrides: dict[str, list[_Override]] = {}
        self._hooks: dict[str, _HookTarget] = {}
        self._triggers: dict[str, tuple[float, str]] = {}
        self._tickets: set[str] = set()
        self._ids = itertools.count(1)
        self._last_ts = 0.0
        self._runner: web.AppRunner | None = None
        self._cond: asyncio.Condition | None = None
        self._port = 0

        self.add_user(bot_user_id, name="studybot", is_bot=True)
        self.add_user("U0ALICE", name="alice", real_name="Alice Member")
        self.add_user("U0ADMIN", name="ada", real_name="Ada Admin", is_admin=True)
        self.add_channel("C0STUDY", "study")

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> Self:
        self._cond = asyncio.Condition()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.add_routes(
            [
                web.route("*", "/api/{method}", self._handle_api),
                web.post("/hooks/{path:.*}", self._handle_hook),
                web.post("/upload/v1/{file_id}", self._handle_upload),
                web.get("/files-pri/{key}/{rest:.*}", self._handle_file_download),
                web.get("/link/", self._handle_socket),
            ]
        )
        self._runner = web.AppRunner(app, shutdown_timeout=1.0, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, 0)
        await site.start()
        self._port = self._runner.addresses[0][1]
        self._response_url_base = f"{self.url}/hooks"
        log.debug("FakeSlack listening on %s", self.url)
        return self

    async def close(self) -> None:
        for conn in self.socket_connections:
            if conn.open:
                await conn.ws.close(code=WSCloseCode.GOING_AWAY, message=b"fake shutting down")
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        return f"http://{self.host}:{self._port}"

    @property
    def api_url(self) -> str:
        """The Web API base URL, with the trailing slash ``AsyncWebClient(base_url=...)`` wants."""
        return f"{self.url}/api/"

    # ------------------------------------------------------------------ configuration

    def add_user(
        self,
        user_id: str,
        *,
        name: str | None = None,
        real_name: str = "",
        is_admin: bool = False,
        is_owner: bool = False,
        is_primary_owner: bool = False,
        is_bot: bool = False,
        tz: str = "UTC",
    ) -> FakeUser:
        """Register (or replace) a member; ``users.info`` answers with these fields."""
        user = FakeUser(
            id=user_id,
            name=name or user_id.lower(),
            real_name=real_name,
            is_admin=is_admin,
            is_owner=is_owner,
            is_primary_owner=is_primary_owner,
            is_bot=is_bot,
            tz=tz,
        )
        self.users[user_id] = user
        return user

    def add_channel(
        self,
        channel_id: str,
        name: str | None = None,
        *,
        private: bool = False,
        bot_member: bool = True,
    ) -> FakeChannel:
        channel = FakeChannel(
            id=channel_id,
            name=name or channel_id.lower(),
            is_private=private,
            bot_member=bot_member,
        )
        self.channels[channel_id] = channel
        return channel

    def add_usergroup(
        self, usergroup_id: str, user_ids: list[str], *, handle: str | None = None
    ) -> None:
        """Register a user group (``S...``) for ``usergroups.users.list``, ``usergroups.list``
        (by ``handle``, default its id in lower case) and ``usergroups.users.update``."""
        self.usergroups[usergroup_id] = list(user_ids)
        self.usergroup_handles[usergroup_id] = handle or usergroup_id.lower()

    def add_user_file(
        self,
        filename: str,
        content: bytes | str,
        *,
        user_id: str | None = None,
        channel_id: str | None = None,
        text: str = "",
        mimetype: str = "text/plain",
    ) -> FakeMessage:
        """A member posts a message with a file attached, as the Slack client would.

        The file is served at its ``url_private`` / ``url_private_download`` (on the fake,
        only with the bot token; anything else gets Slack's HTML sign-in page with a 200) and
        described by ``files.info``. Returns the stored message, so a test can run a message
        shortcut on it: ``fake.message_shortcut(callback_id, message_ts=msg.ts)``.
        """
        user_id = user_id or self.default_user_id
        channel_id = channel_id or self.default_channel_id
        raw = content.encode() if isinstance(content, str) else bytes(content)
        file = FakeFile(
            id=self._new_id("F"),
            filename=filename,
            length=len(raw),
            content=raw,
            title=filename,
            completed=True,
            channel_ids=[channel_id],
            url_base=self.url,
            team_id=self.team_id,
            mimetype=mimetype,
        )
        self.files[file.id] = file
        self._channel_name(channel_id)
        message = FakeMessage(
            channel=channel_id,
            ts=self._new_ts(),
            text=text,
            blocks=[],
            user=user_id,
            bot_id=None,
            app_id=None,
            team=self.team_id,
            files=[file.to_api(user_id)],
        )
        self.messages.append(message)
        return message

    def override(self, method: str, handler: Handler, *, times: int | None = None) -> None:
        """Answer ``method`` with ``handler(call)`` (``None`` falls through to the fake's own).

        The newest override wins; with ``times`` it is used that many times, then dropped.
        """
        self._overrides.setdefault(method, []).insert(0, _Override(handler, times))

    def fail(self, method: str, error: str, *, times: int | None = 1, **extra: Any) -> None:
        """Make the next ``times`` calls to ``method`` answer ``{"ok": false, "error": error}``."""
        self.override(method, lambda _call: _error(error, **extra), times=times)

    def clear_calls(self) -> None:
        """Forget recorded calls and response_url posts (state such as messages is kept)."""
        self.calls.clear()
        self.response_url_calls.clear()

    # ------------------------------------------------------------------ assertions and waiting

    def calls_to(self, method: str) -> list[ApiCall]:
        return [c for c in self.calls if c.method == method]

    async def wait_for(
        self,
        check: Callable[[], T | None],
        *,
        timeout: float,  # noqa: ASYNC109 - a wait helper's whole point is its deadline
        what: str,
    ) -> T:
        """Wait until ``check()`` returns something other than ``None``, and return it."""
        assert self._cond is not None, "FakeSlack is not started"
        result: list[T] = []

        def ready() -> bool:
            value = check()
            if value is None:
                return False
            result.append(value)
            return True

        try:
            async with asyncio.timeout(timeout), self._cond:
                await self._cond.wait_for(ready)
        except TimeoutError:
            seen = ", ".join(c.method for c in self.calls) or "none"
            raise AssertionError(
                f"timed out after {timeout} s waiting for {what}; Web API calls so far: {seen}"
            ) from None
        return result[0]

    async def wait_for_call(
        self,
        method: str,
        timeout: float = 5.0,  # noqa: ASYNC109
        predicate: Callable[[ApiCall], bool] | None = None,
        *,
        count: int = 1,
    ) -> ApiCall:
        """Return the ``count``-th call to ``method`` matching ``predicate``, waiting if needed.

        Calls made before this is awaited count too, so there is no race with the app.
        """

        def check() -> ApiCall | None:
            matching = [c for c in self.calls_to(method) if predicate is None or predicate(c)]
            return matching[count - 1] if len(matching) >= count else None

        return await self.wait_for(check, timeout=timeout, what=f"call #{count} to {method}")

    async def wait_for_response_url_call(
        self,
        timeout: float = 5.0,  # noqa: ASYNC109
        predicate: Callable[[ResponseUrlCall], bool] | None = None,
        *,
        count: int = 1,
    ) -> ResponseUrlCall:
        def check() -> ResponseUrlCall | None:
            matching = [c for c in self.response_url_calls if predicate is None or predicate(c)]
            return matching[count - 1] if len(matching) >= count else None

        return await self.wait_for(check, timeout=timeout, what=f"response_url post #{count}")

    def message(self, ts: str, channel: str | None = None) -> FakeMessage:
        """The stored message with ``ts`` (raises ``KeyError``)."""
        for m in self.messages:
            if m.ts == ts and (channel is None or m.channel == channel):
                return m
        raise KeyError(f"no message with ts={ts} in {channel or 'any channel'}")

    def channel_messages(self, channel: str, *, include_deleted: bool = False) -> list[FakeMessage]:
        return [
            m for m in self.messages if m.channel == channel and (include_deleted or not m.deleted)
        ]

    def ephemerals_for(self, user_id: str) -> list[FakeEphemeral]:
        """Everything only ``user_id`` saw: chat.postEphemeral and ephemeral response_url posts."""
        return [e for e in self.ephemerals if e.user == user_id]

    def view(self, *, callback_id: str | None = None, user_id: str | None = None) -> FakeView:
        """The latest opened modal, optionally by ``callback_id`` / ``user_id`` (``KeyError``)."""
        for v in reversed(list(self.views.values())):
            if (callback_id is None or v.callback_id == callback_id) and (
                user_id is None or v.user_id == user_id
            ):
                return v
        raise KeyError(f"no view with callback_id={callback_id!r} user_id={user_id!r}")

    async def _notify(self) -> None:
        if self._cond is not None:
            async with self._cond:
                self._cond.notify_all()

    # ------------------------------------------------------------------ builder hooks

    def _issue_response_url(
        self, kind: str, *, user_id: str, channel_id: str | None, message_ts: str | None
    ) -> str:
        assert self._port, "start the fake before building requests (response_url needs its port)"
        url = super()._issue_response_url(
            kind, user_id=user_id, channel_id=channel_id, message_ts=message_ts
        )
        self._hooks[url.removeprefix(f"{self.url}/hooks/")] = _HookTarget(
            kind, user_id, channel_id, message_ts
        )
        return url

    def _issue_trigger_id(self, user_id: str) -> str:
        trigger_id = super()._issue_trigger_id(user_id)
        self._triggers[trigger_id] = (time.monotonic(), user_id)
        return trigger_id

    def _user_name(self, user_id: str) -> str:
        if user_id not in self.users:
            self.add_user(user_id)
        return self.users[user_id].name

    def _channel_name(self, channel_id: str) -> str:
        if channel_id not in self.channels:
            if channel_id.startswith("D"):
                user = "U" + channel_id[1:]
                self.channels[channel_id] = FakeChannel(channel_id, "", is_im=True, im_user=user)
            else:
                self.add_channel(channel_id, private=channel_id.startswith("G"))
        return self.channels[channel_id].name or "directmessage"

    def _find_message(self, channel_id: str, ts: str) -> Json | None:
        for m in self.messages:
            if m.channel == channel_id and m.ts == ts and not m.deleted:
                return m.to_api()
        return None

    def _is_ephemeral(self, channel_id: str, ts: str) -> bool:
        return any(e.ts == ts and e.channel == channel_id for e in self.ephemerals)

    def _find_view(self, view_id: str | None, callback_id: str | None) -> Json | None:
        if view_id is not None:
            view = self.views.get(view_id) or next(
                (v for v in self.home_views.values() if v.id == view_id), None
            )
            return view.to_api() if view else None
        if callback_id is not None:
            try:
                return self.view(callback_id=callback_id).to_api()
            except KeyError:
                return None
        return None

    def _find_home_view(self, user_id: str) -> Json | None:
        view = self.home_views.get(user_id)
        return view.to_api() if view else None

    def _new_ts(self) -> str:
        self._last_ts = max(time.time(), self._last_ts + 0.000001)
        return f"{self._last_ts:.6f}"

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):08d}"

    # ------------------------------------------------------------------ HTTP: Web API

    async def _parse_args(self, request: web.Request) -> Json:
        args: Json = dict(request.query)
        if request.method == "POST" and request.can_read_body:
            if request.content_type == "application/json":
                try:
                    body = await request.json()
                except ValueError:
                    body = {"_invalid_json": await request.text()}
                if isinstance(body, dict):
                    args.update(body)
            else:
                form = await request.post()
                for key, value in form.items():
                    if isinstance(value, str | bytes):
                        args[key] = value
                    elif isinstance(value, bytearray):
                        args[key] = bytes(value)
                    else:  # an uploaded file part
                        args[key] = value.file.read()
        for key in _JSON_ARGS & args.keys():
            value = args[key]
            if isinstance(value, str) and value[:1] in ("[", "{"):
                with contextlib.suppress(json.JSONDecodeError):
                    args[key] = json.loads(value)
        return args

    async def _handle_api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args = await self._parse_args(request)
        token: str | None = None
        auth = request.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            token = auth.removeprefix("Bearer ").strip()
            args.pop("token", None)
        elif "token" in args:
            token = str(args.pop("token"))
        call = ApiCall(
            method=method,
            args=args,
            token=token,
            http_method=request.method,
            content_type=request.content_type,
            at=time.monotonic(),
        )
        headers = {"X-OAuth-Scopes": self.scopes, "X-Accepted-OAuth-Scopes": ""}
        try:
            body = self._dispatch(call)
        except Exception as exc:  # a bug in the fake: say so loudly, as Slack would not
            log.exception("FakeSlack failed on %s", method)
            body = _error("fatal_error", f"FakeSlack bug: {exc!r}")
            call.status = 500
        if body.get("error") == "ratelimited":
            body = dict(body)
            call.status = 429
            headers["Retry-After"] = str(body.pop("retry_after", 1))
        call.response = body
        self.calls.append(call)
        await self._notify()
        return web.json_response(body, status=call.status, headers=headers)

    def _dispatch(self, call: ApiCall) -> Json:
        if "_invalid_json" in call.args:
            return _error("invalid_json")
        for entry in list(self._overrides.get(call.method, [])):
            result = entry.handler(call)
            if entry.times is not None:
                entry.times -= 1
                if entry.times <= 0:
                    self._overrides[call.method].remove(entry)
            if result is not None:
                return result
        method = self._methods().get(call.method)
        if method is None:
            if call.method == "files.upload":
                return _error("method_deprecated", "files.upload is retired; use files_upload_v2")
            return _error("unknown_method", req_method=call.method)
        denied = self._check_token(call)
        if denied is not None:
            return denied
        return method(call)

    def _check_token(self, call: ApiCall) -> Json | None:
        expected = self.app_token if call.method == "apps.connections.open" else self.bot_token
        if not call.token:
            return _error("not_authed")
        if call.token == expected:
            return None
        if call.token in (self.app_token, self.bot_token):
            return _error("not_allowed_token_type")
        return _error("invalid_auth")

    def _methods(self) -> dict[str, Callable[[ApiCall], Json]]:
        return {
            "api.test": lambda call: {"ok": True, "args": call.args},
            "auth.test": self._auth_test,
            "apps.connections.open": self._apps_connections_open,
            "chat.postMessage": self._chat_post_message,
            "chat.update": self._chat_update,
            "chat.postEphemeral": self._chat_post_ephemeral,
            "chat.delete": self._chat_delete,
            "views.open": self._views_open,
            "views.push": self._views_open,
            "views.update": self._views_update,
            "views.publish": self._views_publish,
            "users.info": self._users_info,
            "usergroups.users.list": self._usergroups_users_list,
            "usergroups.list": self._usergroups_list,
            "usergroups.users.update": self._usergroups_users_update,
            "conversations.info": self._conversations_info,
            "conversations.open": self._conversations_open,
            "files.getUploadURLExternal": self._files_get_upload_url,
            "files.completeUploadExternal": self._files_complete_upload,
            "files.info": self._files_info,
        }

    def _auth_test(self, call: ApiCall) -> Json:
        return {
            "ok": True,
            "url": f"https://{self.team_domain}.slack.com/",
            "team": self.team_domain,
            "user": self.users[self.bot_user_id].name,
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _apps_connections_open(self, call: ApiCall) -> Json:
        ticket = str(uuid.uuid4())
        self._tickets.add(ticket)
        return {
            "ok": True,
            "url": f"ws://{self.host}:{self._port}/link/?ticket={ticket}&app_id={self.app_id}",
        }

    def _resolve_channel(self, channel: Any) -> str | None:
        """A channel id the bot can post to (user ids open the DM, like Slack), else None."""
        if not isinstance(channel, str) or not channel:
            return None
        if channel in self.channels:
            return channel
        if channel[0] in "UW" and channel in self.users:
            dm = "D" + channel[1:]
            self._channel_name(dm)
            return dm
        return None

    def _message_problems(self, args: Json, *, require_content: bool = True) -> Json | None:
        text = args.get("text")
        blocks = args.get("blocks")
        if require_content and not text and not blocks and not args.get("attachments"):
            return _error("no_text")
        if isinstance(text, str) and len(text) > MAX_TEXT:
            return _error("msg_too_long")
        if blocks is not None and self.check_block_kit:
            problems = check_blocks(blocks)
            if problems:
                return _error("invalid_blocks", *problems, errors=problems)
            if (total := block_text_length(blocks)) > MAX_BLOCKS_TEXT:
                return _error(
                    "msg_blocks_too_long", f"{total} characters of text in blocks, over the limit"
                )
        return None

    def _chat_post_message(self, call: ApiCall) -> Json:
        a = call.args
        channel = self._resolve_channel(a.get("channel"))
        if channel is None:
            return _error("channel_not_found")
        problem = self._message_problems(a)
        if problem:
            return problem
        thread_ts = a.get("thread_ts") or None
        if thread_ts and not any(m.channel == channel and m.ts == thread_ts for m in self.messages):
            return _error("thread_not_found")
        msg = FakeMessage(
            channel=channel,
            ts=self._new_ts(),
            text=str(a.get("text") or ""),
            blocks=list(a.get("blocks") or []),
            user=self.bot_user_id,
            bot_id=self.bot_id,
            app_id=self.app_id,
            team=self.team_id,
            thread_ts=thread_ts,
            metadata=a.get("metadata"),
        )
        self.messages.append(msg)
        return {"ok": True, "channel": channel, "ts": msg.ts, "message": msg.to_api()}

    def _chat_update(self, call: ApiCall) -> Json:
        a = call.args
        try:
            msg = self.message(str(a.get("ts")), str(a.get("channel")))
        except KeyError:
            return _error("message_not_found")
        if msg.deleted:
            return _error("message_not_found")
        if msg.bot_id != self.bot_id:
            return _error("cant_update_message")
        problem = self._message_problems(a, require_content=False)
        if problem:
            return problem
        msg.history.append({**msg.to_api(), "edited_ts": self._new_ts()})
        if "text" in a:
            msg.text = str(a["text"] or "")
        if "blocks" in a:
            msg.blocks = list(a["blocks"] or [])
        if "metadata" in a:
            msg.metadata = a["metadata"]
        return {
            "ok": True,
            "channel": msg.channel,
            "ts": msg.ts,
            "text": msg.text,
            "message": msg.to_api(),
        }

    def _chat_post_ephemeral(self, call: ApiCall) -> Json:
        a = call.args
        channel = self._resolve_channel(a.get("channel"))
        if channel is None:
            return _error("channel_not_found")
        user = a.get("user")
        if not user:
            return _error("invalid_arguments", "missing required field: user")
        if user not in self.users:
            return _error("user_not_found")
        problem = self._message_problems(a)
        if problem:
            return problem
        ts = self._new_ts()
        self.ephemerals.append(
            FakeEphemeral(
                channel=channel,
                user=str(user),
                ts=ts,
                text=a.get("text"),
                blocks=list(a.get("blocks") or []),
                via="chat.postEphemeral",
            )
        )
        return {"ok": True, "message_ts": ts}

    def _chat_delete(self, call: ApiCall) -> Json:
        a = call.args
        try:
            msg = self.message(str(a.get("ts")), str(a.get("channel")))
        except KeyError:
            return _error("message_not_found")
        if msg.deleted:
            return _error("message_not_found")
        msg.deleted = True
        return {"ok": True, "channel": msg.channel, "ts": msg.ts}

    def _view_problems(self, view: Any) -> Json | None:
        if not isinstance(view, dict):
            return _error("invalid_arguments", "missing required field: view")
        if self.check_block_kit:
            problems = check_view(view)
            if problems:
                return _error("invalid_arguments", *problems)
        return None

    def _views_open(self, call: ApiCall) -> Json:
        a = call.args
        trigger_id = a.get("trigger_id") or a.get("interactivity_pointer")
        if not trigger_id:
            return _error("invalid_arguments", "missing required field: trigger_id")
        issued = self._triggers.get(str(trigger_id))
        if issued is None:
            return _error("invalid_trigger_id")
        if self.trigger_ttl is not None and time.monotonic() - issued[0] > self.trigger_ttl:
            return _error("expired_trigger_id")
        view = a.get("view")
        problem = self._view_problems(view)
        if problem:
            return problem
        assert isinstance(view, dict)
        if view.get("type") != "modal":
            return _error("invalid_arguments", "views.open and views.push need a modal")
        previous: FakeView | None = None
        if call.method == "views.push":
            try:
                previous = self.view(user_id=issued[1])
            except KeyError:
                return _error("not_found", "views.push needs an open modal")
        fake_view = FakeView(
            id=self._new_id("V"),
            type="modal",
            user_id=issued[1],
            payload=copy.deepcopy(view),
            hash=secrets.token_hex(8),
            team_id=self.team_id,
            app_id=self.app_id,
            bot_id=self.bot_id,
            external_id=str(view.get("external_id") or ""),
            previous_view_id=previous.id if previous else None,
            root_view_id=(previous.root_view_id or previous.id) if previous else None,
        )
        self.views[fake_view.id] = fake_view
        return {"ok": True, "view": fake_view.to_api()}

    def _views_update(self, call: ApiCall) -> Json:
        a = call.args
        view_id, external_id = a.get("view_id"), a.get("external_id")
        if not view_id and not external_id:
            return _error("invalid_arguments", "view_id or external_id is required")
        candidates = [*self.views.values(), *self.home_views.values()]
        target = next(
            (
                v
                for v in candidates
                if (view_id and v.id == view_id) or (external_id and v.external_id == external_id)
            ),
            None,
        )
        if target is None:
            return _error("not_found")
        if a.get("hash") and a["hash"] != target.hash:
            return _error("hash_conflict")
        view = a.get("view")
        problem = self._view_problems(view)
        if problem:
            return problem
        assert isinstance(view, dict)
        target.history.append(target.to_api())
        target.payload = copy.deepcopy(view)
        target.hash = secrets.token_hex(8)
        return {"ok": True, "view": target.to_api()}

    def _views_publish(self, call: ApiCall) -> Json:
        a = call.args
        user_id = a.get("user_id")
        if not user_id:
            return _error("invalid_arguments", "missing required field: user_id")
        if user_id not in self.users:
            return _error("user_not_found")
        view = a.get("view")
        problem = self._view_problems(view)
        if problem:
            return problem
        assert isinstance(view, dict)
        if view.get("type") != "home":
            return _error("invalid_arguments", "views.publish needs a view of type home")
        existing = self.home_views.get(str(user_id))
        if existing is not None and a.get("hash") and a["hash"] != existing.hash:
            return _error("hash_conflict")
        if existing is None:
            existing = FakeView(
                id=self._new_id("V"),
                type="home",
                user_id=str(user_id),
                payload={},
                hash="",
                team_id=self.team_id,
                app_id=self.app_id,
                bot_id=self.bot_id,
            )
            self.home_views[str(user_id)] = existing
        else:
            existing.history.append(existing.to_api())
        existing.payload = copy.deepcopy(view)
        existing.hash = secrets.token_hex(8)
        return {"ok": True, "view": existing.to_api()}

    def _users_info(self, call: ApiCall) -> Json:
        user = self.users.get(str(call.args.get("user")))
        if user is None:
            return _error("user_not_found")
        return {"ok": True, "user": user.to_api(self.team_id)}

    def _usergroups_users_list(self, call: ApiCall) -> Json:
        group = self.usergroups.get(str(call.args.get("usergroup")))
        if group is None:
            return _error("no_such_subteam")
        return {"ok": True, "users": list(group)}

    def _usergroups_list(self, call: ApiCall) -> Json:
        groups = [
            {"id": gid, "team_id": self.team_id, "handle": self.usergroup_handles.get(gid, gid),
             "name": self.usergroup_handles.get(gid, gid), "date_delete": 0,
             "user_count": len(users)}
            for gid, users in self.usergroups.items()
        ]  # fmt: skip
        return {"ok": True, "usergroups": groups}

    def _usergroups_users_update(self, call: ApiCall) -> Json:
        """Replace a group's members (Slack: ``users`` is a comma-separated list of ids, and a
        group cannot be emptied this way). Needs ``usergroups:write``."""
        if "usergroups:write" not in self.scopes.split(","):
            return _error("missing_scope")
        group = str(call.args.get("usergroup"))
        if group not in self.usergroups:
            return _error("no_such_subteam")
        users = [u for u in str(call.args.get("users") or "").split(",") if u]
        if not users:
            return _error("invalid_users")
        self.usergroups[group] = users
        return {"ok": True, "usergroup": {"id": group, "users": users}}

    def _conversations_info(self, call: ApiCall) -> Json:
        channel = self.channels.get(str(call.args.get("channel")))
        if channel is None:
            return _error("channel_not_found")
        return {"ok": True, "channel": channel.to_api(self.bot_user_id)}

    def _conversations_open(self, call: ApiCall) -> Json:
        users = str(call.args.get("users") or "").split(",")
        if len(users) != 1 or users[0] not in self.users:
            return _error("user_not_found")
        dm = self._resolve_channel(users[0])
        assert dm is not None
        return {"ok": True, "channel": self.channels[dm].to_api(self.bot_user_id)}

    def _files_get_upload_url(self, call: ApiCall) -> Json:
        a = call.args
        filename, length = a.get("filename"), a.get("length")
        if not filename or length is None:
            return _error("invalid_arguments", "filename and length are required")
        file = FakeFile(
            id=self._new_id("F"),
            filename=str(filename),
            length=int(length),
            alt_txt=a.get("alt_txt"),
            snippet_type=a.get("snippet_type"),
        )
        self.files[file.id] = file
        return {"ok": True, "upload_url": f"{self.url}/upload/v1/{file.id}", "file_id": file.id}

    def _files_complete_upload(self, call: ApiCall) -> Json:
        a = call.args
        entries = a.get("files")
        if not isinstance(entries, list) or not entries:
            return _error("invalid_arguments", "files must be a non-empty JSON array")
        channel: str | None = None
        if a.get("channel_id"):
            channel = self._resolve_channel(a["channel_id"])
            if channel is None:
                return _error("channel_not_found")
            if not self.channels[channel].bot_member:
                return _error("not_in_channel")
        done: list[FakeFile] = []
        for entry in entries:
            file = self.files.get(str(entry.get("id")))
            if file is None or file.content is None:
                return _error("file_not_found")
            done.append(file)
        for file, entry in zip(done, entries, strict=True):
            file.completed = True
            file.title = entry.get("title") or file.filename
            file.initial_comment = a.get("initial_comment")
            file.thread_ts = a.get("thread_ts")
            if channel:
                file.channel_ids.append(channel)
        api_files = [f.to_api(self.bot_user_id) for f in done]
        if channel:
            self.messages.append(
                FakeMessage(
                    channel=channel,
                    ts=self._new_ts(),
                    text=str(a.get("initial_comment") or ""),
                    blocks=[],
                    user=self.bot_user_id,
                    bot_id=self.bot_id,
                    app_id=self.app_id,
                    team=self.team_id,
                    thread_ts=a.get("thread_ts"),
                    files=api_files,
                )
            )
        return {"ok": True, "files": api_files}

    def _files_info(self, call: ApiCall) -> Json:
        file = self.files.get(str(call.args.get("file") or ""))
        if file is None or not file.completed:
            return _error("file_not_found")
        return {"ok": True, "file": file.to_api(self.bot_user_id), "comments": []}

    # ------------------------------------------------------------------ HTTP: uploads, hooks

    async def _handle_file_download(self, request: web.Request) -> web.Response:
        """A file's private URL: its bytes for the bot token, else Slack's sign-in page.

        Slack answers a request without a valid token with a 200 HTML page, not a 401; a
        client that does not check the content type takes that page for the file.
        """
        key = request.match_info["key"]
        file_id = key.split("-", 1)[-1]
        file = self.files.get(file_id)
        auth = request.headers.get("Authorization", "")
        authorized = auth == f"Bearer {self.bot_token}"
        if file is None or file.content is None or file.url_base is None:
            status = 404
            response = web.Response(status=404, text="file not found")
        elif not authorized:
            status = 200
            response = web.Response(
                text="<!DOCTYPE html><html><body>Sign in to Slack</body></html>",
                content_type="text/html",
            )
        else:
            status = 200
            response = web.Response(body=file.content, content_type=file.mimetype)
        self.file_downloads.append(FileDownload(file_id, request.path, authorized, status))
        await self._notify()
        return response

    async def _handle_upload(self, request: web.Request) -> web.Response:
        file = self.files.get(request.match_info["file_id"])
        if file is None:
            return web.Response(status=404, text="file not found")
        data = await request.read()
        if request.content_type == "multipart/form-data":
            return web.Response(status=400, text="fake expects the raw bytes, not multipart")
        file.content = data
        await self._notify()
        return web.Response(text=f"OK - {len(data)}", content_type="text/plain")

    async def _handle_hook(self, request: web.Request) -> web.Response:
        path = request.match_info["path"]
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = {"_raw": await request.text()}
        target = self._hooks.get(path)
        call = ResponseUrlCall(
            url=str(request.url),
            kind=target.kind if target else "unknown",
            body=body if isinstance(body, dict) else {"_raw": body},
            user_id=target.user_id if target else None,
            channel_id=target.channel_id if target else None,
            message_ts=target.message_ts if target else None,
            effect="rejected",
            at=time.monotonic(),
        )
        status = 200
        reply: Json = {"ok": True}
        if target is None:
            status, reply = 404, _error("unknown_response_url")
        elif target.uses >= 5:  # Slack: a response_url works five times within 30 minutes
            status, reply = 404, _error("used_url")
        elif (
            not _truthy(call.body.get("delete_original"))
            and (problem := self._message_problems(call.body, require_content=False)) is not None
        ):  # refused like chat.postMessage: the member sees nothing
            status, reply = 400, problem
        else:
            target.uses += 1
            call.effect = self._apply_hook(target, call.body)
        self.response_url_calls.append(call)
        await self._notify()
        return web.json_response(reply, status=status)

    def _apply_hook(self, target: _HookTarget, body: Json) -> str:
        original: FakeMessage | None = None
        if target.message_ts and target.channel_id:
            original = next(
                (
                    m
                    for m in self.messages
                    if m.ts == target.message_ts and m.channel == target.channel_id
                ),
                None,
            )
        if _truthy(body.get("delete_original")):
            if original is not None:
                original.deleted = True
            return "delete_original"
        if _truthy(body.get("replace_original")) and original is not None:
            original.history.append({**original.to_api(), "edited_ts": self._new_ts()})
            original.text = str(body.get("text") or "")
            original.blocks = list(body.get("blocks") or [])
            return "replace_original"
        if body.get("response_type") == "in_channel" and target.channel_id:
            self.messages.append(
                FakeMessage(
                    channel=target.channel_id,
                    ts=self._new_ts(),
                    text=str(body.get("text") or ""),
                    blocks=list(body.get("blocks") or []),
                    user=self.bot_user_id,
                    bot_id=self.bot_id,
                    app_id=self.app_id,
                    team=self.team_id,
                    thread_ts=body.get("thread_ts"),
                )
            )
            return "in_channel"
        self.ephemerals.append(
            FakeEphemeral(
                channel=target.channel_id,
                user=target.user_id,
                ts=self._new_ts(),
                text=body.get("text"),
                blocks=list(body.get("blocks") or []),
                via="response_url",
            )
        )
        return "ephemeral"

    # ------------------------------------------------------------------ Socket Mode

    async def _handle_socket(self, request: web.Request) -> web.StreamResponse:
        ticket = request.query.get("ticket", "")
        if ticket not in self._tickets:
            return web.Response(status=401, text="invalid or missing ticket")
        ws = web.WebSocketResponse(autoping=False)
        await ws.prepare(request)
        conn = SocketConnection(
            id=len(self.socket_connections) + 1, ws=ws, ticket=ticket, opened_at=time.monotonic()
        )
        self.socket_connections.append(conn)
        if self.send_hello:
            await ws.send_json(
                {
                    "type": "hello",
                    "num_connections": sum(1 for c in self.socket_connections if c.open),
                    "debug_info": {
                        "host": f"applink-fake-{conn.id}",
                        "build_number": 1,
                        "approximate_connection_time": 18060,
                    },
                    "connection_info": {"app_id": self.app_id},
                }
            )
        await self._notify()
        try:
            async for msg in ws:
                if msg.type == WSMsgType.TEXT:
                    await self._on_socket_text(conn, msg.data)
                elif msg.type == WSMsgType.PING:
                    conn.pings_received.append(bytes(msg.data))
                    if self.answer_pings:
                        await ws.pong(msg.data)
                elif msg.type == WSMsgType.PONG:
                    conn.pongs_received.append(bytes(msg.data))
                await self._notify()
        finally:
            conn.closed_at = time.monotonic()
            await self._notify()
        return ws

    async def _on_socket_text(self, conn: SocketConnection, data: str) -> None:
        try:
            message = json.loads(data)
        except json.JSONDecodeError:
            message = {"_raw": data}
        conn.messages_received.append(message)
        envelope_id = message.get("envelope_id") if isinstance(message, dict) else None
        if envelope_id is None:
            return
        handle = next((e for e in self.socket_envelopes if e.envelope_id == envelope_id), None)
        if handle is None:
            self.socket_unexpected_acks.append(message)
            return
        handle.acks.append(
            SocketAck(
                envelope_id=envelope_id,
                payload=message.get("payload"),
                latency=time.monotonic() - handle.sent_at,
                raw=message,
            )
        )

    async def wait_for_socket_connection(
        self,
        count: int = 1,
        timeout: float = 5.0,  # noqa: ASYNC109
    ) -> SocketConnection:
        """Wait until ``count`` connections have been made in total and one is open; return the
        newest open one (after ``socket_disconnect``, ``count=2`` waits for the reconnect)."""

        def check() -> SocketConnection | None:
            if len(self.socket_connections) < count:
                return None
            return next((c for c in reversed(self.socket_connections) if c.open), None)

        return await self.wait_for(check, timeout=timeout, what=f"socket connection #{count}")

    async def socket_send(
        self,
        envelope_type: EnvelopeType,
        payload: Json,
        *,
        accepts_response_payload: bool | None = None,
        envelope_id: str | None = None,
        retry_attempt: int = 0,
        retry_reason: str = "",
        connection_timeout: float = 5.0,
    ) -> SocketEnvelope:
        """Send an envelope on the newest open connection (waiting for one) and return its handle.

        ``accepts_response_payload`` defaults as Slack sets it: true for slash commands,
        view_submission and block_suggestion; false otherwise.
        """
        conn = await self.wait_for_socket_connection(timeout=connection_timeout)
        if accepts_response_payload is None:
            accepts_response_payload = envelope_type == "slash_commands" or payload.get("type") in (
                "view_submission",
                "block_suggestion",
            )
        envelope: Json = {
            "envelope_id": envelope_id or str(uuid.uuid4()),
            "payload": payload,
            "type": envelope_type,
            "accepts_response_payload": accepts_response_payload,
        }
        if envelope_type == "events_api":
            envelope["retry_attempt"] = retry_attempt
            envelope["retry_reason"] = retry_reason
        handle = SocketEnvelope(
            self,
            envelope["envelope_id"],
            envelope_type,
            payload,
            accepts_response_payload,
            conn,
        )
        self.socket_envelopes.append(handle)
        handle.sent_at = time.monotonic()
        await conn.ws.send_str(json.dumps(envelope))
        return handle

    async def socket_send_request(self, request: SlackRequest, **kwargs: Any) -> SocketEnvelope:
        """``socket_send(request.envelope_type, request.payload, **kwargs)``."""
        return await self.socket_send(request.envelope_type, request.payload, **kwargs)

    async def socket_disconnect(self, reason: str = "refresh_requested") -> SocketConnection:
        """Send Slack's ``{"type": "disconnect"}`` (``warning``, ``refresh_requested``,
        ``link_disabled``) on the newest connection; a Slack client then reconnects."""
        conn = await self.wait_for_socket_connection()
        await conn.ws.send_json(
            {"type": "disconnect", "reason": reason, "debug_info": {"host": "applink-fake"}}
        )
        return conn

    async def socket_close(self, code: int = WSCloseCode.GOING_AWAY) -> SocketConnection:
        """Close the newest connection from the server side, as a network drop would."""
        conn = await self.wait_for_socket_connection()
        await conn.ws.close(code=code)
        return conn

    async def socket_ping(self, timeout: float = 2.0) -> bytes:  # noqa: ASYNC109
        """Ping the newest connection (Slack pings its clients) and wait for the pong."""
        conn = await self.wait_for_socket_connection()
        data = f"fake-ping:{time.time()}".encode()
        await conn.ws.ping(data)
        return await self.wait_for(
            lambda: data if data in conn.pongs_received else None,
            timeout=timeout,
            what="a pong",
        )
