"""Plain data behind the Discord fake: snowflakes, guild entities, messages and recorded calls.

Everything here is a small mutable dataclass that can render itself as the JSON payload Discord
would send (``to_payload``). Nothing in this module talks to the network or imports discord.py.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "ALL_PERMISSIONS",
    "DEFAULT_BOT_PERMISSIONS",
    "DEFAULT_EVERYONE_PERMISSIONS",
    "EPHEMERAL",
    "LOADING",
    "Call",
    "FakeChannel",
    "FakeGuild",
    "FakeMember",
    "FakeMessage",
    "FakeRole",
    "FakeUser",
    "SnowflakeFactory",
    "UploadedFile",
    "iso_now",
    "path_matcher",
    "permission_value",
]

DISCORD_EPOCH_MS = 1_420_070_400_000

# Message flags.
EPHEMERAL = 1 << 6
LOADING = 1 << 7

# Permission bits (https://discord.com/developers/docs/topics/permissions).
_ADMINISTRATOR = 1 << 3
ALL_PERMISSIONS = (1 << 53) - 1
DEFAULT_EVERYONE_PERMISSIONS = (
    (1 << 6)  # add reactions
    | (1 << 10)  # view channel
    | (1 << 11)  # send messages
    | (1 << 14)  # embed links
    | (1 << 15)  # attach files
    | (1 << 16)  # read message history
    | (1 << 31)  # use application commands
    | (1 << 35)  # create public threads
    | (1 << 38)  # send messages in threads
)
DEFAULT_BOT_PERMISSIONS = (
    DEFAULT_EVERYONE_PERMISSIONS
    | (1 << 13)  # manage messages
    | (1 << 34)  # manage threads
)


def iso_now() -> str:
    return datetime.now(UTC).isoformat()


def permission_value(value: object) -> int:
    """An ``int``, or anything with an integer ``.value`` (such as ``discord.Permissions``)."""
    if isinstance(value, bool):
        raise TypeError("permissions must be an int or discord.Permissions, not bool")
    if isinstance(value, int):
        return value
    inner = getattr(value, "value", None)
    if isinstance(inner, int):
        return inner
    raise TypeError(f"permissions must be an int or discord.Permissions, not {value!r}")


class SnowflakeFactory:
    """Monotonically increasing Discord-shaped snowflakes (timestamp in the top 42 bits)."""

    def __init__(self) -> None:
        self._last = 0
        self._lock = threading.Lock()

    def __call__(self) -> int:
        with self._lock:
            candidate = (int(time.time() * 1000) - DISCORD_EPOCH_MS) << 22
            self._last = max(candidate, self._last + 1)
            return self._last

    def on_shard(self, shard_id: int, shard_count: int) -> int:
        """The next snowflake on shard ``shard_id`` of ``shard_count`` (``(id >> 22) % count``):
        a guild id that a given shard holds. Moves the timestamp ahead by under ``count`` ms."""
        with self._lock:
            now = (int(time.time() * 1000) - DISCORD_EPOCH_MS) << 22
            candidate = max(now, self._last + 1)
            millis = candidate >> 22
            millis += (shard_id - millis) % shard_count
            self._last = max(candidate, millis << 22)
            return self._last


# --- guild entities ------------------------------------------------------------------------------


@dataclass
class FakeUser:
    id: int
    name: str
    bot: bool = False
    global_name: str | None = None
    #: False: the user does not take DMs from server members (sending gives 403, code 50007).
    dms_open: bool = True

    def to_payload(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "username": self.name,
            "global_name": self.global_name,
            "discriminator": "0",
            "avatar": None,
            "bot": self.bot,
            "system": False,
            "public_flags": 0,
            "flags": 0,
        }


@dataclass
class FakeRole:
    id: int
    guild_id: int
    name: str
    permissions: int = 0
    position: int = 0
    managed: bool = False

    def to_payload(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "name": self.name,
            "color": 0,
            "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
            "hoist": False,
            "icon": None,
            "unicode_emoji": None,
            "position": self.position,
            "permissions": str(self.permissions),
            "managed": self.managed,
            "mentionable": False,
            "flags": 0,
        }


@dataclass
class FakeChannel:
    """A guild text channel (type 0), a thread (type 11) or a DM channel (type 1)."""

    id: int
    name: str
    guild_id: int | None
    type: int = 0
    parent_id: int | None = None
    position: int = 0
    owner_id: int | None = None
    recipients: list[FakeUser] = field(default_factory=list)

    @property
    def is_thread(self) -> bool:
        return self.type in (10, 11, 12)

    def to_payload(self) -> dict[str, Any]:
        if self.type == 1:
            return {
                "id": str(self.id),
                "type": 1,
                "last_message_id": None,
                "recipients": [user.to_payload() for user in self.recipients],
            }
        payload: dict[str, Any] = {
            "id": str(self.id),
            "type": self.type,
            "guild_id": str(self.guild_id),
            "name": self.name,
            "position": self.position,
            "parent_id": str(self.parent_id) if self.parent_id else None,
            "permission_overwrites": [],
            "nsfw": False,
            "topic": None,
            "rate_limit_per_user": 0,
            "last_message_id": None,
            "flags": 0,
        }
        if self.is_thread:
            payload.pop("permission_overwrites")
            payload.pop("position")
            payload.update(
                owner_id=str(self.owner_id) if self.owner_id else None,
                member_count=1,
                message_count=0,
                total_message_sent=0,
                thread_metadata={
                    "archived": False,
                    "auto_archive_duration": 1440,
                    "archive_timestamp": iso_now(),
                    "locked": False,
                    "invitable": True,
                    "create_timestamp": iso_now(),
                },
            )
        return payload


@dataclass
class FakeMember:
    user: FakeUser
    guild_id: int
    roles: list[int] = field(default_factory=list)
    nick: str | None = None
    permissions_override: int | None = None
    joined_at: str = field(default_factory=iso_now)

    @property
    def id(self) -> int:
        return self.user.id

    @property
    def name(self) -> str:
        return self.user.name

    def to_payload(self, *, permissions: int | None = None) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "user": self.user.to_payload(),
            "nick": self.nick,
            "avatar": None,
            "banner": None,
            "roles": [str(role) for role in self.roles],
            "joined_at": self.joined_at,
            "premium_since": None,
            "deaf": False,
            "mute": False,
            "pending": False,
            "flags": 0,
            "communication_disabled_until": None,
        }
        if permissions is not None:
            payload["permissions"] = str(permissions)
        return payload


@dataclass
class FakeGuild:
    """A guild as the fake knows it. ``@everyone`` is the role whose id equals the guild id."""

    id: int
    name: str
    owner_id: int
    roles: dict[int, FakeRole] = field(default_factory=dict)
    channels: dict[int, FakeChannel] = field(default_factory=dict)
    members: dict[int, FakeMember] = field(default_factory=dict)
    locale: str = "en-US"

    # -- lookups (by id or by name) ---------------------------------------------------------------

    @property
    def everyone(self) -> FakeRole:
        return self.roles[self.id]

    def channel(self, ref: int | str) -> FakeChannel:
        """A channel by id or by name (``"general"`` or ``"#general"``)."""
        if isinstance(ref, int):
            try:
                return self.channels[ref]
            except KeyError:
                raise KeyError(f"guild {self.name!r} has no channel with id {ref}") from None
        name = ref.removeprefix("#")
        for channel in self.channels.values():
            if channel.name == name:
                return channel
        known = ", ".join(sorted(c.name for c in self.channels.values()))
        raise KeyError(f"guild {self.name!r} has no channel named {name!r} (has: {known})")

    def role(self, ref: int | str) -> FakeRole:
        """A role by id or by name (``"@everyone"`` works too)."""
        if isinstance(ref, int):
            try:
                return self.roles[ref]
            except KeyError:
                raise KeyError(f"guild {self.name!r} has no role with id {ref}") from None
        for role in self.roles.values():
            if role.name == ref:
                return role
        known = ", ".join(sorted(r.name for r in self.roles.values()))
        raise KeyError(f"guild {self.name!r} has no role named {ref!r} (has: {known})")

    def member(self, ref: int | str) -> FakeMember:
        """A member by user id or by user name."""
        if isinstance(ref, int):
            try:
                return self.members[ref]
            except KeyError:
                raise KeyError(f"guild {self.name!r} has no member with id {ref}") from None
        for member in self.members.values():
            if member.name == ref:
                return member
        raise KeyError(f"guild {self.name!r} has no member named {ref!r}")

    def permissions_of(self, member: FakeMember) -> int:
        """Guild-level permissions: owner and administrators get all, else the OR of the roles."""
        if member.permissions_override is not None:
            return member.permissions_override
        if member.id == self.owner_id:
            return ALL_PERMISSIONS
        value = self.everyone.permissions
        for role_id in member.roles:
            role = self.roles.get(role_id)
            if role is not None:
                value |= role.permissions
        if value & _ADMINISTRATOR:
            return ALL_PERMISSIONS
        return value

    # -- payloads ---------------------------------------------------------------------------------

    def to_payload(self, *, with_state: bool) -> dict[str, Any]:
        """REST shape (``with_state=False``) or the GUILD_CREATE shape (``with_state=True``)."""
        payload: dict[str, Any] = {
            "id": str(self.id),
            "name": self.name,
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "banner": None,
            "description": None,
            "owner_id": str(self.owner_id),
            "region": "deprecated",
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "nsfw_level": 0,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "preferred_locale": self.locale,
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "public_updates_channel_id": None,
            "safety_alerts_channel_id": None,
            "vanity_url_code": None,
            "application_id": None,
            "max_members": 500000,
            "max_video_channel_users": 25,
            "features": [],
            "roles": [role.to_payload() for role in self.roles.values()],
            "emojis": [],
            "stickers": [],
            "approximate_member_count": len(self.members),
            "approximate_presence_count": 0,
        }
        if with_state:
            threads = [c for c in self.channels.values() if c.is_thread]
            payload.update(
                unavailable=False,
                large=False,
                lazy=True,
                member_count=len(self.members),
                joined_at=iso_now(),
                channels=[
                    _without_guild_id(c.to_payload())
                    for c in self.channels.values()
                    if not c.is_thread
                ],
                threads=[c.to_payload() for c in threads],
                members=[m.to_payload() for m in self.members.values()],
                voice_states=[],
                presences=[],
                stage_instances=[],
                guild_scheduled_events=[],
                soundboard_sounds=[],
            )
        return payload


def _without_guild_id(payload: dict[str, Any]) -> dict[str, Any]:
    # GUILD_CREATE omits guild_id inside its channel list, exactly like Discord.
    payload.pop("guild_id", None)
    return payload


# --- messages ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UploadedFile:
    """One file part of a multipart request (``files[N]``)."""

    field: str
    filename: str
    content_type: str
    data: bytes

    @property
    def text(self) -> str:
        return self.data.decode("utf-8")


def _walk_components(components: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for component in components:
        yield component
        yield from _walk_components(component.get("components") or [])
        for key in ("component", "accessory"):
            inner = component.get(key)
            if isinstance(inner, dict):
                yield from _walk_components([inner])


class FakeMessage:
    """A live view of a message the fake stores; ``payload`` is the exact JSON Discord would return.

    The same object is updated in place on PATCH, so keep it and re-read attributes after an edit.
    """

    def __init__(self, payload: dict[str, Any], files: Mapping[str, UploadedFile] | None = None):
        self.payload = payload
        # attachment id -> uploaded bytes (so a test can read what the bot attached)
        self.uploads: dict[str, UploadedFile] = dict(files or {})
        self.edits = 0
        self.deleted = False

    def __repr__(self) -> str:
        return f"<FakeMessage id={self.id} channel={self.channel_id} content={self.content!r}>"

    @property
    def id(self) -> int:
        return int(self.payload["id"])

    @property
    def channel_id(self) -> int:
        return int(self.payload["channel_id"])

    @property
    def content(self) -> str:
        return str(self.payload.get("content") or "")

    @property
    def embeds(self) -> list[dict[str, Any]]:
        return list(self.payload.get("embeds") or [])

    @property
    def components(self) -> list[dict[str, Any]]:
        return list(self.payload.get("components") or [])

    @property
    def flags(self) -> int:
        return int(self.payload.get("flags") or 0)

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & EPHEMERAL)

    @property
    def loading(self) -> bool:
        return bool(self.flags & LOADING)

    @property
    def attachments(self) -> list[dict[str, Any]]:
        return list(self.payload.get("attachments") or [])

    @property
    def mentioned_user_ids(self) -> list[int]:
        """Users this message pings, as Discord resolved them under ``allowed_mentions``."""
        return [int(u["id"]) for u in self.payload.get("mentions") or []]

    @property
    def files(self) -> dict[str, bytes]:
        """Uploaded attachment bytes by filename."""
        by_id = {str(a["id"]): a["filename"] for a in self.attachments}
        return {by_id[aid]: up.data for aid, up in self.uploads.items() if aid in by_id}

    def walk_components(self) -> Iterator[dict[str, Any]]:
        """Every component, depth first (action rows, their buttons, sections, labels...)."""
        return _walk_components(self.components)

    @property
    def interactive(self) -> list[dict[str, Any]]:
        """Components with a ``custom_id`` (buttons, selects, text inputs)."""
        return [c for c in self.walk_components() if c.get("custom_id")]

    @property
    def custom_ids(self) -> list[str]:
        return [str(c["custom_id"]) for c in self.interactive]

    @property
    def buttons(self) -> list[dict[str, Any]]:
        return [c for c in self.walk_components() if c.get("type") == 2]

    def component(
        self, *, custom_id: str | None = None, label: str | None = None
    ) -> dict[str, Any]:
        """Find one interactive component by ``custom_id`` or by ``label``."""
        for component in self.interactive:
            if custom_id is not None and component.get("custom_id") == custom_id:
                return component
            if label is not None and component.get("label") == label:
                return component
        wanted = f"custom_id={custom_id!r}" if custom_id is not None else f"label={label!r}"
        raise LookupError(
            f"message {self.id} has no component with {wanted}; has {self.custom_ids}"
        )


# --- recorded REST calls -------------------------------------------------------------------------


@dataclass
class Call:
    """One REST request the fake received, and what it answered.

    ``path`` excludes the ``/api/v10`` prefix. ``json`` is the parsed body; for a multipart
    request it is the parsed ``payload_json`` part and the files are in ``files``. ``route`` is
    the matched template (``/channels/{channel_id}/messages``), ``None`` for an unknown route.
    """

    method: str
    path: str
    route: str | None
    params: dict[str, str]
    query: dict[str, str]
    headers: dict[str, str]
    json: Any
    files: list[UploadedFile]
    form: dict[str, str]
    authorized: bool
    status: int = 0
    response: Any = None
    at: float = field(default_factory=time.monotonic)

    @property
    def known(self) -> bool:
        return self.route is not None

    def file(self, filename: str) -> UploadedFile:
        for upload in self.files:
            if upload.filename == filename:
                return upload
        raise LookupError(f"{self.method} {self.path} uploaded no file named {filename!r}")

    def __str__(self) -> str:
        body = "" if self.json is None else " " + json.dumps(self.json)[:200]
        files = f" files={[f.filename for f in self.files]}" if self.files else ""
        return f"{self.method} {self.path} -> {self.status}{body}{files}"


def path_matcher(pattern: str) -> re.Pattern[str]:
    """``/channels/{id}/messages`` matches any single path segment where ``{...}`` stands.

    A pattern without placeholders matches that exact path. A leading ``/api/vN`` is ignored.
    """
    pattern = re.sub(r"^/api/v\d+", "", pattern)
    parts = re.split(r"(\{[^}]*\})", pattern)
    regex = "".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts)
    return re.compile(regex)
