"""Who is acting, and where, read from an interaction: the :class:`ChatContext` the core wants.

Only the adapter knows what "admin" means on Discord: the Manage Server permission (which
Administrator implies), or one of the roles whose ids ``DISCORD_ADMIN_ROLE`` lists. Never a
role's name: anyone who may create roles can make one called "Study Admins" (the red team
did). The core decides what an admin may do.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import discord

from bot.adapters.discord.errors import NOT_IN_DMS
from bot.core.errors import BadInput
from bot.core.models import ChatContext

__all__ = [
    "COPY_ROLE_ID",
    "PLATFORM",
    "AdminRoleNames",
    "admin_role_ids",
    "chat_context",
    "is_admin",
    "name_problem",
]

PLATFORM = "discord"
COPY_ROLE_ID = (
    "Developer Mode on, then Server Settings → Roles → right-click the role → Copy Role ID"
)
_ROLE_ID = re.compile(r"^(?:<@&)?([0-9]{15,21})>?$")


class AdminRoleNames(ValueError):
    """``DISCORD_ADMIN_ROLE`` holds something that is not a role id (a name, presumably)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        super().__init__(", ".join(names))
        self.names = names


def admin_role_ids(setting: str | None) -> frozenset[int]:
    """The role ids in ``DISCORD_ADMIN_ROLE`` (comma-separated; ``<@&id>`` also works).

    Raises :class:`AdminRoleNames` naming every part that is not an id.
    """
    if not setting or not setting.strip():
        return frozenset()
    parts = [p.strip() for p in setting.split(",") if p.strip()]
    names = tuple(p for p in parts if not _ROLE_ID.match(p))
    if names:
        raise AdminRoleNames(names)
    return frozenset(int(m[1]) for p in parts if (m := _ROLE_ID.match(p)))


def name_problem(names: Iterable[str], roles: Iterable[tuple[int, str, str]]) -> str:
    """Why the setting is refused, naming the ids of the roles (``(id, name, server)``) that
    carry each name, so the operator can copy the right one."""
    roles = list(roles)
    found = []
    for name in names:
        wanted = name.removeprefix("@").casefold()
        matches = [f"{i} in {server}" for i, n, server in roles if n.casefold() == wanted]
        found.append(
            f"{name!r} is the name of role {', '.join(matches)}"
            if matches
            else f"{name!r} is no role's id (and no role has that name)"
        )
    return (
        "DISCORD_ADMIN_ROLE takes role ids, never names (anyone who can create roles could "
        f"make one with that name): {'; '.join(found)}. Set DISCORD_ADMIN_ROLE to the id "
        f"({COPY_ROLE_ID})."
    )


def chat_context(interaction: discord.Interaction[Any], admin_roles: frozenset[int]) -> ChatContext:
    """The core's identity for this interaction; studybot lives in servers, not DMs."""
    if interaction.guild_id is None or interaction.channel_id is None:
        raise BadInput(NOT_IN_DMS)
    user = interaction.user
    channel = interaction.channel
    guild = interaction.guild
    return ChatContext(
        platform=PLATFORM,
        workspace=str(interaction.guild_id),
        channel=str(interaction.channel_id),
        member=str(user.id),
        member_name=user.display_name,
        is_admin=is_admin(interaction, admin_roles),
        channel_name=getattr(channel, "name", None) or None,
        workspace_name=getattr(guild, "name", None) or None,
        command_prefix="/",
    )


def is_admin(interaction: discord.Interaction[Any], admin_roles: frozenset[int]) -> bool:
    """Manage Server (from the permissions Discord computed for this interaction) or one of
    the admin roles, by id."""
    permissions = interaction.permissions
    if permissions.manage_guild or permissions.administrator:
        return True
    if not admin_roles or not isinstance(interaction.user, discord.Member):
        return False
    return any(role.id in admin_roles for role in interaction.user.roles)
