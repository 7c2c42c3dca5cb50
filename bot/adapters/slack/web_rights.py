"""Whether someone administers the Slack workspace now, asked through the bot token: for the
admin web page's sign-in and its check before every write.

The same rule as chat (:mod:`bot.adapters.slack.identity`): a workspace admin or owner by
``users.info``, or a member named in ``SLACK_ADMIN_USERS``; the member must belong to that
team. Fresh answers (no cache), so revoked rights stop the next write.
"""

from __future__ import annotations

from collections.abc import Iterable

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.log import get_logger

__all__ = ["SlackRights"]

log = get_logger(__name__)


class SlackRights:
    """``await rights(user_id, team_id)``."""

    def __init__(self, api_url: str, token: str, admin_users: Iterable[str] = ()) -> None:
        self._client = AsyncWebClient(token=token, base_url=api_url, timeout=10)
        self._admin_users = frozenset(admin_users)

    async def __call__(self, member: str, team: str) -> bool:
        try:
            response = await self._client.users_info(user=member)
        except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
            log.warning("users.info failed for %s (%s); not an admin for now", member, exc)
            return False
        user = response.get("user") or {}
        if str(user.get("team_id") or "") != team or user.get("deleted"):
            return False
        if member in self._admin_users:
            return True
        return any(bool(user.get(flag)) for flag in ("is_admin", "is_owner", "is_primary_owner"))
