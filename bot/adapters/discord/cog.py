"""The slash commands, the "Run snippet" context menu, and what a button click does.

Each handler turns the interaction into a :class:`ChatContext`, asks the
:class:`Services`, and sends back what it says, rendered by :mod:`.render`. Handlers never
catch errors: they raise, and the tree's ``on_error`` (or the button/modal hook) hands the error
to :func:`.errors.report_error`, the one place that decides what the member is told.

A command's options are not written here: ``@command("quiz")`` and ``@subcommand(...)``
(:mod:`.options`) make them from the command table, and the handler reads them by name from
:class:`.options.Options`. The first paragraph of each docstring is the description Discord
shows.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Awaitable, Iterable
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.commands import (
    SolveRequest,
    help_rows,
    recap_request,
    remind_request,
    settings_request,
    suggestions_request,
)
from bot.adapters.discord.components import QuestionModal, SnippetModal
from bot.adapters.discord.errors import PENDING_KEY, report_error
from bot.adapters.discord.options import Options, command, subcommand
from bot.adapters.discord.render import render
from bot.core import cards
from bot.core.errors import BadInput, NotFound, Unavailable
from bot.core.messages import Action, Message, parse_action
from bot.core.models import ChatContext
from bot.core.requests import (
    RewardAdd,
    RewardRemove,
    RewardsList,
    RewardsPreview,
    RewardsRequest,
    RoundStart,
    RoundStop,
)
from bot.core.rewards import Metric
from bot.core.schedule_spec import ScheduleForm
from bot.core.snippets import first_python_block
from bot.log import get_logger
from bot.questions.written import from_fields as written_from_fields

if TYPE_CHECKING:
    from bot.adapters.discord.client import StudyBot
    from bot.services.schedule_book import ScheduleReply

__all__ = ["StudyCog", "send_reply", "suggest"]

log = get_logger(__name__)

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


#: ``/schedule add``'s options that are text, each a field of the form.
_SCHEDULE_TEXT = (
    "time",
    "timezone",
    "days",
    "pack",
    "difficulty",
    "tags",
    "window",
    "cron",
    "kinds",
    "round",
)


def _one_tag(tag: str | None) -> tuple[str, ...]:
    """A ``tag`` option as the services take tags: none, or the one typed."""
    return (tag.strip(),) if tag and tag.strip() else ()


def _required(value: T | None) -> T:
    """A required option's (or one with a default's) value: discord.py always gives it."""
    assert value is not None
    return value


@cache
def _timezones() -> tuple[str, ...]:
    return tuple(sorted(zoneinfo.available_timezones()))


class StudyCog(commands.Cog, name="studybot"):
    """Every studybot command, bound to the bot that holds the service and the settings."""

    def __init__(self, bot: StudyBot) -> None:
        self.bot = bot
        self.services = bot.services
        self._run_menu = app_commands.ContextMenu(name="Run snippet", callback=self.run_message)
        self._graph_menu = app_commands.ContextMenu(
            name="Show autograd graph", callback=self.graph_message
        )

    async def cog_load(self) -> None:
        # discord.py cannot declare context menus inside a class; they are added by hand.
        self.bot.tree.add_command(self._run_menu)
        self.bot.tree.add_command(self._graph_menu)

    async def cog_unload(self) -> None:
        for menu in (self._run_menu, self._graph_menu):
            self.bot.tree.remove_command(menu.name, type=menu.type)

    def context(self, interaction: Interaction) -> ChatContext:
        return self.bot.context(interaction)

    # --- questions ---------------------------------------------------------------------------

    @command("quiz")
    async def quiz(self, interaction: Interaction, options: Options) -> None:
        """Post a question in this channel: answers are private, the reveal is public.

        The question is the interaction's own (public) response; its id is stored so the reveal
        can edit it in place, long after the interaction token has expired.
        """
        ctx = self.context(interaction)
        kind = options.text("kind")
        draft = await self.services.quiz.post_question(
            ctx,
            pack=options.text("pack"),
            difficulty=options.text("difficulty"),
            tags=_one_tag(options.text("tag")),
            kinds=(kind,) if kind else (),
        )
        rendered = render(draft.message)
        response = await interaction.response.send_message(**rendered.send_kwargs())
        message_id = response.message_id
        if message_id is None:  # Discord always returns it with with_response; belt and braces
            message_id = (await interaction.original_response()).id
        await self.services.posting.attach_message(draft.post.id, str(message_id))
        await self.bot.open_thread(int(draft.channel), message_id, draft.message)

    @quiz.autocomplete("pack")
    async def _quiz_pack(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.pack_choices(current)

    async def pack_choices(self, current: str) -> list[app_commands.Choice[str]]:
        """Pack slugs (with titles) for autocomplete, from memory: no query per keystroke."""
        titles = self.services.catalogue.titles()
        return suggest(((f"{slug} — {title}", slug) for slug, title in titles.items()), current)

    def timezone_choices(self, current: str) -> list[app_commands.Choice[str]]:
        """IANA zones for autocomplete; the bot's default zone and UTC come first."""
        first = dict.fromkeys((self.bot.settings.timezone, "UTC"))
        names = [*first, *(z for z in _timezones() if z not in first)]
        return suggest(((name, name) for name in names), current)

    # --- live rounds -------------------------------------------------------------------------

    rounds = app_commands.Group(
        name="round", description="A live round: timed questions in a row, then a board"
    )

    @subcommand(rounds, "round", "start")
    async def round_start(self, interaction: Interaction, options: Options) -> None:
        """Start a live round here: questions one at a time, faster right answers score more.

        The reply is the public announcement; the questions follow as channel posts from the
        one timer loop (the service wakes it), so none of them lives on this interaction's
        15-minute token.
        """
        request = RoundStart(
            pack=options.text("pack"),
            questions=options.number("questions"),
            seconds=options.number("seconds"),
            difficulty=options.text("difficulty"),
            tags=_one_tag(options.text("tag")),
        )
        await send_reply(
            interaction, await self.services.rounds.command(self.context(interaction), request)
        )

    @round_start.autocomplete("pack")
    async def _round_pack(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.pack_choices(current)

    @subcommand(rounds, "round", "stop")
    async def round_stop(self, interaction: Interaction, options: Options) -> None:
        """End the round here early, with the board so far (whoever started it, or an admin).

        The board is public, like the one at a round's end; a refusal goes through the tree's
        error hook, privately.
        """
        board = await self.services.rounds.command(self.context(interaction), RoundStop())
        await send_reply(interaction, board)

    # --- role rewards ------------------------------------------------------------------------

    rewards = app_commands.Group(
        name="rewards", description="Roles given for points, a streak or reviews"
    )

    async def _rewards(self, interaction: Interaction, request: RewardsRequest) -> None:
        ctx = self.context(interaction)
        message = await self.services.rewards.command(ctx, request, self.bot.gateway)
        await send_reply(
            interaction, message if isinstance(request, RewardsList) else message.private()
        )

    @subcommand(rewards, "rewards", "list")
    async def rewards_list(self, interaction: Interaction, options: Options) -> None:
        """The role rewards set here."""
        await self._rewards(interaction, RewardsList())

    @subcommand(rewards, "rewards", "add")
    async def rewards_add(self, interaction: Interaction, options: Options) -> None:
        """Give a role to members who reach a threshold; it is taken back below it (admins)."""
        metric = Metric(_required(options.text("metric")))
        threshold, role = _required(options.number("threshold")), _required(options.role("role"))
        request = RewardAdd(metric, threshold, str(role.id), f"@{role.name}")
        await self._rewards(interaction, request)

    @subcommand(rewards, "rewards", "remove")
    async def rewards_remove(self, interaction: Interaction, options: Options) -> None:
        """Remove a reward; its role is taken back from those who hold it (admins)."""
        await self._rewards(interaction, RewardRemove(_required(options.number("id"))))

    @subcommand(rewards, "rewards", "preview")
    async def rewards_preview(self, interaction: Interaction, options: Options) -> None:
        """Who would gain or lose which role now; changes nothing (admins)."""
        await self._rewards(interaction, RewardsPreview())

    # --- scores ------------------------------------------------------------------------------

    @command("leaderboard")
    async def leaderboard(self, interaction: Interaction, options: Options) -> None:
        """Who is ahead this week, this month or of all time, on the server or in this channel,
        or who has the longest streak going (``streaks``)."""
        board = await self.services.standings.leaderboard(
            self.context(interaction),
            _required(options.text("window")),
            here=options.flag("here"),
        )
        await send_reply(interaction, board)

    @command("stats")
    async def stats(self, interaction: Interaction, options: Options) -> None:
        """Points, accuracy and streak for you or another member.

        The reply is private, as on Slack: asking about someone should not broadcast their
        accuracy. The core looks members up by platform id; its "no member called `<id>`"
        would show a raw snowflake, so the miss is reworded with the member's name here.
        """
        ctx = self.context(interaction)
        member = options.member("member")
        who = None if member is None or str(member.id) == ctx.member else str(member.id)
        try:
            message = await self.services.standings.stats(ctx, who)
        except NotFound:
            if member is None or who is None:
                raise NotFound("You have not answered any questions here yet.") from None
            raise NotFound(
                f"{member.display_name} has not answered any questions here yet."
            ) from None
        await send_reply(interaction, message.private())

    # --- past questions ----------------------------------------------------------------------

    @command("history")
    async def history(self, interaction: Interaction, options: Options) -> None:
        """This channel's last questions, with how the group did (only you see it)."""
        count = _required(options.number("count"))
        message = await self.services.history.recent(self.context(interaction), count)
        await send_reply(interaction, message.private())

    @command("question")
    async def question(self, interaction: Interaction, options: Options) -> None:
        """A past question, with its answer and solution once it closed (only you see it)."""
        post_id = _required(options.number("id"))
        message = await self.services.history.question(self.context(interaction), post_id)
        await send_reply(interaction, message.private())

    @command("report")
    async def report(self, interaction: Interaction, options: Options) -> None:
        """Tell the admins a question is wrong (only they see reports)."""
        ctx, reason = self.context(interaction), _required(options.text("reason"))
        message = await self.services.reports.report(ctx, options.number("id"), reason)
        await send_reply(interaction, message.private())

    @command("reports")
    async def reports(self, interaction: Interaction, options: Options) -> None:
        """The open reports of wrong questions (admins)."""
        ctx, resolve = self.context(interaction), options.text("resolve")
        if resolve:
            message = await self.services.reports.resolve(ctx, resolve.strip())
        else:
            message = await self.services.reports.listing(ctx)
        await send_reply(interaction, message.private())

    @command("suggestions")
    async def suggestions(self, interaction: Interaction, options: Options) -> None:
        """The questions members wrote, waiting for an admin to approve or reject (admins)."""
        action, id, reason = options.text("action"), options.number("id"), options.text("reason")
        args: list[str] = [] if action in (None, "list") else [action]
        if id is not None:
            args.append(str(id))
        if reason:
            args.extend(reason.split())
        request = suggestions_request("discord", args)
        ctx = self.context(interaction)
        await interaction.response.defer(ephemeral=True, thinking=True)  # approving runs checks
        message = await self.services.suggestions.command(ctx, request, self.bot.gateway)
        await send_reply(interaction, message.private())

    @command("recap")
    async def recap(self, interaction: Interaction, options: Options) -> None:
        """This channel's weekly recap: the board, the streaks, the most missed question."""
        action, when = options.text("action"), options.text("when")
        args: list[str] = [] if action in (None, "show") else [action]
        if when:
            args.extend(when.split())
        request = recap_request("discord", args)
        message = await self.services.recaps.command(self.context(interaction), request)
        await send_reply(interaction, message)

    # --- settings ----------------------------------------------------------------------------

    @command("settings")
    async def settings(self, interaction: Interaction, options: Options) -> None:
        """This server's timezone, quiz window and points; admins change them."""
        setting, value = options.text("setting"), options.text("value")
        args: list[str] = [setting] if setting else []
        if value is not None:
            if not args:
                raise BadInput("Pick the `setting` to change as well as its `value`.")
            args.append(value)
        ctx = self.context(interaction)
        request = settings_request("discord", args)
        await send_reply(
            interaction, (await self.services.settings.command(ctx, request)).private()
        )

    @settings.autocomplete("value")
    async def _settings_value(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        if getattr(interaction.namespace, "setting", None) == "timezone":
            return self.timezone_choices(current)
        return []

    # --- spaced repetition -------------------------------------------------------------------

    @command("review")
    async def review(self, interaction: Interaction, options: Options) -> None:
        """Your due cards, one at a time (spaced repetition); only you see them."""
        ctx = self.context(interaction)
        remind, timezone, action = (
            options.text("remind"),
            options.text("timezone"),
            options.text("action"),
        )
        if action == "export":  # the deck, attached to a private reply
            await send_reply(interaction, await self.services.review.export(ctx))
            return
        if remind is not None:
            request = remind_request("discord", [remind, *([timezone] if timezone else [])])
            reply = await self.services.reminders.command(ctx, request)
            await send_reply(interaction, reply.private())
            return
        turn = await self.services.review.next(ctx)
        await send_reply(interaction, turn.as_message())

    @review.autocomplete("timezone")
    async def _review_timezone(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return self.timezone_choices(current)

    # --- packs and help ----------------------------------------------------------------------

    pack = app_commands.Group(name="pack", description="Question packs")

    @subcommand(pack, "pack", "list")
    async def pack_list(self, interaction: Interaction, options: Options) -> None:
        """The question packs, and which are on in this channel."""
        await send_reply(interaction, await self.services.packs.listing(self.context(interaction)))

    @subcommand(pack, "pack", "enable")
    async def pack_enable(self, interaction: Interaction, options: Options) -> None:
        """Turn a question pack back on in this channel (admins)."""
        name = _required(options.text("name"))
        reply = await self.services.packs.enable(self.context(interaction), name)
        await send_reply(interaction, reply.private())

    @subcommand(pack, "pack", "disable")
    async def pack_disable(self, interaction: Interaction, options: Options) -> None:
        """Turn a question pack off in this channel only (admins)."""
        name = _required(options.text("name"))
        reply = await self.services.packs.disable(self.context(interaction), name)
        await send_reply(interaction, reply.private())

    @pack_enable.autocomplete("name")
    async def _pack_enable_name(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.channel_pack_choices(interaction, current, want_on=False)

    @pack_disable.autocomplete("name")
    async def _pack_disable_name(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.channel_pack_choices(interaction, current, want_on=True)

    async def channel_pack_choices(
        self, interaction: Interaction, current: str, *, want_on: bool
    ) -> list[app_commands.Choice[str]]:
        """Pack slugs for enable/disable: the ones that would change come first."""
        try:
            states = await self.services.packs.states(self.context(interaction))
        except Exception:
            log.exception("pack autocomplete failed")
            return []
        ordered = sorted(states, key=lambda state: state[1] != want_on)
        return suggest(
            ((f"{s.slug} — {s.title} ({'on' if on else 'off'} here)", s.slug) for s, on in ordered),
            current,
        )

    @subcommand(pack, "pack", "upload")
    async def pack_upload(self, interaction: Interaction, options: Options) -> None:
        """Check a question pack file with the linter; an admin's valid pack is installed.

        Name and size are checked from the attachment's metadata before it is downloaded;
        the reply is deferred (privately) because a big pack takes seconds to check.
        """
        ctx, file, force = self.context(interaction), options.file("file"), options.flag("force")
        self.services.packs.check_file(file.filename, file.size)
        await interaction.response.defer(ephemeral=True, thinking=True)
        try:
            raw = await file.read()
        except discord.HTTPException as exc:
            log.warning("cannot download attachment %s: %s", file.id, exc)
            raise Unavailable(
                "I couldn't download that file from Discord; please try again."
            ) from None
        reply = await self.services.packs.check_upload(ctx, file.filename, raw, force=force)
        await send_reply(interaction, reply.private())

    @command("help")
    async def help(self, interaction: Interaction, options: Options) -> None:
        """What studybot can do, and how answering works."""
        rows = help_rows("discord")
        await send_reply(
            interaction, cards.help_message(rows, admin=self.context(interaction).is_admin)
        )

    # --- schedules ---------------------------------------------------------------------------

    schedule = app_commands.Group(
        name="schedule", description="Daily questions in this channel (admins change them)"
    )

    @subcommand(schedule, "schedule", "add")
    async def schedule_add(self, interaction: Interaction, options: Options) -> None:
        """Add a scheduled question to this channel (admins).

        The typed fields go to the core as a form; it checks them exactly as it checks the
        text grammar's words on the console and Slack.
        """
        mention = options.role("mention")
        if mention is not None and mention.is_default():
            raise BadInput("@everyone would ping the whole server; pick a role to notify.")
        fields = {name: options.text(name) for name in _SCHEDULE_TEXT}
        fields["mention"] = None if mention is None else mention.mention
        form = ScheduleForm.from_fields(fields)
        ctx = self.context(interaction)
        await self._schedule(interaction, self.services.schedules.add(ctx, form))

    @schedule_add.autocomplete("timezone")
    async def _schedule_timezone(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return self.timezone_choices(current)

    @schedule_add.autocomplete("pack")
    async def _schedule_pack(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.pack_choices(current)

    @subcommand(schedule, "schedule", "list")
    async def schedule_list(self, interaction: Interaction, options: Options) -> None:
        """This channel's schedules and when each posts next."""
        ctx = self.context(interaction)
        await self._schedule(interaction, self.services.schedules.list(ctx))

    @subcommand(schedule, "schedule", "preview")
    async def schedule_preview(self, interaction: Interaction, options: Options) -> None:
        """When a schedule posts next, in its own timezone."""
        ctx, schedule_id = self.context(interaction), _required(options.number("id"))
        count = _required(options.number("count"))
        await self._schedule(interaction, self.services.schedules.preview(ctx, schedule_id, count))

    @subcommand(schedule, "schedule", "remove")
    async def schedule_remove(self, interaction: Interaction, options: Options) -> None:
        """Remove a schedule (admins)."""
        ctx, schedule_id = self.context(interaction), _required(options.number("id"))
        await self._schedule(interaction, self.services.schedules.remove(ctx, schedule_id))

    @subcommand(schedule, "schedule", "pause")
    async def schedule_pause(self, interaction: Interaction, options: Options) -> None:
        """Pause a schedule until it is resumed (admins)."""
        ctx, schedule_id = self.context(interaction), _required(options.number("id"))
        await self._schedule(interaction, self.services.schedules.pause(ctx, schedule_id))

    @subcommand(schedule, "schedule", "resume")
    async def schedule_resume(self, interaction: Interaction, options: Options) -> None:
        """Resume a paused schedule (admins)."""
        ctx, schedule_id = self.context(interaction), _required(options.number("id"))
        await self._schedule(interaction, self.services.schedules.resume(ctx, schedule_id))

    @subcommand(schedule, "schedule", "skip")
    async def schedule_skip(self, interaction: Interaction, options: Options) -> None:
        """Skip a schedule's next question (admins)."""
        ctx, schedule_id = self.context(interaction), _required(options.number("id"))
        await self._schedule(interaction, self.services.schedules.skip(ctx, schedule_id))

    @subcommand(schedule, "schedule", "now")
    async def schedule_now(self, interaction: Interaction, options: Options) -> None:
        """Post a schedule's question right now (admins)."""
        ctx, schedule_id = self.context(interaction), _required(options.number("id"))
        await self._schedule(interaction, self.services.schedules.now(ctx, schedule_id))

    async def _schedule(self, interaction: Interaction, call: Awaitable[ScheduleReply]) -> None:
        """Permissions are the core's: ``ctx.is_admin`` says what the adapter saw.

        ``now`` answers the admin first, then publishes through the gateway like the
        scheduler does, so the question is a plain channel post that keeps no token.
        """
        reply = await call
        await send_reply(interaction, reply.message.private())
        if reply.draft is not None:
            await self.services.posting.publish(reply.draft, self.bot.gateway)

    # --- snippets ----------------------------------------------------------------------------

    @command("write")
    async def write(self, interaction: Interaction, options: Options) -> None:
        """Write a question for the group: checked like a pack; an admin's joins `community`, a
        member's waits for an admin (`/suggestions`)."""
        ctx, difficulty = self.context(interaction), _required(options.text("difficulty"))
        tag_list = tuple(t.strip() for t in (options.text("tags") or "").split(",") if t.strip())

        async def submit(inner: Interaction, fields: dict[str, str]) -> None:
            await inner.response.defer(ephemeral=True, thinking=True)  # the sandbox takes seconds
            question = written_from_fields(fields, difficulty=difficulty, tags=tag_list)
            await send_reply(
                inner, (await self.services.suggestions.write(ctx, question)).private()
            )

        await interaction.response.send_modal(QuestionModal(submit, report_error))

    @command("run")
    async def run(self, interaction: Interaction, options: Options) -> None:
        """Run a Python snippet with torch (CPU) in a sandbox; opens a code editor."""
        self.context(interaction)
        self.services.runs.check()  # say "unavailable" now, not after the code is typed
        await interaction.response.send_modal(SnippetModal(self.run_code, report_error))

    async def run_message(self, interaction: Interaction, message: discord.Message) -> None:
        """Run the first Python code block of a message (the "Run snippet" context menu)."""
        code = first_python_block(message.content)
        if code is None:
            raise BadInput("That message has no ```python code block to run.")
        await self.run_code(interaction, code)

    @command("solve")
    async def solve(self, interaction: Interaction, options: Options) -> None:
        """Solve a coding exercise: your code runs against its checks in the sandbox.

        ``id`` is a posted exercise's number (``12`` or ``#12``), or an exercise's id in its
        pack: that one is posted here first, as on the console and Slack, then its editor
        opens (the modal is the interaction's response, so the post goes out through the
        gateway).
        """
        typed = options.text("id")
        request = SolveRequest.parse("discord", [typed] if typed else [])
        if request.exercise is None:
            await self.open_solver(interaction, request.post)
            return
        ctx = self.context(interaction)
        draft = await self.services.quiz.post_question(
            ctx, question=request.exercise, kinds=("exercise",)
        )
        await self.open_solver(interaction, draft.post.id)
        await self.services.posting.publish(draft, self.bot.gateway)

    @command("solutions")
    async def solutions(self, interaction: Interaction, options: Options) -> None:
        """An exercise's reference and members' shortest solutions, once solved or closed."""
        ctx = self.context(interaction)
        reply = await self.services.exercises.solutions(ctx, options.number("id"))
        await send_reply(interaction, reply)

    async def open_solver(self, interaction: Interaction, post_id: int | None) -> None:
        """The exercise's editor, a modal pre-filled with its starter; the verdict is private."""
        ctx = self.context(interaction)
        form = await self.services.exercises.open_editor(ctx, post_id)

        async def submit(inner: Interaction, code: str) -> None:
            await inner.response.defer(ephemeral=True, thinking=True)  # the sandbox takes a moment
            verdict = await self.services.exercises.submit(ctx, form.post_id, code)
            await send_reply(inner, verdict.private())

        modal = SnippetModal(
            submit,
            report_error,
            title=form.title,
            default=form.starter,
            description=f"Define {form.entry}; it runs against the examples and hidden checks.",
        )
        await interaction.response.send_modal(modal)

    @command("graph")
    async def graph(self, interaction: Interaction, options: Options) -> None:
        """Run a snippet and draw the autograd graph it built; opens a code editor."""
        self.context(interaction)
        self.services.runs.check()
        names = tuple(n.strip() for n in (options.text("of") or "").split(",") if n.strip())
        if options.flag("inputs"):
            names = ("*",)

        async def submit(inner: Interaction, code: str) -> None:
            await self.run_code(inner, code, graph=names)

        modal = SnippetModal(submit, report_error, title="Draw an autograd graph")
        await interaction.response.send_modal(modal)

    async def graph_message(self, interaction: Interaction, message: discord.Message) -> None:
        """Draw the graph of a message's first Python block ("Show autograd graph" menu)."""
        code = first_python_block(message.content)
        if code is None:
            raise BadInput("That message has no ```python code block to draw.")
        await self.run_code(interaction, code, graph=())

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

    # --- buttons -----------------------------------------------------------------------------

    async def on_button(self, interaction: Interaction, core_id: str) -> None:
        """A click on a studybot button: answer, show a card's back, or a hint; all private.

        An answer given on a private card back (Knew/Forgot) replaces that card, so its
        buttons cannot be clicked twice; other replies are new private messages.
        """
        parsed = parse_action(core_id)
        if parsed is None:
            raise BadInput("That button is out of date; ask for a new question.")
        action = parsed[0]
        if action is Action.SOLVE:
            await self.open_solver(interaction, parsed[1])
            return
        if action is Action.TRY:  # the code in an editable /run
            form = await self.services.quiz.try_it(self.context(interaction), *parsed[1:])
            modal = SnippetModal(self.run_code, report_error, title=form.title, default=form.code)
            await interaction.response.send_modal(modal)
            return
        reply = (await self.services.quiz.click(self.context(interaction), *parsed)).private()
        source = interaction.message
        replaces_card = action in (Action.ANSWER, Action.REVIEW)
        if replaces_card and source is not None and source.flags.ephemeral:
            # An answer on a private card back, or a review grade: the private card is
            # replaced by what comes next, so its buttons are gone.
            await interaction.response.edit_message(**render(reply).edit_kwargs())
            return
        await send_reply(interaction, reply)
