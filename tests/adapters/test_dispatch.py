"""The one front door: a new ordinary command is a table row, a route and its service call,
and it then answers on the console, Slack and Discord with no adapter file touched.

The command is made up here, in the test (``/echo WORDS``, private, and ``/shout WORDS``,
public): the table gains its rows and the dispatch its routes, and each platform is asked
through its real front door (the console's line reader; slack-bolt over loopback to the fake;
discord.py over loopback to the fake): tests/adapters/slack/test_new_command.py and
tests/adapters/discord/test_new_command.py ask them there.
"""

from __future__ import annotations

import io
import json

import pytest

from bot.adapters import commands as table
from bot.adapters.commands import Arg, Command, Kind, help_lines, usage
from bot.adapters.console import ConsoleAdapter
from bot.adapters.dispatch import ROUTES, Asked, Outcome, read_options, read_words
from bot.core.clock import SimulatedClock
from bot.core.messages import Message, Section
from bot.services.bundle import Services

pytestmark = pytest.mark.timeout(60)

ECHO = Command(
    "echo",
    "say your words back, only to you",
    (Arg("words", Kind.TEXT, "What to say back", required=True, example="hi there", high=200),),
)
SHOUT = Command(
    "shout",
    "say your words to the whole channel",
    (
        Arg("words", Kind.TEXT, "What to say", required=True, example="hi", high=200),
        Arg("times", Kind.INT, "How many times (default 1)", option=True, low=1, high=3),
    ),
)


async def _echo(asked: Asked) -> Outcome:
    words = asked.values.one("words") or ""
    text = f"{asked.ctx.member_name or asked.ctx.member} said: {words}"
    return Outcome(Message(sections=(Section(body=text),), ephemeral=True))


async def _shout(asked: Asked) -> Outcome:
    times = asked.number("times") or 1
    text = " / ".join([(asked.values.one("words") or "").upper()] * times)
    return Outcome(Message(sections=(Section(body=text),)))


@pytest.fixture
def new_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(table, "COMMANDS", (*table.COMMANDS, ECHO, SHOUT))
    monkeypatch.setitem(ROUTES, "echo", _echo)
    monkeypatch.setitem(ROUTES, "shout", _shout)


def test_the_table_gives_the_new_commands_usage_and_help_on_every_platform(
    new_commands: None,
) -> None:
    assert usage("console", "shout") == "/shout WORDS [--times TIMES]"
    assert usage("slack", "echo") == "/study echo WORDS"
    assert usage("discord", "shout") == "/shout words:WORDS [times:TIMES]"
    assert any(line.usage == "/study echo WORDS" for line in help_lines("slack"))
    path, values = read_words("console", "shout", ["--times", "2", "well", "done"])
    assert (path, values.one("words"), values.one("times")) == (("shout",), "well done", "2")
    # Discord's typed options are taken as they are: the spacing of a text is kept.
    path, values = read_options("echo", {"words": "two  spaces"})
    assert (path, values.one("words")) == (("echo",), "two  spaces")


async def test_the_console_answers_a_new_command_with_no_adapter_edit(
    new_commands: None, service: Services, clock: SimulatedClock
) -> None:
    out = io.StringIO()
    console = ConsoleAdapter(service, clock, out=out, json_mode=True)
    for line in ("/echo hello there", "/shout --times 2 go", "/shout --times two go", "/echo"):
        await console.handle_line(line)
    printed = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [(p["kind"], p["ephemeral"], p["text"]) for p in printed] == [
        ("reply", True, "me said: hello there"),
        ("reply", False, "GO / GO"),
        ("error", True, "usage: /shout WORDS [--times TIMES]: `two` is not a number"),
        ("error", True, "usage: /echo WORDS: WORDS is missing"),
    ][: len(printed)]
    assert len(printed) == 4
