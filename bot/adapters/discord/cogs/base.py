"""What every studybot cog shares: the bot, the services, replying, autocomplete and a run.

The slash commands live in four cogs, one per part of the bot (:mod:`.questions`,
:mod:`.snippets`, :mod:`.scores`, :mod:`.setup`), each a :class:`StudyCog`. Handlers turn the
interaction into a :class:`ChatContext`, ask the :class:`Services`, and send back what they
say, rendered by :mod:`..render`. They never catch errors: they raise, and the tree's
``on_error`` (or the button/modal hook) hands the error to :func:`..errors.report_error`, the
one place that decides what the member is told.

A command's options are not written in the cogs: ``@command("quiz")`` and
``@subcommand(...)`` (:mod:`..options`) make them from the command table, and the handler reads
them by name from :class:`..options.Options`. The first paragraph of each docstring is the
description Discord shows.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.discord.errors import PENDING_KEY
from bot.adapters.discord.render import render
from bot.adapters.dispatch import dispatch, read_options, route_of
from bot.core.messages import Message
from bot.core.models import ChatContext

if TYPE_CHECKING:
    from bot.adapters.discord.client import StudyBot

__all__ = [
    "RAN_PUBLICLY",
    "RUNNING",
    "Interaction",
    "StudyCog",
    "answer",
    "one_tag",
    "required",
    "send_reply",
    "suggest",
]

Interaction = discord.Interaction[Any]
T = TypeVar("T")

MAX_CHOICES = 25  # Discord's limit for autocomplete suggestions
RUNNING = "⏳ Running your snippet…"
RAN_PUBLICLY = "✅ Ran your snippet; the output is posted in the channel."


async def send_reply(interaction: Interaction, message: Message) -> None:
    """Send ``message`` as the answer to ``interaction`` (a follow-up if already answered)."""
    rendered = render(message)
    kwargs = rendered.send_kwargs()
    if interaction.response.is_done():
        await interaction.followup.send(**kwargs, ephemeral=rendered.ephemeral, wait=True)
    else:
        await interaction.response.send_message(**kwargs, ephemeral=rendered.ephemeral)


async def answer(
    bot: StudyBot,
    interaction: Interaction,
    name: str,
    given: Mapping[str, object],
    sub: str | None = None,
) -> None:
    """Answer a command of the one front door (:mod:`bot.adapters.dispatch`) on Discord:
    the typed options go over as they are, and the outcome comes back as the message says
    (private or public), then a drafted question through the gateway. A slow route (an
    approval runs checks) is acknowledged privately first, within Discord's 3 s."""
    path, values = read_options(name, given, sub)  # a missing argument: refused at once
    if route_of(name).slow:
        await interaction.response.defer(ephemeral=True, thinking=True)
    ctx = bot.context(interaction)
    outcome = await dispatch(bot.services, ctx, path, values, bot.gateway)
    if outcome.message is not None:
        await send_reply(interaction, outcome.message)
    if outcome.draft is not None:
        await bot.services.posting.publish(outcome.draft, bot.gateway)


def suggest(options: Iterable[tuple[str, str]], current: str) -> list[app_commands.Choice[str]]:
    """Autocomplete: ``(name, value)`` pairs matching what is typed, prefix matches first."""
    typed = current.strip().casefold()
    starts: list[app_commands.Choice[str]] = []
    contains: list[app_commands.Choice[str]] = []
    for name, value in options:
        haystacks = (value.casefold(), name.casefold())
        choice = app_commands.Choice(name=name[:100], value=value[:100])
        if not typed or any(h.startswith(typed) for h in haystacks):
            starts.append(choice)
        elif any(typed in h for h in haystacks):
            contains.append(choice)
        if len(starts) >= MAX_CHOICES:
            break
    return (starts + contains)[:MAX_CHOICES]


def one_tag(tag: str | None) -> tuple[str, ...]:
    """A ``tag`` option as the services take tags: none, or the one typed."""
    return (tag.strip(),) if tag and tag.strip() else ()


def required(value: T | None) -> T:
    """A required option's (or one with a default's) value: discord.py always gives it."""
    assert value is not None
    return value


@cache
def _timezones() -> tuple[str, ...]:
    return tuple(sorted(zoneinfo.available_timezones()))


class StudyCog(commands.Cog):
    """A studybot cog: bound to the bot that holds the services and the settings."""

    def __init__(self, bot: StudyBot) -> None:
        self.bot = bot
        self.services = bot.services

    def context(self, interaction: Interaction) -> ChatContext:
        return self.bot.context(interaction)

    async def pack_choices(self, current: str) -> list[app_commands.Choice[str]]:
        """Pack slugs (with titles) for autocomplete, from memory: no query per keystroke."""
        titles = self.services.catalogue.titles()
        return suggest(((f"{slug} — {title}", slug) for slug, title in titles.items()), current)

    def timezone_choices(self, current: str) -> list[app_commands.Choice[str]]:
        """IANA zones for autocomplete; the bot's default zone and UTC come first."""
        first = dict.fromkeys((self.bot.settings.timezone, "UTC"))
        names = [*first, *(z for z in _timezones() if z not in first)]
        return suggest(((name, name) for name in names), current)

    async def run_code(
        self, interaction: Interaction, code: str, graph: tuple[str, ...] | None = None
    ) -> None:
        """Acknowledge privately at once, run, then post the result (or replace the note).

        A deferred response would not do: its flags are fixed by the defer, so a public
        "thinking" message would make refusals public, and a private one the output private.
        With ``graph`` (tensor names, or ``()`` for the last one) it is a ``/graph``.
        """
        ctx = self.context(interaction)
        self.services.runs.check()
        await interaction.response.send_message(
            RUNNING, ephemeral=True, allowed_mentions=discord.AllowedMentions.none()
        )
        interaction.extras[PENDING_KEY] = True
        if graph is None:
            result = await self.services.runs.run(ctx, code)
        else:
            result = await self.services.runs.graph(ctx, code, graph)
        rendered = render(result)
        if result.ephemeral:
            interaction.extras.pop(PENDING_KEY, None)
            await interaction.edit_original_response(**rendered.edit_kwargs())
            return
        await interaction.followup.send(**rendered.send_kwargs(), wait=True)
        interaction.extras.pop(PENDING_KEY, None)
        await interaction.edit_original_response(content=RAN_PUBLICLY)
