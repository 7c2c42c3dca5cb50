"""Who a Slack member is: display name and admin status, looked up once and cached briefly.

Every command and click needs a :class:`~bot.core.models.ChatContext`, and Slack payloads carry
only the user id (and a legacy username). ``users.info`` gives the display name and the
workspace admin/owner flags; configured admins (``SLACK_ADMIN_USERS``) and members of the
configured user group (``SLACK_ADMIN_USERGROUP``, via ``usergroups.users.list``) count too.
Answers are cached for a short TTL, and concurrent lookups of one member (or of the admin
group) share a single request, so a burst of clicks costs one lookup per member, while a
member who loses admin rights loses them within a minute.

A failed lookup never blocks the member: the name falls back to the payload's, and admin status
to the configured list only (fail closed).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.log import get_logger

__all__ = ["SlackDirectory", "SlackMember"]

log = get_logger(__name__)

DEFAULT_TTL = 60.0


@dataclass(frozen=True, slots=True)
class SlackMember:
    user_id: str
    name: str
    is_admin: bool


def _display_name(user: dict[str, Any], fallback: str) -> str:
    profile = user.get("profile") or {}
    for candidate in (
        profile.get("display_name"),
        profile.get("real_name"),
        user.get("real_name"),
        user.get("name"),
    ):
        if isinstance(candidate, str) and candidate.strip():
            return candidate.strip()
    return fallback


class SlackDirectory:
    """Cached ``users.info`` / ``usergroups.users.list`` lookups for one workspace's bot."""

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        admin_users: Iterable[str] = (),
        admin_usergroup: str | None = None,
        ttl: float = DEFAULT_TTL,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._admin_users = frozenset(admin_users)
        self._admin_usergroup = admin_usergroup
        self._ttl = ttl
        self._now = now
        self._members: dict[str, tuple[float, SlackMember]] = {}
        self._group: tuple[float, frozenset[str]] | None = None
        self._lookups: dict[str, asyncio.Future[SlackMember]] = {}
        self._group_lookup: asyncio.Future[frozenset[str]] | None = None

    async def member(self, user_id: str, fallback_name: str = "") -> SlackMember:
        """The member's name and admin status (cached for the TTL; one request in flight)."""
        cached = self._members.get(user_id)
        if cached is not None and cached[0] > self._now():
            return cached[1]
        lookup = self._lookups.get(user_id)
        if lookup is None:
            if len(self._members) > 4096:  # drop expired entries now and then
                now = self._now()
                self._members = {k: v for k, v in self._members.items() if v[0] > now}
            lookup = asyncio.ensure_future(self._look_up(user_id, fallback_name))
            self._lookups[user_id] = lookup
            lookup.add_done_callback(lambda _: self._lookups.pop(user_id, None))
        return await asyncio.shield(lookup)

    async def _look_up(self, user_id: str, fallback_name: str) -> SlackMember:
        fallback = fallback_name or user_id
        try:
            response = await self._client.users_info(user=user_id)
        except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
            log.warning("users.info failed for %s (%s); using the request's name", user_id, exc)
            return SlackMember(user_id, fallback, await self._configured_admin(user_id))
        user: dict[str, Any] = response.get("user") or {}
        workspace_admin = any(
            bool(user.get(flag)) for flag in ("is_admin", "is_owner", "is_primary_owner")
        )
        member = SlackMember(
            user_id,
            _display_name(user, fallback),
            workspace_admin or await self._configured_admin(user_id),
        )
        self._members[user_id] = (self._now() + self._ttl, member)
        return member

    async def _configured_admin(self, user_id: str) -> bool:
        if user_id in self._admin_users:
            return True
        if self._admin_usergroup is None:
            return False
        return user_id in await self._group_members()

    async def _group_members(self) -> frozenset[str]:
        if self._group is not None and self._group[0] > self._now():
            return self._group[1]
        if self._group_lookup is None or self._group_lookup.done():
            self._group_lookup = asyncio.ensure_future(self._look_up_group())
        return await asyncio.shield(self._group_lookup)

    async def _look_up_group(self) -> frozenset[str]:
        assert self._admin_usergroup is not None
        try:
            response = await self._client.usergroups_users_list(usergroup=self._admin_usergroup)
        except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
            log.warning(
                "usergroups.users.list failed for %s (%s); its members are not admins for now",
                self._admin_usergroup,
                exc,
            )
            return frozenset()
        members = frozenset(str(u) for u in response.get("users") or ())
        self._group = (self._now() + self._ttl, members)
        return members

    def forget(self, user_id: str | None = None) -> None:
        """Drop cached answers (one member, or everything)."""
        if user_id is None:
            self._members.clear()
            self._group = None
        else:
            self._members.pop(user_id, None)
