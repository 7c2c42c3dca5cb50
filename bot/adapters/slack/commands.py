"""``/study`` text -> a subcommand and its words, and code blocks out of Slack messages.

The one front door's commands (:mod:`bot.adapters.dispatch`: ``quiz``, ``leaderboard``,
``history``, ``question``, ``report``, ``reports``, ``answer``, ``show``, ``hint``, ``reveal``,
``solutions``) carry their path and the values the table sorted their words into, exactly as
the console reads them; the others the table parses (``recap``, ``settings``, ``review
remind``, ``round``, ...) carry their typed request.

Slack sends slash-command text with ``&``, ``<`` and ``>`` escaped, and (with the manifest's
``should_escape: true``) user mentions as ``<@U123|name>``; both are undone here so the core
sees what the member typed, and ``/study stats @alice`` names a member by id.

Parsing is pure and fast on purpose: a bad subcommand is answered in the ``ack()`` itself,
well inside Slack's 3-second limit.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.adapters.commands import (
    Platform,
    Request,
    SolveRequest,
    Values,
    leading_options,
    parse,
    parse_subcommand,
    remind_request,
    rewards_request,
)
from bot.adapters.dispatch import read_text, routed
from bot.adapters.text_commands import split_args
from bot.core.errors import UsageError
from bot.core.schedule_spec import ScheduleError
from bot.core.snippets import first_python_block

__all__ = [
    "StudyCommand",
    "first_code_block",
    "parse_study",
    "unescape",
]

_USER_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
_SPECIAL = re.compile(r"<(![a-z]+(?:\^[A-Z0-9]+)?)(?:\|[^>]*)?>")
_OTHER_MARKUP = re.compile(r"<(#[^>|]*)(?:\|([^>]*))?>|<(https?://[^>|]+)(?:\|[^>]*)?>")


@dataclass(frozen=True, slots=True)
class StudyCommand:
    """A parsed ``/study`` line: the subcommand, its words, and (for commands the table
    parses) the typed request made from them."""

    name: str
    args: tuple[str, ...] = ()
    request: Request | None = None
    # An ordinary command (bot.adapters.dispatch): its path and values, sorted by the table.
    path: tuple[str, ...] = ()
    values: Values | None = None
    typed: object | None = None  # the request its route's own words reader made, if any


def _problem(sentence: str) -> UsageError:
    """The text is not a ``/study`` command: the one usage error, saying what is wrong."""
    return UsageError(reason=sentence)


def unescape(text: str) -> str:
    """Slack's escaped command text back to what was typed (``<@U1|ann>`` -> ``U1``).

    Special mentions keep Slack's syntax without their label (``<!subteam^S1|@group>`` ->
    ``<!subteam^S1>``, ``<!here>``): a schedule's ``--mention`` must reach the core as
    something Slack can ping, and the core must still recognise mass mentions to refuse them.
    """
    text = _USER_MENTION.sub(r"\1", text)
    text = _SPECIAL.sub(r"<\1>", text)

    def _markup(match: re.Match[str]) -> str:
        if match[3]:
            return match[3]
        return match[2] or match[1]

    text = _OTHER_MARKUP.sub(_markup, text)
    return html.unescape(text) if "&" in text else text


def _graph(rest: str) -> StudyCommand:
    """`/study graph [--of a,b | --inputs] [code]`: the run modal, drawing those tensors."""
    values, body = leading_options("slack", rest, "graph")
    of = "*" if values.flag("inputs") else values.one("of") or ""
    return StudyCommand("graph", (of, body.strip()))


def _rewards(words: list[str]) -> StudyCommand:
    """`rewards list|preview`, `rewards add METRIC N @group`, `rewards remove ID`; the user
    group (a mention, ``<!subteam^S1>``, or its handle) is found by the adapter."""
    return StudyCommand("rewards", tuple(words), request=rewards_request("slack", words))


def _write(words: list[str]) -> StudyCommand:
    """`write [easy|medium|hard] [tag,tag]`: the modal opens with these preset."""
    values = parse("slack", words, "write")
    return StudyCommand("write", (values.one("difficulty") or "medium", values.one("tags") or ""))


_TYPED: dict[str, Callable[[Platform, list[str]], Request]] = {
    # Parsed from the command table into a typed request (bot.adapters.commands).
    "solve": SolveRequest.parse,
}

_SIMPLE = {
    "write": _write,
    "rewards": _rewards,
}


def parse_study(raw: str) -> StudyCommand:
    """Parse the text after ``/study``; raise :class:`UsageError` for anything unknown."""
    text = unescape(raw).strip()
    head, _, rest = text.partition(" ")
    name = head.lower()
    words = rest.split()
    if name in ("", "help"):
        return StudyCommand("help")
    if routed(name, "slack"):  # the one front door's commands: read as on the console
        typed = read_text("slack", name, words)
        return StudyCommand(
            name, tuple(words), path=typed.path, values=typed.values, typed=typed.request
        )
    if name in _TYPED:
        return StudyCommand(name, tuple(words), request=_TYPED[name]("slack", words))
    if name == "stats":  # the table's words and usage; a mention is already an id
        values = parse("slack", [w.lstrip("@") for w in words], "stats")
        if values.flag("group"):
            return StudyCommand(name, ("group",), path=("stats", "group"))
        member = values.one("member")
        return StudyCommand(name, () if member is None else (member,))
    if name == "review":
        verb, _ = parse_subcommand("slack", words, "review")  # the table's verbs and usage
        if verb == "remind":
            parse("slack", words[1:], "review", "remind")  # HH:MM|off is required here
            request = remind_request("slack", words[1:])
            return StudyCommand("review", tuple(words), request=request)
        return StudyCommand(name, tuple(w.lower() for w in words))
    if name in _SIMPLE:
        return _SIMPLE[name](words)
    if name == "run":
        # `/study run print(1)` opens the modal with that code already in it.
        return StudyCommand("run", (rest.strip(),) if rest.strip() else ())
    if name == "graph":
        return _graph(rest)
    if name == "pack":
        verb, values = parse_subcommand("slack", words, "pack")
        pack = values.one("name")
        return StudyCommand("pack", (verb,) if pack is None else (verb, pack))
    if name == "schedule":
        verb, _, verb_rest = rest.strip().partition(" ")
        if not verb:  # the table's every form; an unknown verb is the core's to judge
            parse_subcommand("slack", (), "schedule")
        try:
            args = split_args(verb_rest)
        except ScheduleError as exc:
            raise _problem(str(exc)) from None
        return StudyCommand("schedule", (verb, *args))
    raise _problem(f"`{head}` is not a /study command.")


def _rich_text_code(blocks: list[Any]) -> str | None:
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") != "rich_text":
            continue
        for element in block.get("elements") or ():
            if isinstance(element, dict) and element.get("type") == "rich_text_preformatted":
                parts = element.get("elements") or ()
                return "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
    return None


def first_code_block(message: dict[str, Any]) -> str | None:
    """The first fenced code block of a Slack message (its text, else its rich_text blocks).

    Message text is escaped like command text, so it is unescaped first; the block itself is
    found as on every platform (:func:`bot.core.snippets.first_python_block`).
    """
    code = first_python_block(html.unescape(str(message.get("text") or "")))
    if code is not None:
        return code
    rich = _rich_text_code(list(message.get("blocks") or ()))
    if rich is not None and rich.strip():
        return rich.strip("\n")
    return None
