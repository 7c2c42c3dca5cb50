"""What the Discord fake remembers, and the objects a test awaits on.

:class:`FakeState` holds guilds, messages, synced commands, interactions and every REST call.
:class:`FakeInteraction` is what ``fake.slash_command()``, ``fake.click()`` and friends return:
await its :meth:`~FakeInteraction.response` (the raw callback), :meth:`~FakeInteraction.reply`
(the message the user ends up seeing) or :meth:`~FakeInteraction.followup`.
"""

from __future__ import annotations

import asyncio
import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tests.fakes.discord_models import (
    EPHEMERAL,
    LOADING,
    Call,
    FakeChannel,
    FakeGuild,
    FakeMessage,
    FakeUser,
    SnowflakeFactory,
    UploadedFile,
    iso_now,
    path_matcher,
)

__all__ = ["CallbackResponse", "FakeInteraction", "FakeState"]

T = TypeVar("T")

DEFAULT_TIMEOUT = 5.0

# Interaction callback types.
PONG = 1
CHANNEL_MESSAGE = 4
DEFERRED_CHANNEL_MESSAGE = 5
DEFERRED_UPDATE_MESSAGE = 6
UPDATE_MESSAGE = 7
AUTOCOMPLETE_RESULT = 8
MODAL = 9
CALLBACK_NAMES = {
    PONG: "PONG",
    CHANNEL_MESSAGE: "CHANNEL_MESSAGE_WITH_SOURCE",
    DEFERRED_CHANNEL_MESSAGE: "DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE",
    DEFERRED_UPDATE_MESSAGE: "DEFERRED_UPDATE_MESSAGE",
    UPDATE_MESSAGE: "UPDATE_MESSAGE",
    AUTOCOMPLETE_RESULT: "APPLICATION_COMMAND_AUTOCOMPLETE_RESULT",
    MODAL: "MODAL",
}

_USER_MENTION = re.compile(r"<@!?([0-9]+)>")
_ROLE_MENTION = re.compile(r"<@&([0-9]+)>")


class Changes:
    """A broadcast "something happened" signal: waiters re-check their condition on each change."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        event, self._event = self._event, asyncio.Event()
        event.set()

    async def until(
        self,
        check: Callable[[], T | None],
        *,
        timeout: float,  # noqa: ASYNC109
        describe: Callable[[], str],
    ) -> T:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            event = self._event
            result = check()
            if result is not None:
                return result
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(describe())
            try:
                await asyncio.wait_for(event.wait(), remaining)
            except TimeoutError:
                continue


@dataclass
class CallbackResponse:
    """The body the bot POSTed to ``/interactions/{id}/{token}/callback``.

    ``data`` is the callback's ``data`` object (``{}`` for a bare defer). ``message`` is the message
    the callback created or updated (types 4, 5 and 7), as stored by the fake.
    """

    type: int
    data: dict[str, Any]
    files: list[UploadedFile]
    call: Call
    message: FakeMessage | None = None

    def __repr__(self) -> str:
        name = CALLBACK_NAMES.get(self.type, str(self.type))
        return f"<CallbackResponse {name} content={self.content!r} flags={self.flags}>"

    @property
    def type_name(self) -> str:
        return CALLBACK_NAMES.get(self.type, str(self.type))

    @property
    def content(self) -> str:
        return str(self.data.get("content") or "")

    @property
    def embeds(self) -> list[dict[str, Any]]:
        return list(self.data.get("embeds") or [])

    @property
    def components(self) -> list[dict[str, Any]]:
        return list(self.data.get("components") or [])

    @property
    def flags(self) -> int:
        return int(self.data.get("flags") or 0)

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & EPHEMERAL)

    @property
    def attachments(self) -> list[dict[str, Any]]:
        return list(self.data.get("attachments") or [])

    @property
    def allowed_mentions(self) -> dict[str, Any] | None:
        value = self.data.get("allowed_mentions")
        return value if isinstance(value, dict) else None

    @property
    def deferred(self) -> bool:
        return self.type in (DEFERRED_CHANNEL_MESSAGE, DEFERRED_UPDATE_MESSAGE)

    # -- autocomplete (type 8) ---------------------------------------------------------------------

    @property
    def choices(self) -> list[dict[str, Any]]:
        return list(self.data.get("choices") or [])

    # -- modal (type 9) ----------------------------------------------------------------------------

    @property
    def is_modal(self) -> bool:
        return self.type == MODAL

    @property
    def custom_id(self) -> str:
        return str(self.data.get("custom_id") or "")

    @property
    def title(self) -> str:
        return str(self.data.get("title") or "")

    @property
    def text_inputs(self) -> list[dict[str, Any]]:
        """The modal's text inputs; each gets a ``label`` key even when it sits inside a Label."""
        found: list[dict[str, Any]] = []

        def walk(components: list[dict[str, Any]], label: str | None) -> None:
            for component in components:
                if component.get("type") == 18:  # Label wraps exactly one component
                    walk([component["component"]], component.get("label"))
                elif component.get("type") == 4:
                    item = dict(component)
                    if label is not None:
                        item.setdefault("label", label)
                    found.append(item)
                else:
                    walk(component.get("components") or [], label)

        walk(self.components, None)
        return found


class FakeInteraction:
    """One interaction the fake sent to the bot, and everything the bot answered to it."""

    def __init__(self, state: FakeState, payload: dict[str, Any], *, description: str):
        self._state = state
        self.payload = payload
        self.description = description
        self.callback: CallbackResponse | None = None
        self.rejected_callbacks: list[Call] = []
        self.original: FakeMessage | None = None
        self.original_edits = 0
        self.followups: list[FakeMessage] = []
        self.source_message: FakeMessage | None = None

    def __repr__(self) -> str:
        return f"<FakeInteraction {self.description} id={self.id}>"

    @property
    def id(self) -> int:
        return int(self.payload["id"])

    @property
    def token(self) -> str:
        return str(self.payload["token"])

    @property
    def type(self) -> int:
        return int(self.payload["type"])

    @property
    def channel_id(self) -> int:
        return int(self.payload["channel_id"])

    @property
    def guild_id(self) -> int | None:
        value = self.payload.get("guild_id")
        return int(value) if value is not None else None

    @property
    def user_id(self) -> int:
        user = self.payload["member"]["user"] if "member" in self.payload else self.payload["user"]
        return int(user["id"])

    @property
    def responded(self) -> bool:
        return self.callback is not None

    def _timeout_message(self, what: str, timeout: float) -> str:
        recent = "\n  ".join(str(c) for c in self._state.calls[-10:]) or "(none)"
        return (
            f"{self!r}: no {what} within {timeout}s. The bot's handler may have raised (see the "
            f"captured log) or answered differently.\nLast REST calls:\n  {recent}"
        )

    async def response(self, timeout: float = DEFAULT_TIMEOUT) -> CallbackResponse:  # noqa: ASYNC109
        """Wait for the interaction callback (the bot's first answer) and return it."""
        return await self._state.changes.until(
            lambda: self.callback,
            timeout=timeout,
            describe=lambda: self._timeout_message("callback", timeout),
        )

    async def followup(self, index: int = 0, timeout: float = DEFAULT_TIMEOUT) -> FakeMessage:  # noqa: ASYNC109
        """Wait for the ``index``-th follow-up message (``POST /webhooks/{app}/{token}``).

        The first follow-up after a deferred (type 5) callback resolves the loading message, so it
        *is* the original response (same id): that is Discord's behaviour, and the fake's.
        """

        def check() -> FakeMessage | None:
            return self.followups[index] if len(self.followups) > index else None

        return await self._state.changes.until(
            check, timeout=timeout, describe=lambda: self._timeout_message("follow-up", timeout)
        )

    async def original_edit(self, count: int = 1, timeout: float = DEFAULT_TIMEOUT) -> FakeMessage:  # noqa: ASYNC109
        """Wait until ``@original`` was edited ``count`` times; return the original message."""

        def check() -> FakeMessage | None:
            return self.original if self.original_edits >= count and self.original else None

        return await self._state.changes.until(
            check,
            timeout=timeout,
            describe=lambda: self._timeout_message(f"edit #{count} of @original", timeout),
        )

    async def reply(self, timeout: float = DEFAULT_TIMEOUT) -> FakeMessage:  # noqa: ASYNC109
        """The message the user sees as the answer, however the bot produced it.

        * type 4 (message) -> the new message; type 7 (update) -> the updated source message;
        * type 5 (deferred) -> the original once a PATCH ``@original`` or the first follow-up
          resolved its loading state;
        * type 6 (deferred update) -> the first follow-up, or the source message once edited.
        """
        callback = await self.response(timeout)
        if callback.type in (CHANNEL_MESSAGE, UPDATE_MESSAGE):
            assert callback.message is not None
            return callback.message
        if callback.type == DEFERRED_CHANNEL_MESSAGE:

            def resolved() -> FakeMessage | None:
                original = self.original
                return original if original is not None and not original.loading else None

            return await self._state.changes.until(
                resolved,
                timeout=timeout,
                describe=lambda: self._timeout_message("reply after the defer", timeout),
            )
        if callback.type == DEFERRED_UPDATE_MESSAGE:

            def updated() -> FakeMessage | None:
                if self.followups:
                    return self.followups[0]
                return self.original if self.original_edits else None

            return await self._state.changes.until(
                updated,
                timeout=timeout,
                describe=lambda: self._timeout_message("reply after the defer", timeout),
            )
        raise AssertionError(f"{self!r} was answered with {callback.type_name}, not a message")


@dataclass
class FakeState:
    """Everything the fake knows. The REST and gateway halves both read and write this."""

    token: str
    bot: FakeUser
    application_id: int
    application_name: str
    application_flags: int
    ids: SnowflakeFactory
    http_base: str = ""
    #: What ``GET /gateway/bot`` recommends as ``shards`` (AutoShardedClient without a count).
    shard_count: int = 1
    guilds: dict[int, FakeGuild] = field(default_factory=dict)
    dm_channels: dict[int, FakeChannel] = field(default_factory=dict)
    messages: dict[int, FakeMessage] = field(default_factory=dict)
    global_commands: dict[int, dict[str, Any]] = field(default_factory=dict)
    guild_commands: dict[int, dict[int, dict[str, Any]]] = field(default_factory=dict)
    interactions: dict[int, FakeInteraction] = field(default_factory=dict)
    interactions_by_token: dict[str, FakeInteraction] = field(default_factory=dict)
    # modal custom_id -> the interaction whose callback (type 9) opened it most recently
    modals: dict[str, FakeInteraction] = field(default_factory=dict)
    # attachment id -> bytes, served at http_base/attachments/{channel}/{id}/{filename}
    uploads: dict[str, UploadedFile] = field(default_factory=dict)
    # attachment ids in the order their bytes were downloaded from that URL
    downloads: list[str] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    changes: Changes = field(default_factory=Changes)

    # -- lookups ----------------------------------------------------------------------------------

    def channel(self, channel_id: int) -> FakeChannel | None:
        for guild in self.guilds.values():
            if channel_id in guild.channels:
                return guild.channels[channel_id]
        return self.dm_channels.get(channel_id)

    def guild_of(self, channel: FakeChannel) -> FakeGuild | None:
        return self.guilds.get(channel.guild_id) if channel.guild_id is not None else None

    def known_user(self, user_id: int) -> FakeUser | None:
        if user_id == self.bot.id:
            return self.bot
        for guild in self.guilds.values():
            if user_id in guild.members:
                return guild.members[user_id].user
        return None

    def calls_to(self, method: str | None, pattern: str) -> list[Call]:
        matcher = path_matcher(pattern)
        wanted = method.upper() if method else None
        return [
            c
            for c in self.calls
            if (wanted in (None, "*") or c.method == wanted) and matcher.fullmatch(c.path)
        ]

    # -- messages ---------------------------------------------------------------------------------

    def attachment_url(self, channel_id: int, attachment_id: int, filename: str) -> str:
        return f"{self.http_base}/attachments/{channel_id}/{attachment_id}/{filename}"

    def create_message(
        self,
        channel: FakeChannel,
        body: dict[str, Any],
        uploads: list[UploadedFile],
        *,
        interaction: FakeInteraction | None = None,
        extra_flags: int = 0,
    ) -> FakeMessage:
        message_id = self.ids()
        payload: dict[str, Any] = {
            "id": str(message_id),
            "channel_id": str(channel.id),
            "type": 0,
            "author": self.bot.to_payload(),
            "content": "",
            "embeds": [],
            "components": [],
            "attachments": [],
            "mentions": [],
            "mention_roles": [],
            "mention_channels": [],
            "mention_everyone": False,
            "pinned": False,
            "tts": bool(body.get("tts", False)),
            "timestamp": iso_now(),
            "edited_timestamp": None,
            "flags": 0,
            "reactions": [],
            "sticker_items": [],
            "nonce": body.get("nonce"),
        }
        if channel.guild_id is not None:
            payload["guild_id"] = str(channel.guild_id)
        if body.get("message_reference"):
            payload["type"] = 19
            payload["message_reference"] = {
                "type": 0,
                "channel_id": str(channel.id),
                **body["message_reference"],
            }
        if interaction is not None:
            payload["webhook_id"] = str(self.application_id)
            payload["application_id"] = str(self.application_id)
            payload["type"] = 20 if interaction.type == 2 else 0
            payload["interaction_metadata"] = self._interaction_metadata(interaction)
        message = FakeMessage(payload)
        self._apply(message, body, uploads, creating=True)
        payload["flags"] = int(payload["flags"]) | extra_flags
        self.messages[message_id] = message
        return message

    def edit_message(
        self,
        message: FakeMessage,
        body: dict[str, Any],
        uploads: list[UploadedFile],
        *,
        resolve_loading: bool = False,
    ) -> FakeMessage:
        """Apply a PATCH body. ``resolve_loading`` fills a deferred "thinking" message instead:
        the flags stay the defer's (ephemeral cannot change), and it does not count as an edit."""
        if resolve_loading:
            body = {**body, "flags": message.flags & EPHEMERAL}
        self._apply(message, body, uploads, creating=False)
        if resolve_loading:
            message.payload["flags"] = message.flags & ~LOADING
        else:
            message.payload["edited_timestamp"] = iso_now()
            message.edits += 1
        return message

    def _interaction_metadata(self, interaction: FakeInteraction) -> dict[str, Any]:
        user = interaction.payload.get("member", {}).get("user") or interaction.payload.get("user")
        metadata: dict[str, Any] = {
            "id": str(interaction.id),
            "type": interaction.type,
            "user": user,
            "authorizing_integration_owners": interaction.payload["authorizing_integration_owners"],
        }
        if interaction.type == 2:
            metadata["name"] = interaction.payload["data"]["name"]
            metadata["command_type"] = interaction.payload["data"].get("type", 1)
        if interaction.source_message is not None:
            metadata["interacted_message_id"] = str(interaction.source_message.id)
        return metadata

    def _apply(
        self,
        message: FakeMessage,
        body: dict[str, Any],
        uploads: list[UploadedFile],
        *,
        creating: bool,
    ) -> None:
        payload = message.payload
        if "content" in body:
            payload["content"] = body["content"] or ""
        if "embeds" in body:
            payload["embeds"] = [{"type": "rich", **e} for e in copy.deepcopy(body["embeds"] or [])]
        if "components" in body:
            components = copy.deepcopy(body["components"] or [])
            _number_components(components)
            payload["components"] = components
        if "flags" in body and body["flags"] is not None:
            keep = 0 if creating else int(payload.get("flags") or 0) & EPHEMERAL
            payload["flags"] = (int(body["flags"]) & ~LOADING) | keep
        if body.get("poll"):
            payload["poll"] = copy.deepcopy(body["poll"])
        if "attachments" in body or uploads:
            self._apply_attachments(message, body.get("attachments"), uploads)
        if "content" in body or "allowed_mentions" in body or creating:
            self._apply_mentions(message, body.get("allowed_mentions"))

    def _apply_attachments(
        self,
        message: FakeMessage,
        spec: list[dict[str, Any]] | None,
        uploads: list[UploadedFile],
    ) -> None:
        by_field = {u.field: u for u in uploads}
        existing = {str(a["id"]): a for a in message.attachments}
        if spec is None:
            spec = [{"id": index, "filename": u.filename} for index, u in enumerate(uploads)]
        result: list[dict[str, Any]] = []
        for item in spec:
            raw_id = str(item.get("id"))
            if raw_id in existing:  # keeping an attachment on edit
                result.append(existing[raw_id])
                continue
            upload = by_field.get(f"files[{raw_id}]")
            if upload is None:
                continue
            attachment_id = self.ids()
            filename = item.get("filename") or upload.filename
            attachment: dict[str, Any] = {
                "id": str(attachment_id),
                "filename": filename,
                "size": len(upload.data),
                "url": self.attachment_url(message.channel_id, attachment_id, filename),
                "proxy_url": self.attachment_url(message.channel_id, attachment_id, filename),
                "content_type": _guess_type(filename, upload.content_type),
            }
            if item.get("description"):
                attachment["description"] = item["description"]
            if item.get("title"):
                attachment["title"] = item["title"]
            result.append(attachment)
            message.uploads[str(attachment_id)] = upload
            self.uploads[str(attachment_id)] = upload
        message.payload["attachments"] = result

    def _apply_mentions(self, message: FakeMessage, allowed: dict[str, Any] | None) -> None:
        """Resolve mentions in the content the way Discord does, honouring ``allowed_mentions``."""
        content = message.content
        parse = {"users", "roles", "everyone"} if allowed is None else set(allowed.get("parse", []))
        allowed_users = set() if allowed is None else {str(u) for u in allowed.get("users", [])}
        allowed_roles = set() if allowed is None else {str(r) for r in allowed.get("roles", [])}
        users: list[dict[str, Any]] = []
        for raw in dict.fromkeys(_USER_MENTION.findall(content)):
            if "users" in parse or raw in allowed_users:
                known = self.known_user(int(raw))
                user = known or FakeUser(int(raw), f"user{raw}")
                users.append(user.to_payload())
        roles = [
            raw
            for raw in dict.fromkeys(_ROLE_MENTION.findall(content))
            if "roles" in parse or raw in allowed_roles
        ]
        message.payload["mentions"] = users
        message.payload["mention_roles"] = roles
        message.payload["mention_everyone"] = "everyone" in parse and (
            "@everyone" in content or "@here" in content
        )


def _number_components(components: list[dict[str, Any]], start: int = 1) -> int:
    """Discord gives every component a numeric ``id`` in responses; keep any the bot chose."""
    used: set[int] = set()

    def collect(items: list[dict[str, Any]]) -> None:
        for item in items:
            if isinstance(item.get("id"), int):
                used.add(item["id"])
            collect(item.get("components") or [])
            for key in ("component", "accessory"):
                if isinstance(item.get(key), dict):
                    collect([item[key]])

    collect(components)
    counter = start

    def assign(items: list[dict[str, Any]]) -> None:
        nonlocal counter
        for item in items:
            if not isinstance(item.get("id"), int):
                while counter in used:
                    counter += 1
                item["id"] = counter
                used.add(counter)
            assign(item.get("components") or [])
            for key in ("component", "accessory"):
                if isinstance(item.get(key), dict):
                    assign([item[key]])

    assign(components)
    return counter


def _guess_type(filename: str, sent: str) -> str:
    if sent and sent != "application/octet-stream":
        return sent
    suffix = filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    return {
        "txt": "text/plain; charset=utf-8",
        "py": "text/x-python; charset=utf-8",
        "json": "application/json; charset=utf-8",
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "csv": "text/csv; charset=utf-8",
    }.get(suffix, "application/octet-stream")
