"""The slash commands, the "Run snippet" context menu, and what a button click does.

Each handler turns the interaction into a :class:`ChatContext`, asks the
:class:`Services`, and sends back what it says, rendered by :mod:`.render`. Handlers never
catch errors: they raise, and the tree's ``on_error`` (or the button/modal hook) hands the error
to :func:`.errors.report_error`, the one place that decides what the member is told.

Commands are declared by their typed signature; the first paragraph of each docstring is the
description Discord shows.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Awaitable, Iterable
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.commands import (
    discord_describe,
    help_rows,
    recap_request,
    remind_request,
    settings_request,
    suggestions_request,
)
from bot.adapters.discord.components import QuestionModal, SnippetModal
from bot.adapters.discord.errors import PENDING_KEY, report_error
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
from bot.core.rewards import MAX_THRESHOLD, Metric
from bot.core.rounds import MAX_QUESTIONS, MAX_SECONDS, MIN_SECONDS
from bot.core.schedule_spec import ScheduleForm
from bot.core.snippets import first_python_block
from bot.log import get_logger
from bot.questions.written import from_fields as written_from_fields

if TYPE_CHECKING:
    from bot.adapters.discord.client import StudyBot
    from bot.services.schedule_book import ScheduleReply

__all__ = ["StudyCog", "schedule_form_of", "send_reply", "suggest"]

log = get_logger(__name__)

Difficulty = Literal["easy", "medium", "hard"]
QuizKind = Literal["multiple_choice", "flashcard", "practice", "open", "exercise"]
WindowName = Literal["week", "month", "all", "streaks"]
RecapAction = Literal["show", "on", "off", "now"]
ReviewAction = Literal["export"]
SuggestionAction = Literal["list", "approve", "reject"]
RewardMetric = Literal["points", "streak", "reviews"]
SettingName = Literal[
    "timezone",
    "quiz-window",
    "points-easy",
    "points-medium",
    "points-hard",
    "round-questions",
    "round-seconds",
    "round-pause",
    "round-speed-bonus",
    "round-starters",
    "share-solutions",
    "reward-notices",
    "history",
]
Interaction = discord.Interaction[Any]

MAX_CHOICES = 25  # Discord's limit for autocomplete suggestions
SCHEDULE_ID = "The schedule's number (see /schedule list)"
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


def schedule_form_of(
    *,
    time: str | None,
    timezone: str | None,
    days: str | None,
    pack: str | None,
    difficulty: str | None,
    tags: str | None,
    window: str | None,
    mention: str | None,
    cron: str | None,
    kinds: str | None = None,
    round: str | None = None,
) -> ScheduleForm:
    """The ``/schedule add`` form's fields as a :class:`ScheduleForm` (checked by the core).

    A form field is one value, so days typed with spaces (``mon wed``) are joined with commas,
    and tags and kinds typed with spaces or commas become one entry each.
    """
    return ScheduleForm(
        time=time,
        timezone=timezone,
        days=",".join(days.replace(",", " ").split()) if days and days.strip() else None,
        cron=cron,
        pack=pack,
        tags=tuple((tags or "").replace(",", " ").split()),
        difficulty=difficulty,
        window=window,
        mention=mention,
        kinds=tuple((kinds or "").replace(",", " ").split()),
        round=round,
    )


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

    @app_commands.command(name="quiz")
    @app_commands.describe(**discord_describe("quiz"))
    async def quiz(
        self,
        interaction: Interaction,
        pack: str | None = None,
        difficulty: Difficulty | None = None,
        tag: str | None = None,
        kind: QuizKind | None = None,
    ) -> None:
        """Post a question in this channel: answers are private, the reveal is public.

        The question is the interaction's own (public) response; its id is stored so the reveal
        can edit it in place, long after the interaction token has expired.
        """
        ctx = self.context(interaction)
        tags = (tag.strip(),) if tag and tag.strip() else ()
        draft = await self.services.quiz.post_question(
            ctx, pack=pack, difficulty=difficulty, tags=tags, kinds=(kind,) if kind else ()
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

    @rounds.command(name="start")
    @app_commands.describe(**discord_describe("round", "start"))
    async def round_start(
        self,
        interaction: Interaction,
        pack: str | None = None,
        questions: app_commands.Range[int, 1, MAX_QUESTIONS] | None = None,
        seconds: app_commands.Range[int, MIN_SECONDS, MAX_SECONDS] | None = None,
        difficulty: Difficulty | None = None,
        tag: str | None = None,
    ) -> None:
        """Start a live round here: questions one at a time, faster right answers score more.

        The reply is the public announcement; the questions follow as channel posts from the
        one timer loop (the service wakes it), so none of them lives on this interaction's
        15-minute token.
        """
        request = RoundStart(
            pack=pack,
            questions=questions,
            seconds=seconds,
            difficulty=difficulty,
            tags=(tag.strip(),) if tag and tag.strip() else (),
        )
        await send_reply(
            interaction, await self.services.rounds.command(self.context(interaction), request)
        )

    @round_start.autocomplete("pack")
    async def _round_pack(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.pack_choices(current)

    @rounds.command(name="stop")
    async def round_stop(self, interaction: Interaction) -> None:
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

    @rewards.command(name="list")
    async def rewards_list(self, interaction: Interaction) -> None:
        """The role rewards set here."""
        await self._rewards(interaction, RewardsList())

    @rewards.command(name="add")
    @app_commands.describe(**discord_describe("rewards", "add"))
    async def rewards_add(
        self,
        interaction: Interaction,
        metric: RewardMetric,
        threshold: app_commands.Range[int, 1, MAX_THRESHOLD],
        role: discord.Role,
    ) -> None:
        """Give a role to members who reach a threshold; it is taken back below it (admins)."""
        request = RewardAdd(Metric(metric), threshold, str(role.id), f"@{role.name}")
        await self._rewards(interaction, request)

    @rewards.command(name="remove")
    @app_commands.describe(**discord_describe("rewards", "remove"))
    async def rewards_remove(
        self, interaction: Interaction, id: app_commands.Range[int, 1]
    ) -> None:
        """Remove a reward; its role is taken back from those who hold it (admins)."""
        await self._rewards(interaction, RewardRemove(id))

    @rewards.command(name="preview")
    async def rewards_preview(self, interaction: Interaction) -> None:
        """Who would gain or lose which role now; changes nothing (admins)."""
        await self._rewards(interaction, RewardsPreview())

    # --- scores ------------------------------------------------------------------------------

    @app_commands.command(name="leaderboard")
    @app_commands.describe(**discord_describe("leaderboard"))
    async def leaderboard(
        self, interaction: Interaction, window: WindowName = "week", here: bool = False
    ) -> None:
        """Who is ahead this week, this month or of all time, on the server or in this channel,
        or who has the longest streak going (``streaks``)."""
        board = await self.services.standings.leaderboard(
            self.context(interaction), window, here=here
        )
        await send_reply(interaction, board)

    @app_commands.command(name="stats")
    @app_commands.describe(**discord_describe("stats"))
    async def stats(self, interaction: Interaction, member: discord.Member | None = None) -> None:
        """Points, accuracy and streak for you or another member.

        The reply is private, as on Slack: asking about someone should not broadcast their
        accuracy. The core looks members up by platform id; its "no member called `<id>`"
        would show a raw snowflake, so the miss is reworded with the member's name here.
        """
        ctx = self.context(interaction)
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

    @app_commands.command(name="history")
    @app_commands.describe(**discord_describe("history"))
    async def history(
        self, interaction: Interaction, count: app_commands.Range[int, 1, 20] = 5
    ) -> None:
        """This channel's last questions, with how the group did (only you see it)."""
        message = await self.services.history.recent(self.context(interaction), count)
        await send_reply(interaction, message.private())

    @app_commands.command(name="question")
    @app_commands.describe(**discord_describe("question"))
    async def question(self, interaction: Interaction, id: app_commands.Range[int, 1]) -> None:
        """A past question, with its answer and solution once it closed (only you see it)."""
        message = await self.services.history.question(self.context(interaction), id)
        await send_reply(interaction, message.private())

    @app_commands.command(name="report")
    @app_commands.describe(**discord_describe("report"))
    async def report(
        self,
        interaction: Interaction,
        reason: app_commands.Range[str, 1, 500],
        id: app_commands.Range[int, 1] | None = None,
    ) -> None:
        """Tell the admins a question is wrong (only they see reports)."""
        message = await self.services.reports.report(self.context(interaction), id, reason)
        await send_reply(interaction, message.private())

    @app_commands.command(name="reports")
    @app_commands.describe(resolve="Close the open reports on this item id (once it is fixed)")
    async def reports(self, interaction: Interaction, resolve: str | None = None) -> None:
        """The open reports of wrong questions (admins)."""
        ctx = self.context(interaction)
        if resolve:
            message = await self.services.reports.resolve(ctx, resolve.strip())
        else:
            message = await self.services.reports.listing(ctx)
        await send_reply(interaction, message.private())

    @app_commands.command(name="suggestions")
    @app_commands.describe(
        action="list (default), approve, or reject (give the reason)",
        **discord_describe("suggestions", "reject"),
    )
    async def suggestions(
        self,
        interaction: Interaction,
        action: SuggestionAction = "list",
        id: app_commands.Range[int, 1] | None = None,
        reason: app_commands.Range[str, 1, 500] | None = None,
    ) -> None:
        """The questions members wrote, waiting for an admin to approve or reject (admins)."""
        args: list[str] = [] if action == "list" else [action]
        if id is not None:
            args.append(str(id))
        if reason:
            args.extend(reason.split())
        request = suggestions_request("discord", args)
        ctx = self.context(interaction)
        await interaction.response.defer(ephemeral=True, thinking=True)  # approving runs checks
        message = await self.services.suggestions.command(ctx, request, self.bot.gateway)
        await send_reply(interaction, message.private())

    @app_commands.command(name="recap")
    @app_commands.describe(
        action="show (default), on, off, or now (post this week's recap here)",
        when="For on: a day and a local time, e.g. fri 18:00",
    )
    async def recap(
        self,
        interaction: Interaction,
        action: RecapAction = "show",
        when: str | None = None,
    ) -> None:
        """This channel's weekly recap: the board, the streaks, the most missed question."""
        args: list[str] = [] if action == "show" else [action]
        if when:
            args.extend(when.split())
        request = recap_request("discord", args)
        message = await self.services.recaps.command(self.context(interaction), request)
        await send_reply(interaction, message)

    # --- settings ----------------------------------------------------------------------------

    @app_commands.command(name="settings")
    @app_commands.describe(
        setting="The setting to see or change (leave empty to list them all), or history",
        value="Its new value (admins): e.g. Europe/Berlin, 45m, 25",
    )
    async def settings(
        self,
        interaction: Interaction,
        setting: SettingName | None = None,
        value: str | None = None,
    ) -> None:
        """This server's timezone, quiz window and points; admins change them."""
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

    @app_commands.command(name="review")
    @app_commands.describe(
        remind="A daily DM at this local time (HH:MM) when cards are due, or off",
        timezone="The reminder's IANA timezone (default: the server's)",
        action="export: your review cards as an Anki deck (.apkg), only to you",
    )
    async def review(
        self,
        interaction: Interaction,
        remind: str | None = None,
        timezone: str | None = None,
        action: ReviewAction | None = None,
    ) -> None:
        """Your due cards, one at a time (spaced repetition); only you see them."""
        ctx = self.context(interaction)
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

    @pack.command(name="list")
    async def pack_list(self, interaction: Interaction) -> None:
        """The question packs, and which are on in this channel."""
        await send_reply(interaction, await self.services.packs.listing(self.context(interaction)))

    @pack.command(name="enable")
    @app_commands.describe(**discord_describe("pack", "enable"))
    async def pack_enable(self, interaction: Interaction, name: str) -> None:
        """Turn a question pack back on in this channel (admins)."""
        reply = await self.services.packs.enable(self.context(interaction), name)
        await send_reply(interaction, reply.private())

    @pack.command(name="disable")
    @app_commands.describe(**discord_describe("pack", "disable"))
    async def pack_disable(self, interaction: Interaction, name: str) -> None:
        """Turn a question pack off in this channel only (admins)."""
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

    @pack.command(name="upload")
    @app_commands.describe(**discord_describe("pack", "upload"))
    async def pack_upload(
        self, interaction: Interaction, file: discord.Attachment, force: bool = False
    ) -> None:
        """Check a question pack file with the linter; an admin's valid pack is installed.

        Name and size are checked from the attachment's metadata before it is downloaded;
        the reply is deferred (privately) because a big pack takes seconds to check.
        """
        ctx = self.context(interaction)
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

    @app_commands.command(name="help")
    async def help(self, interaction: Interaction) -> None:
        """What studybot can do, and how answering works."""
        rows = help_rows("discord")
        await send_reply(
            interaction, cards.help_message(rows, admin=self.context(interaction).is_admin)
        )

    # --- schedules ---------------------------------------------------------------------------

    schedule = app_commands.Group(
        name="schedule", description="Daily questions in this channel (admins change them)"
    )

    @schedule.command(name="add")
    @app_commands.describe(
        time="Local time to post, HH:MM (e.g. 09:00)",
        timezone="IANA timezone, e.g. Europe/Berlin (default: the server's)",
        days="daily, weekdays, weekends or e.g. mon,wed,fri (default: daily)",
        pack="Only questions from this pack",
        difficulty="Only questions of this difficulty",
        tags="Only questions with these tags (separated by spaces or commas)",
        window="How long answers stay open, e.g. 90m or 2h (default: until the next one)",
        mention="A role to notify with each question",
        cron="A cron expression instead of time and days, e.g. 0 9 * * 1-5",
        kinds="Kinds to post, e.g. open (default: flashcard, multiple_choice, practice)",
        round="A live round instead of one question: QUESTIONSxSECONDS, e.g. 10x20s",
    )
    async def schedule_add(
        self,
        interaction: Interaction,
        time: str | None = None,
        timezone: str | None = None,
        days: str | None = None,
        pack: str | None = None,
        difficulty: Difficulty | None = None,
        tags: str | None = None,
        window: str | None = None,
        mention: discord.Role | None = None,
        cron: str | None = None,
        kinds: str | None = None,
        round: str | None = None,
    ) -> None:
        """Add a scheduled question to this channel (admins).

        The typed fields go to the core as a form; it checks them exactly as it checks the
        text grammar's words on the console and Slack.
        """
        if mention is not None and mention.is_default():
            raise BadInput("@everyone would ping the whole server; pick a role to notify.")
        form = schedule_form_of(
            time=time,
            timezone=timezone,
            days=days,
            pack=pack,
            difficulty=difficulty,
            tags=tags,
            window=window,
            mention=None if mention is None else mention.mention,
            cron=cron,
            kinds=kinds,
            round=round,
        )
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

    @schedule.command(name="list")
    async def schedule_list(self, interaction: Interaction) -> None:
        """This channel's schedules and when each posts next."""
        ctx = self.context(interaction)
        await self._schedule(interaction, self.services.schedules.list(ctx))

    @schedule.command(name="preview")
    @app_commands.rename(schedule_id="id")
    @app_commands.describe(schedule_id=SCHEDULE_ID, count="How many times to show")
    async def schedule_preview(
        self,
        interaction: Interaction,
        schedule_id: app_commands.Range[int, 1],
        count: app_commands.Range[int, 1, 25] = 5,
    ) -> None:
        """When a schedule posts next, in its own timezone."""
        ctx = self.context(interaction)
        await self._schedule(interaction, self.services.schedules.preview(ctx, schedule_id, count))

    @schedule.command(name="remove")
    @app_commands.rename(schedule_id="id")
    @app_commands.describe(schedule_id=SCHEDULE_ID)
    async def schedule_remove(
        self,
        interaction: Interaction,
        schedule_id: app_commands.Range[int, 1],
    ) -> None:
        """Remove a schedule (admins)."""
        ctx = self.context(interaction)
        await self._schedule(interaction, self.services.schedules.remove(ctx, schedule_id))

    @schedule.command(name="pause")
    @app_commands.rename(schedule_id="id")
    @app_commands.describe(schedule_id=SCHEDULE_ID)
    async def schedule_pause(
        self,
        interaction: Interaction,
        schedule_id: app_commands.Range[int, 1],
    ) -> None:
        """Pause a schedule until it is resumed (admins)."""
        ctx = self.context(interaction)
        await self._schedule(interaction, self.services.schedules.pause(ctx, schedule_id))

    @schedule.command(name="resume")
    @app_commands.rename(schedule_id="id")
    @app_commands.describe(schedule_id=SCHEDULE_ID)
    async def schedule_resume(
        self,
        interaction: Interaction,
        schedule_id: app_commands.Range[int, 1],
    ) -> None:
        """Resume a paused schedule (admins)."""
        ctx = self.context(interaction)
        await self._schedule(interaction, self.services.schedules.resume(ctx, schedule_id))

    @schedule.command(name="skip")
    @app_commands.rename(schedule_id="id")
    @app_commands.describe(schedule_id=SCHEDULE_ID)
    async def schedule_skip(
        self,
        interaction: Interaction,
        schedule_id: app_commands.Range[int, 1],
    ) -> None:
        """Skip a schedule's next question (admins)."""
        ctx = self.context(interaction)
        await self._schedule(interaction, self.services.schedules.skip(ctx, schedule_id))

    @schedule.command(name="now")
    @app_commands.rename(schedule_id="id")
    @app_commands.describe(schedule_id=SCHEDULE_ID)
    async def schedule_now(
        self,
        interaction: Interaction,
        schedule_id: app_commands.Range[int, 1],
    ) -> None:
        """Post a schedule's question right now (admins)."""
        ctx = self.context(interaction)
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

    @app_commands.command(name="write")
    @app_commands.describe(
        difficulty="How hard it is (default: medium)",
        tags="Tags, separated by commas (e.g. autograd, leaf)",
    )
    async def write(
        self, interaction: Interaction, difficulty: Difficulty = "medium", tags: str = ""
    ) -> None:
        """Write a question for the group: checked like a pack; an admin's joins `community`, a
        member's waits for an admin (`/suggestions`)."""
        ctx = self.context(interaction)
        tag_list = tuple(t.strip() for t in tags.split(",") if t.strip())

        async def submit(inner: Interaction, fields: dict[str, str]) -> None:
            await inner.response.defer(ephemeral=True, thinking=True)  # the sandbox takes seconds
            question = written_from_fields(fields, difficulty=difficulty, tags=tag_list)
            await send_reply(
                inner, (await self.services.suggestions.write(ctx, question)).private()
            )

        await interaction.response.send_modal(QuestionModal(submit, report_error))

    @app_commands.command(name="run")
    async def run(self, interaction: Interaction) -> None:
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

    @app_commands.command(name="solve")
    @app_commands.describe(id="The exercise's number (default: the newest open one)")
    async def solve(self, interaction: Interaction, id: int | None = None) -> None:
        """Solve a coding exercise: your code runs against its checks in the sandbox."""
        await self.open_solver(interaction, id)

    @app_commands.command(name="solutions")
    @app_commands.describe(id="The exercise's number (default: the newest open one)")
    async def solutions(self, interaction: Interaction, id: int | None = None) -> None:
        """An exercise's reference and members' shortest solutions, once solved or closed."""
        ctx = self.context(interaction)
        await send_reply(interaction, await self.services.exercises.solutions(ctx, id))

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

    @app_commands.command(name="graph")
    @app_commands.describe(
        of="The tensor(s) to draw, e.g. loss or a,b (default: the last one)",
        inputs="Draw every result the snippet assigned, side by side (one function, two inputs)",
    )
    async def graph(
        self, interaction: Interaction, of: str | None = None, inputs: bool = False
    ) -> None:
        """Run a snippet and draw the autograd graph it built; opens a code editor."""
        self.context(interaction)
        self.services.runs.check()
        names = tuple(n.strip() for n in (of or "").split(",") if n.strip())
        if inputs:
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
