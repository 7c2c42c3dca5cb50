"""Discord's side of the one front door: an app command for every ordinary command.

For each command :mod:`bot.adapters.dispatch` answers that the table puts on Discord and no
cog defines itself, :func:`routed_commands` makes the app command: its options from the
table (:func:`~bot.adapters.discord.options.signature`), its description from the table's
help, and a callback that hands the typed options to the dispatch as they are
(:func:`~bot.adapters.dispatch.read_options`) and sends the outcome: the message private or
public as it says, then any drafted question through the gateway. A new ordinary command
therefore needs no edit here or in a cog.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable
from typing import Any, Protocol, cast

from discord import app_commands

from bot.adapters.commands import discord_options
from bot.adapters.discord.cogs.base import Interaction, answer
from bot.adapters.discord.options import description, signature
from bot.adapters.dispatch import ROUTES, routed
from bot.core.gateway import ChatGateway
from bot.core.models import ChatContext
from bot.services.bundle import Services

__all__ = ["routed_commands"]


class StudyBot(Protocol):
    """What a routed command uses of the client (named here, so this module does not import
    the client that imports it)."""

    services: Services
    gateway: ChatGateway

    def context(self, interaction: Interaction) -> ChatContext: ...


def _callback(bot: StudyBot, name: str) -> Callable[..., Coroutine[Any, Any, None]]:
    async def callback(interaction: Interaction, **given: object) -> None:
        await answer(cast(Any, bot), interaction, name, given)

    options = discord_options(name)
    whole = signature(options)
    # A plain function, not a cog's method: no ``self``.
    cast(Any, callback).__signature__ = whole.replace(
        parameters=[p for p in whole.parameters.values() if p.name != "self"]
    )
    callback.__name__ = name
    callback.__qualname__ = name
    described = {o.name: o.help for o in options if o.help}
    return cast(
        Callable[..., Coroutine[Any, Any, None]], app_commands.describe(**described)(callback)
    )


def routed_commands(
    bot: StudyBot, taken: Iterable[str]
) -> list[app_commands.Command[Any, ..., None]]:
    """The app commands of the dispatch's routes on Discord, except the names in ``taken``
    (the cogs' own: ``/quiz`` answers with the post itself)."""
    skip = set(taken)
    made: list[app_commands.Command[Any, ..., None]] = []
    for name in ROUTES:
        if name in skip or not routed(name, "discord"):
            continue
        made.append(
            app_commands.Command(
                name=name, description=description(name), callback=_callback(bot, name)
            )
        )
    return made
