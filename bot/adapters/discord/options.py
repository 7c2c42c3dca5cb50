"""Discord's app commands, made from the command table.

discord.py reads a command's options from its callback's signature. Written by hand, that
signature was a second declaration of every option, checked against the table only by a test.
Here the signature is made from :func:`bot.adapters.commands.discord_options` instead: each
option's type, choices, limits, default and description come from the table's one
declaration, and the cog's handler receives them as :class:`Options`, read by name.

A kind maps to a Discord type once (:func:`annotation`): a ``CHOICE`` is a string with
choices, ``INT`` and ``POST`` are integers (with the table's least and greatest values), a
``TEXT`` with a greatest length is a bounded string, ``FLAG`` a boolean, ``MEMBER``, ``ROLE``
and ``FILE`` Discord's member, role and attachment pickers; the rest are strings.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, Optional, TypeVar, cast

import discord
from discord import app_commands

from bot.adapters.commands import DiscordOption, Kind, discord_options
from bot.adapters.commands import command as table_command

__all__ = ["Options", "annotation", "command", "description", "signature", "subcommand"]

Interaction = discord.Interaction[Any]
CogT = TypeVar("CogT")
Handler = Callable[[CogT, Interaction, "Options"], Awaitable[None]]
AppCommand = app_commands.Command[Any, ..., None]

_PLAIN: dict[Kind, object] = {
    Kind.FLAG: bool,
    Kind.MEMBER: discord.Member,
    Kind.ROLE: discord.Role,
    Kind.FILE: discord.Attachment,
}


class Options:
    """The options a member gave one command, by their table names, read with their type.

    discord.py passes every declared option, with its default when left out, so reading a
    name the table does not declare for the command is a programming error (``KeyError``),
    found by the first test that runs the command.
    """

    __slots__ = ("_given",)

    def __init__(self, given: Mapping[str, object]) -> None:
        self._given = dict(given)

    @property
    def given(self) -> Mapping[str, object]:
        """Every option as discord.py gave it, by name: what the one front door reads."""
        return self._given

    def _get(self, name: str) -> object:
        return self._given[name]

    def text(self, name: str) -> str | None:
        value = self._get(name)
        assert value is None or isinstance(value, str), (name, value)
        return value

    def number(self, name: str) -> int | None:
        value = self._get(name)
        assert value is None or (isinstance(value, int) and not isinstance(value, bool))
        return value

    def flag(self, name: str) -> bool:
        value = self._get(name)
        assert isinstance(value, bool), (name, value)
        return value

    def role(self, name: str) -> discord.Role | None:
        value = self._get(name)
        assert value is None or isinstance(value, discord.Role), (name, value)
        return value

    def member(self, name: str) -> discord.Member | discord.User | None:
        value = self._get(name)
        assert value is None or isinstance(value, discord.Member | discord.User), (name, value)
        return value

    def file(self, name: str) -> discord.Attachment:
        value = self._get(name)
        assert isinstance(value, discord.Attachment), (name, value)
        return value


def annotation(option: DiscordOption) -> object:
    """The type discord.py turns into ``option``'s Discord type, choices and limits."""
    base: object
    if option.kind is Kind.CHOICE:
        base = cast(Any, Literal)[option.choices]
    elif option.kind in (Kind.INT, Kind.POST):
        bounded = option.low is not None or option.high is not None
        base = cast(Any, app_commands.Range)[int, option.low, option.high] if bounded else int
    elif option.kind is Kind.TEXT and option.high is not None:
        base = cast(Any, app_commands.Range)[str, 1, option.high]
    else:
        base = _PLAIN.get(option.kind, str)
    if option.required or option.default is not None or option.kind is Kind.FLAG:
        return base
    return cast(Any, Optional)[base]


#: Discord's longest command description.
MAX_DESCRIPTION = 100


def description(*path: str) -> str:
    """A command's Discord description: the table's help, as a sentence, within Discord's 100
    characters, so every platform describes a command in the same words."""
    help_text = table_command(path[0]).help if len(path) == 1 else ""
    if len(path) > 1:
        sub = table_command(path[0]).subcommand(path[1])
        help_text = sub.help if sub is not None else ""
    text = help_text[:1].upper() + help_text[1:]
    if len(text) > MAX_DESCRIPTION:
        text = text[: MAX_DESCRIPTION - 1].rsplit(" ", 1)[0] + "…"
    return text


def _default(option: DiscordOption) -> object:
    if option.required:
        return inspect.Parameter.empty
    if option.kind is Kind.FLAG:
        return bool(option.default)
    return option.default


def signature(options: Sequence[DiscordOption]) -> inspect.Signature:
    """The callback signature discord.py reads the options from: ``self``, the interaction,
    then one parameter per option."""
    keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD
    head = [inspect.Parameter("self", keyword), inspect.Parameter("interaction", keyword)]
    params = [
        inspect.Parameter(o.name, keyword, default=_default(o), annotation=annotation(o))
        for o in options
    ]
    return inspect.Signature([*head, *params])


def _callback(handler: Handler[CogT], path: tuple[str, ...]) -> Callable[..., Awaitable[None]]:
    """``handler`` as discord.py wants it: the table's options as its parameters, each
    described by the table's help (so is the command: :func:`description`)."""

    async def callback(self: CogT, interaction: Interaction, **given: object) -> None:
        await handler(self, interaction, Options(given))

    options = discord_options(*path)
    callback.__name__ = handler.__name__
    callback.__qualname__ = handler.__qualname__  # discord.py: a method, bound to the cog
    callback.__doc__ = handler.__doc__
    callback.__module__ = handler.__module__
    cast(Any, callback).__signature__ = signature(options)
    described = {o.name: o.help for o in options if o.help}
    return cast(Callable[..., Awaitable[None]], app_commands.describe(**described)(callback))


def _declared(
    maker: Callable[[Any], Any], path: tuple[str, ...]
) -> Callable[[Handler[CogT]], AppCommand]:
    def make(handler: Handler[CogT]) -> AppCommand:
        return cast(AppCommand, maker(_callback(handler, path)))

    return make


def command(*path: str) -> Callable[[Handler[CogT]], AppCommand]:
    """``@command("quiz")``: a top-level app command whose options are the table's."""
    return _declared(app_commands.command(name=path[-1], description=description(*path)), path)


def subcommand(group: app_commands.Group, *path: str) -> Callable[[Handler[CogT]], AppCommand]:
    """``@subcommand(rounds, "round", "start")``: a command of ``group``, options from the table."""
    return _declared(group.command(name=path[-1], description=description(*path)), path)
