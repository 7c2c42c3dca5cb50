"""The one place where an interaction's failure becomes a reply.

Slash commands reach it through the tree's ``on_error``, buttons and modals through their own
hooks; all of them call :func:`report_error`. A :class:`StudyError` is something the member
should be told, so its text is the (private) reply. Anything else is a bug: it is logged with
what was being done, where and by whom, and the member gets the apology. The bot keeps running
either way.
"""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands

from bot.adapters.discord.render import CONTENT_LIMIT, truncate
from bot.core.errors import APOLOGY, StudyError
from bot.log import get_logger

__all__ = ["PENDING_KEY", "describe", "reply_private", "report_error"]

log = get_logger(__name__)

# Set in ``interaction.extras`` when the first response is a private "working on it" note that
# the real answer (or the error) should replace.
PENDING_KEY = "studybot_pending"

NOT_IN_DMS = "studybot works in servers: use its commands in a channel there."


async def report_error(
    interaction: discord.Interaction[Any], error: BaseException, what: str
) -> None:
    """Answer ``interaction`` privately for ``error``; log it unless a member caused it."""
    original = _unwrap(error)
    if isinstance(original, StudyError):
        text = str(original)
    elif isinstance(original, app_commands.NoPrivateMessage):
        text = NOT_IN_DMS
    else:
        log.error(
            "discord %s failed (guild %s, channel %s, user %s)",
            what,
            interaction.guild_id,
            interaction.channel_id,
            interaction.user.id,
            exc_info=original,
        )
        text = APOLOGY
    if interaction.type is discord.InteractionType.autocomplete:
        return  # there is nobody to tell: autocomplete cannot carry a message
    try:
        await reply_private(interaction, text)
    except discord.HTTPException as exc:
        log.warning("could not tell user %s why %s failed: %s", interaction.user.id, what, exc.text)


async def reply_private(interaction: discord.Interaction[Any], text: str) -> None:
    """A short ephemeral line, whatever state the interaction is in."""
    text = truncate(text, CONTENT_LIMIT)
    mentions = discord.AllowedMentions.none()
    if not interaction.response.is_done():
        await interaction.response.send_message(text, ephemeral=True, allowed_mentions=mentions)
    elif interaction.extras.pop(PENDING_KEY, False):
        await interaction.edit_original_response(
            content=text, embed=None, view=None, attachments=[], allowed_mentions=mentions
        )
    else:
        await interaction.followup.send(text, ephemeral=True, allowed_mentions=mentions)


def _unwrap(error: BaseException) -> BaseException:
    """The exception the handler raised, not discord.py's wrapper around it."""
    if isinstance(error, app_commands.CommandInvokeError):
        return error.original
    if isinstance(error, app_commands.TransformerError) and error.__cause__ is not None:
        return error.__cause__
    return error


def describe(interaction: discord.Interaction[Any]) -> str:
    """``/schedule add``, ``Run snippet``, or a component's custom_id: for log lines."""
    command = interaction.command
    if command is not None:
        prefix = "/" if isinstance(command, app_commands.Command) else ""
        return f"{prefix}{command.qualified_name}"
    data: dict[str, Any] = dict(interaction.data or {})
    return f"component {data.get('custom_id', '?')}"
