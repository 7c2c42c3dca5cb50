"""The one front door: each ordinary command's one service call, shared by every platform.

Before this module a command was routed four times: the console's handler dict, Slack's
tables and its ``isinstance`` chain, and one Discord handler per command. Each front door
now keeps only its two platform jobs:

- **input**: the console and Slack sort typed words into the table's :class:`Values`
  (:func:`read_words`); Discord hands its typed options over as they are
  (:func:`read_options`), with no words in between, so a reason keeps its spacing;
- **delivery**: how its platform shows an :class:`Outcome`: the message as private or public
  as it says (:attr:`Message.ephemeral`), then a question draft, if any, published through
  the chat gateway.

What happens in between is here, once: :data:`ROUTES` maps a command's name to its handler,
which reads the values, makes the typed request and calls the service. A new ordinary command
is a table row (:mod:`bot.adapters.commands`), its service method and a ``@route`` here; no
adapter file changes (``tests/adapters/test_dispatch.py`` adds one in-test and asks it on the
console, Slack and Discord). Platform-only pieces stay in their adapters: modals, file
uploads, autocomplete, the console's ``/as`` and ``/clock``, code-block input, Discord's
``/quiz`` (the question is the interaction's own response).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from bot.adapters.commands import (
    LeaderboardRequest,
    Platform,
    PostRequest,
    QuizRequest,
    Values,
    command,
    parse,
    parse_subcommand,
    recap_request,
    round_of,
    round_request,
    settings_request,
    suggestions_of,
    suggestions_request,
    usage,
)
from bot.core.errors import BadInput, UsageError
from bot.core.gateway import ChatGateway
from bot.core.messages import Message
from bot.core.models import ChatContext
from bot.core.recap import parse_when
from bot.core.requests import (
    AccommodationClear,
    AccommodationRequest,
    AccommodationSet,
    AccommodationShow,
    ExamClear,
    ExamPrep,
    ExamRequest,
    ExamSet,
    ExamShow,
    RecapNow,
    RecapOff,
    RecapOn,
    RecapRequest,
    RecapShow,
    RoundSkip,
    RoundStart,
    RoundStop,
    SettingChange,
    SettingsHistory,
    SettingShow,
    SuggestionApprove,
    SuggestionReject,
    SuggestionsList,
)
from bot.core.schedule_spec import ScheduleError, parse_filters, parse_kinds
from bot.core.workspace_settings import Setting
from bot.services.bundle import Services
from bot.services.posting import PostDraft

__all__ = [
    "ROUTES",
    "Asked",
    "Outcome",
    "Route",
    "Typed",
    "dispatch",
    "read_options",
    "read_text",
    "read_words",
    "route",
    "route_of",
    "routed",
]


@dataclass(frozen=True, slots=True)
class Asked:
    """One command as a handler receives it: who asked where, which (sub)command, its
    arguments sorted by the table, and the services and gateway to answer with."""

    services: Services
    ctx: ChatContext
    path: tuple[str, ...]
    values: Values
    gateway: ChatGateway
    # The typed request a route's own words reader made (text platforms); None: read values.
    request: object | None = None

    def number(self, name: str) -> int | None:
        """A whole-number argument; a typed ``--option`` that is none is a usage error (the
        table checks positional numbers as it reads them, Discord checks all of them)."""
        typed = self.values.one(name)
        if typed is None:
            return None
        digits = typed.removeprefix("#")
        if not digits.isdigit() or len(digits) > 18:
            line = usage(cast(Platform, self.ctx.platform), *self.path)
            raise UsageError(line, reason=f"`{typed}` is not a number")
        return int(digits)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a command answers: a message (private or public as it says), and a question to
    publish in the channel afterwards (``/quiz``)."""

    message: Message | None = None
    draft: PostDraft | None = None


Handler = Callable[[Asked], Awaitable[Outcome]]
WordsReader = Callable[[Platform, Sequence[str]], object]


@dataclass(frozen=True, slots=True)
class Route:
    """A command's handler, and what a front door needs to know to call it.

    ``words``: for a command whose text grammar is more than the table's arguments (``recap
    on fri 18:00``, ``settings NAME VALUE...``), the reader that makes its typed request from
    the words on the console and Slack; Discord's options still go to the handler as values.
    ``slow``: the answer may take longer than a platform waits for a first response (an
    approval runs the question's checks), and it is private: Discord says "thinking" first.
    """

    handler: Handler
    words: WordsReader | None = None
    slow: bool = False


#: The ordinary commands, by name: each front door asks here before its own pieces.
ROUTES: dict[str, Route | Handler] = {}


def route(
    name: str, *, words: WordsReader | None = None, slow: bool = False
) -> Callable[[Handler], Handler]:
    """``@route("history")``: the handler of the table's command ``name`` on every platform."""
    command(name)  # a KeyError now names a route the table lacks

    def register(handler: Handler) -> Handler:
        ROUTES[name] = Route(handler, words, slow)
        return handler

    return register


def route_of(name: str) -> Route:
    """The route of ``name`` (a bare handler registered by hand is a plain route)."""
    found = ROUTES[name]
    return found if isinstance(found, Route) else Route(found)


def routed(name: str, platform: Platform) -> bool:
    """Whether ``name`` is answered here on ``platform`` (the table says where it exists)."""
    return name in ROUTES and command(name).on(platform)


@dataclass(frozen=True, slots=True)
class Typed:
    """A text command as read: its path, its values, and the request a route's own reader
    made (None when the values are all it needs)."""

    path: tuple[str, ...]
    values: Values
    request: object | None = None


def read_text(platform: Platform, name: str, words: list[str]) -> Typed:
    """The console's and Slack's words for ``name``, read by its route's own reader if it has
    one, else by the table; a bad word is the one :class:`UsageError`."""
    reader = route_of(name).words
    if reader is not None:
        return Typed((name,), Values({}), reader(platform, words))
    path, values = read_words(platform, name, words)
    return Typed(path, values)


def read_words(platform: Platform, name: str, words: list[str]) -> tuple[tuple[str, ...], Values]:
    """Typed words (console, Slack) into the (sub)command's path and its values, by the
    table; a bad word is the table's one :class:`UsageError`."""
    if command(name).subcommands:
        verb, values = parse_subcommand(platform, words, name)
        return ((name, verb) if verb else (name,)), values
    return (name,), parse(platform, words, name)


def read_options(
    name: str, given: Mapping[str, object], sub: str | None = None
) -> tuple[tuple[str, ...], Values]:
    """Discord's typed options into the same path and values, with no words in between: a
    text keeps its spacing, a number is its digits, a member or role its id, a flag is given
    only when true. A subcommand Discord carries flat (``/reports resolve:ITEM``) is picked by
    its arguments' presence, as the table declares them."""
    cmd = command(name)
    path: tuple[str, ...] = (name,)
    args = list(cmd.args_on("discord"))
    if sub is not None:  # a subcommand of a Discord group (``/round start``)
        found = cmd.subcommand(sub)
        assert found is not None, (name, sub)
        path, args = (name, sub), list(found.args_on("discord"))
    for flat in cmd.subcommands if sub is None else ():
        if not flat.discord_flat:
            continue
        own = flat.args_on("discord")
        picked = given.get(flat.discord_choice) == flat.name if flat.discord_choice else False
        if picked or (
            not flat.discord_choice and any(given.get(a.discord_name) is not None for a in own)
        ):
            path, args = (name, flat.name), list(own)
            break
    values: dict[str, tuple[str, ...]] = {}
    shared: dict[str, list[str]] = {}  # one option carrying several arguments: its words
    for arg in args:
        value = given.get(arg.discord_name)
        if value is None or value is False:
            continue
        if sum(a.discord_name == arg.discord_name for a in args) > 1 and isinstance(value, str):
            words = shared.setdefault(arg.discord_name, value.split())
            if words:
                values[arg.name] = (words.pop(0),)
        elif value is True:
            values[arg.name] = ("yes",)
        elif isinstance(value, str | int):
            values[arg.name] = (str(value),)
        else:  # a member, role or attachment: its id
            values[arg.name] = (str(getattr(value, "id", value)),)
    # Discord makes a flat subcommand's arguments optional options: the table's rule that
    # they are required is kept here, before any work (and before a slow route's "thinking").
    missing = [a for a in args if a.required and a.name not in values]
    if missing:
        raise UsageError(usage("discord", *path), reason=f"{missing[0].placeholder} is missing")
    return path, Values(values)


async def dispatch(
    services: Services,
    ctx: ChatContext,
    path: tuple[str, ...],
    values: Values,
    gateway: ChatGateway,
    request: object | None = None,
) -> Outcome:
    """Answer the ordinary command at ``path``: its one service call, through its route."""
    asked = Asked(services, ctx, path, values, gateway, request)
    return await route_of(path[0]).handler(asked)


# --- the routes ----------------------------------------------------------------------------


@route("quiz")
async def _quiz(asked: Asked) -> Outcome:
    """A question in this channel, from the filters typed; a bad filter is named with the
    option's own usage (``--difficulty easy|medium|hard``)."""
    request = QuizRequest.from_values(asked.values)
    try:
        parse_filters(request.difficulty, request.tags)  # the service checks them too
        parse_kinds(request.kinds)
    except ScheduleError as exc:
        shown = _QUIZ_OPTION_USAGE.get(exc.field, "quiz")
        raise UsageError(f"{asked.ctx.command_prefix}{shown}: {exc.reason}") from None
    draft = await asked.services.quiz.post_question(
        asked.ctx,
        pack=request.pack,
        difficulty=request.difficulty,
        tags=request.tags,
        kinds=request.kinds,
    )
    return Outcome(draft=draft)


_QUIZ_OPTION_USAGE = {
    "difficulty": "quiz --difficulty easy|medium|hard",
    "tags": "quiz --tag TAG",
    "kinds": "quiz --kinds KIND[,KIND]",
}


@route("leaderboard")
async def _leaderboard(asked: Asked) -> Outcome:
    request = LeaderboardRequest.from_values(asked.values)
    board = await asked.services.standings.leaderboard(asked.ctx, request.window, here=request.here)
    return Outcome(board)


@route("history")
async def _history(asked: Asked) -> Outcome:
    count = asked.number("count")
    return Outcome(await asked.services.history.recent(asked.ctx, 5 if count is None else count))


@route("question")
async def _question(asked: Asked) -> Outcome:
    post_id = asked.number("id")
    assert post_id is not None  # required: the table refused a line without it
    return Outcome(await asked.services.history.question(asked.ctx, post_id))


@route("report")
async def _report(asked: Asked) -> Outcome:
    reason = asked.values.one("reason") or ""
    return Outcome(await asked.services.reports.report(asked.ctx, asked.number("id"), reason))


@route("reports")
async def _reports(asked: Asked) -> Outcome:
    reports = asked.services.reports
    if asked.path[1:] == ("resolve",):
        return Outcome(await reports.resolve(asked.ctx, (asked.values.one("item") or "").strip()))
    if asked.path[1:] == ("dismiss",):
        return Outcome(await reports.dismiss(asked.ctx, (asked.values.one("item") or "").strip()))
    return Outcome(await reports.listing(asked.ctx))


def _post(asked: Asked) -> PostRequest:
    return PostRequest.from_values(asked.values)


@route("answer")
async def _answer(asked: Asked) -> Outcome:
    """``answer [#ID] ANSWER``: the newest open question, or the one numbered."""
    request, quiz = _post(asked), asked.services.quiz
    if request.id is None:
        return Outcome(await quiz.answer_latest(asked.ctx, request.choice))
    return Outcome(await quiz.answer(asked.ctx, request.id, request.choice))


@route("show")
async def _show(asked: Asked) -> Outcome:
    return Outcome(await asked.services.quiz.show_card(asked.ctx, _post(asked).id))


@route("hint")
async def _hint(asked: Asked) -> Outcome:
    request = _post(asked)
    index = request.hint - 1 if request.hint else 0
    return Outcome(await asked.services.quiz.hint(asked.ctx, request.id, index))


@route("reveal")
async def _reveal(asked: Asked) -> Outcome:
    """``reveal [#ID]``: what a post's reveal button does, typed (the newest open question
    unless its number is given). The post is edited in place through the gateway; the asker
    is told privately where the answer is."""
    quiz = asked.services.quiz
    edit = await quiz.reveal(asked.ctx, _post(asked).id)
    await quiz.apply_edit(edit, asked.gateway)
    return Outcome(Message.note(f"Question #{edit.post.id} is closed; its answer is on the post."))


@route("solutions")
async def _solutions(asked: Asked) -> Outcome:
    return Outcome(await asked.services.exercises.solutions(asked.ctx, _post(asked).id))


@route("accommodation")
async def _accommodation(asked: Asked) -> Outcome:
    """Accommodations: listed, set or cleared (admins); a member's own, privately."""
    verb = asked.path[1] if len(asked.path) > 1 else ""
    values = asked.values
    member = (values.one("member") or "").strip()
    request: AccommodationRequest
    if verb == "set":
        request = AccommodationSet(member, values.one("time"), values.flag("fewer-choices"))
    elif verb == "clear":
        request = AccommodationClear(member)
    else:
        request = AccommodationShow()
    return Outcome(await asked.services.accommodations.command(asked.ctx, request))


@route("exam")
async def _exam(asked: Asked) -> Outcome:
    """The exam date: shown (countdown, readiness), set or cleared (admins)."""
    verb = asked.path[1] if len(asked.path) > 1 else ""
    values = asked.values
    request: ExamRequest
    if verb == "set":
        request = ExamSet(values.one("date") or "", values.all("tag"), values.flag("channel"))
    elif verb == "clear":
        request = ExamClear(values.flag("channel"))
    elif verb == "prep":
        request = ExamPrep(values.one("switch") == "on")
    else:
        request = ExamShow()
    return Outcome(await asked.services.exams.command(asked.ctx, request))


@route("recap", words=recap_request)
async def _recap(asked: Asked) -> Outcome:
    """The weekly recap: shown, set (``on DAY HH:MM``), turned off, or posted now."""
    request = asked.request
    if request is None:
        verb = asked.path[1] if len(asked.path) > 1 else ""
        if verb == "on":
            when = [asked.values.one("day") or "", asked.values.one("at") or ""]
            request = RecapOn(*parse_when([w for w in when if w]))
        else:
            request = {"off": RecapOff(), "now": RecapNow()}.get(verb, RecapShow())
    assert isinstance(request, RecapRequest)
    return Outcome(await asked.services.recaps.command(asked.ctx, request))


@route("round", words=round_request)
async def _round(asked: Asked) -> Outcome:
    """A live round started (its announcement is public) or stopped (its board)."""
    request = asked.request
    if request is None:
        verb = asked.path[1] if len(asked.path) > 1 else ""
        request = round_of(cast(Platform, asked.ctx.platform), verb, asked.values)
    assert isinstance(request, RoundStart | RoundStop | RoundSkip)
    return Outcome(await asked.services.rounds.command(asked.ctx, request, asked.gateway))


@route("settings", words=settings_request)
async def _settings(asked: Asked) -> Outcome:
    """The workspace's settings, one setting, a change (admins), or their history."""
    request = asked.request
    if request is None:
        named, value = asked.values.one("name"), asked.values.one("value")
        if asked.path[1:] == ("history",):
            request = SettingsHistory()
        elif value is not None and named is None:
            raise BadInput("Pick the `setting` to change as well as its `value`.")
        elif named is None:
            request = SettingShow()
        elif value is None:
            request = SettingShow(Setting.named(named))
        else:
            request = SettingChange(Setting.named(named), value)
    assert isinstance(request, SettingShow | SettingChange | SettingsHistory)
    return Outcome((await asked.services.settings.command(asked.ctx, request)).private())


@route("suggestions", words=suggestions_request, slow=True)
async def _suggestions(asked: Asked) -> Outcome:
    """The suggestions waiting for an admin; approving one runs its checks (slow)."""
    request = asked.request
    if request is None:
        request = suggestions_of(asked.path[1] if len(asked.path) > 1 else "", asked.values)
    assert isinstance(request, SuggestionsList | SuggestionApprove | SuggestionReject)
    # The author is told by DM, through the gateway.
    message = await asked.services.suggestions.command(asked.ctx, request, asked.gateway)
    return Outcome(message.private())
