"""Whether someone administers a Discord server now, asked through the bot's REST token: for
the admin web page's sign-in (the admin role) and its check before every write.

The same rule as chat (:mod:`bot.adapters.discord.identity`): the server's owner, Manage Server
or Administrator from the member's roles (the ``@everyone`` role included), or one of the role
ids in ``DISCORD_ADMIN_ROLE``. Ids and permissions only, never names.
"""

from __future__ import annotations

import httpx

__all__ = ["DiscordRights"]

ADMINISTRATOR = 1 << 3
MANAGE_GUILD = 1 << 5


class DiscordRights:
    """``await rights(member_id, guild_id)``: a fresh answer each time (no cache)."""

    def __init__(
        self, api_base: str, token: str, admin_roles: frozenset[int], *, timeout: float = 10.0
    ) -> None:
        self._api = api_base.rstrip("/")
        self._token = token
        self._admin_roles = admin_roles
        self._timeout = timeout

    async def __call__(self, member: str, guild: str) -> bool:
        if not (member.isdigit() and guild.isdigit()):
            return False
        headers = {"Authorization": f"Bot {self._token}"}
        async with httpx.AsyncClient(headers=headers, timeout=self._timeout) as client:
            found = await client.get(f"{self._api}/guilds/{guild}/members/{member}")
            if found.status_code == 404:  # not (or no longer) a member
                return False
            found.raise_for_status()
            roles = {int(r) for r in found.json().get("roles") or ()}
            if roles & self._admin_roles:
                return True
            server = await client.get(f"{self._api}/guilds/{guild}")
            server.raise_for_status()
            info = server.json()
        if str(info.get("owner_id")) == member:
            return True
        permissions = 0
        for role in info.get("roles") or ():
            if int(role["id"]) in roles or str(role["id"]) == guild:  # @everyone's id = guild's
                permissions |= int(role.get("permissions") or 0)
        return bool(permissions & (ADMINISTRATOR | MANAGE_GUILD))
