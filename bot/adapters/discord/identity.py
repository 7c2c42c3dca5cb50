"""Who is acting, and where, read from an interaction: the :class:`ChatContext` the core wants.

Only the adapter knows what "admin" means on Discord: the Manage Server permission (which
Administrator implies), or the role named by ``DISCORD_ADMIN_ROLE`` (an id or a name). The
core decides what an admin may do.
"""

from __future__ import annotations

from typing import Any

import discord

from bot.adapters.discord.errors import NOT_IN_DMS
from bot.core.errors import BadInput
from bot.core.models import ChatContext

__all__ = ["PLATFORM", "chat_context", "is_admin"]

PLATFORM = "discord"


def chat_context(interaction: discord.Interaction[Any], admin_role: str | None) -> ChatContext:
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
        is_admin=is_admin(interaction, admin_role),
        channel_name=getattr(channel, "name", None) or None,
        workspace_name=getattr(guild, "name", None) or None,
        command_prefix="/",
    )


def is_admin(interaction: discord.Interaction[Any], admin_role: str | None) -> bool:
    """Manage Server (from the permissions Discord computed for this interaction) or the role."""
    permissions = interaction.permissions
    if permissions.manage_guild or permissions.administrator:
        return True
    if not admin_role or not isinstance(interaction.user, discord.Member):
        return False
    wanted = admin_role.strip().lstrip("@")
    for role in interaction.user.roles:
        if str(role.id) == wanted or role.name.casefold() == wanted.casefold():
            return True
    return False
