"""The OAuth2 URL that adds the bot to a server: ``studybot invite-url``.

Scopes ``bot`` (the bot user that posts and edits questions) and ``applications.commands``
(the slash commands). Permissions are the least the bot uses: read and post in channels, embeds
and files (long snippet output), history (to edit its own posts at the reveal), and the
optional discussion threads. It never needs Manage Messages or Administrator.

Role rewards (``/rewards``) need one more, Manage Roles; only a server that uses them should
grant it, so it is asked for only with ``studybot invite-url --rewards``.
"""

from __future__ import annotations

import discord

__all__ = ["INVITE_PERMISSIONS", "INVITE_SCOPES", "REWARD_PERMISSIONS", "invite_url"]

INVITE_SCOPES = ("bot", "applications.commands")
INVITE_PERMISSIONS = discord.Permissions(
    view_channel=True,
    send_messages=True,
    embed_links=True,
    attach_files=True,
    read_message_history=True,
    create_public_threads=True,
    send_messages_in_threads=True,
)
#: With role rewards: the same, and Manage Roles to give and take the reward roles.
REWARD_PERMISSIONS = INVITE_PERMISSIONS | discord.Permissions(manage_roles=True)


def invite_url(application_id: int, *, guild_id: int | None = None, rewards: bool = False) -> str:
    """The invite link; ``guild_id`` preselects a server (e.g. ``DISCORD_DEV_GUILD``), and
    ``rewards`` asks for Manage Roles as well."""
    guild = discord.Object(guild_id) if guild_id is not None else discord.utils.MISSING
    permissions = REWARD_PERMISSIONS if rewards else INVITE_PERMISSIONS
    return discord.utils.oauth_url(
        application_id, permissions=permissions, scopes=INVITE_SCOPES, guild=guild
    )
