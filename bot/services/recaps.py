"""``/recap``: a weekly recap post on an admin's schedule, and the timed work that posts it.

Admins choose a day and local time per channel (``recap on fri 18:00``); at that time the
recap of the week goes up in the channel: the week's board, the longest streaks still alive,
and the question most members missed (with its answer, and how to look at it again). Each
channel's week is claimed in the database before the post is sent, so a restart or a second
process never posts it twice; a bot that was down for the whole recap day skips that week
rather than posting a stale recap later.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from bot.core import replies
from bot.core.clock import Clock
from bot.core.durations import format_duration
from bot.core.errors import Forbidden
from bot.core.gateway import ChatGateway, serves
from bot.core.messages import Message, Section
from bot.core.models import ChatContext
from bot.core.recap import (
    MissedQuestion,
    RecapContent,
    StreakRow,
    recap_message,
    recap_week,
    week_key,
)
from bot.core.requests import RecapOff, RecapOn, RecapRequest, RecapShow
from bot.core.wakeup import Wakeup
from bot.log import get_logger
from bot.questions.schema import CHOICE_LETTERS, Exercise, Flashcard, Item, Practice
from bot.services.catalogue import Catalogue
from bot.services.places import Places
from bot.services.timed import PlannedWork
from bot.storage.directory import ChannelRow, Directory, WorkspaceRow
from bot.storage.recaps import RecapSchedule, RecapStore
from bot.storage.scores import ScoreStore

if TYPE_CHECKING:  # Exams reads nothing of these; only the type is named
    from bot.services.exams import Exams

__all__ = ["Recaps"]

log = get_logger(__name__)

DEFAULT_GRACE = timedelta(hours=2)
"""SCHEDULE_GRACE's default: how late a recap may still post."""
MIN_GRACE = timedelta(minutes=1)
"""Later than this, a recap says how late it is (the loop wakes a few ms after the due time)."""
_DAY_WORDS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
BOARD_SIZE = 5
STREAKS_SHOWN = 3  # the longest streaks alive (of 2 days or more)


class Recaps:
    # Set by build_services: the exam date's countdown line (None: no line, as in tests that
    # build the service alone).
    exams: Exams | None = None

    def __init__(
        self,
        *,
        places: Places,
        directory: Directory,
        catalogue: Catalogue,
        scores: ScoreStore,
        store: RecapStore,
        clock: Clock,
        wakeup: Wakeup,
        grace: timedelta = DEFAULT_GRACE,
    ) -> None:
        # The same rule as a scheduled question's (SCHEDULE_GRACE): a recap that comes due
        # while the bot is down posts when it is back within the grace, saying how late it
        # is; a later one is skipped for the week (with a log line), never posted stale.
        self._grace = max(grace, MIN_GRACE)
        self._places = places
        self._directory = directory
        self._catalogue = catalogue
        self._scores = scores
        self._store = store
        self._clock = clock
        self._wakeup = wakeup  # a recap turned on or off re-plans the timer

    async def command(self, ctx: ChatContext, request: RecapRequest) -> Message:
        """``recap`` (what is set), ``recap on DAY HH:MM``, ``recap off``, ``recap now``."""
        workspace, channel = await self._places.channel(ctx)
        where = f"#{channel.name or ctx.channel_name or ctx.channel}"
        if isinstance(request, RecapShow):
            return Message.note(await self._status(ctx, workspace, channel, where))
        if not ctx.is_admin:
            raise Forbidden("Only admins can schedule or post the weekly recap.")
        now = self._clock.now()
        if isinstance(request, RecapOn):
            weekday, at = request.weekday, request.at
            await self._store.set(channel.id, weekday, at, ctx.member_name, now)
            self._wakeup.timing_changed()
            zone = workspace.settings.timezone
            return Message.note(
                f"📅 The weekly recap will post in {where} every {_DAY_WORDS[weekday]} at "
                f"{at:%H:%M} ({zone}): the week's board, the longest streaks and the question "
                f"most people missed. Preview it with {ctx.command('recap now')}."
            )
        if isinstance(request, RecapOff):
            was_on = await self._store.turn_off(channel.id, ctx.member_name, now)
            self._wakeup.timing_changed()
            return Message.note(
                f"The weekly recap in {where} is off." if was_on else f"{where} had no recap on."
            )
        start, end = recap_week(now + timedelta(days=1), workspace.zone_at(now))
        return await self.build(workspace, channel, start, end, prefix=ctx.command_prefix)

    async def _status(
        self, ctx: ChatContext, workspace: WorkspaceRow, channel: ChannelRow, where: str
    ) -> str:
        schedule = await self._store.get(channel.id)
        if schedule is None or not schedule.enabled:
            return (
                f"No weekly recap in {where}. Admins: {ctx.command('recap on fri 18:00')} "
                "posts one every Friday at 18:00."
            )
        return (
            f"The weekly recap posts in {where} every {_DAY_WORDS[schedule.weekday]} at "
            f"{schedule.local_time:%H:%M} ({workspace.settings.timezone}). "
            f"Admins: {ctx.command('recap off')} stops it."
        )

    async def build(
        self,
        workspace: WorkspaceRow,
        channel: ChannelRow,
        start: datetime,
        end: datetime,
        *,
        prefix: str,
    ) -> Message:
        """The recap of [start, end) for ``channel`` (public); ``prefix`` starts commands."""
        board, _ = await self._scores.leaderboard(
            workspace.id, f"w:{start.date().isoformat()}", limit=BOARD_SIZE
        )
        today = self._clock.now().astimezone(start.tzinfo).date()
        streaks = await self._scores.streaks(workspace.id, today, limit=STREAKS_SHOWN, least=2)
        missed = None
        row = await self._store.most_missed(channel.id, start, end)
        if row is not None:
            stored = await self._catalogue.as_shown(row.version_id, row.choice_seed)
            missed = MissedQuestion(
                row.post_id, stored.item.prompt, row.missed, row.answered, _answer(stored.item)
            )
        content = RecapContent(
            channel=channel.name or channel.external_id,
            week_start=start.date(),
            board=tuple(board),
            streaks=tuple(
                StreakRow(s.display_name, s.days, s.freezes, s.freezes_used) for s in streaks
            ),
            missed=missed,
            questions=await self._store.questions_in(channel.id, start, end),
        )
        shown = f"question {missed.post_id}" if missed is not None else "question ID"
        message = recap_message(content, f"`{prefix}{shown}`")
        exam = (
            None if self.exams is None else await self.exams.countdown_line(workspace, channel.id)
        )
        if exam is None:
            return message
        line = Section(body=f"{exam}: `{prefix}exam` shows your readiness.")
        return replace(message, sections=(*message.sections, line))

    async def deliver(self, gateway: ChatGateway, *, command_prefix: str = "/") -> int:
        """Post every recap whose time has come this week; how many were posted."""
        now = self._clock.now()
        posted = 0
        for schedule in await self._store.enabled():
            try:
                posted += await self._deliver_one(gateway, schedule, now, command_prefix)
            except Exception:
                log.exception("weekly recap for channel %d failed", schedule.channel_id)
        return posted

    async def _deliver_one(
        self, gateway: ChatGateway, schedule: RecapSchedule, now: datetime, prefix: str
    ) -> int:
        workspace = await self._directory.workspace_by_id(schedule.workspace_id)
        if not serves(gateway, workspace.external_id):
            return 0  # another process's (a guild on another shard)
        tz = workspace.zone_at(now)
        local = now.astimezone(tz)
        if local.weekday() != schedule.weekday or local.time() < schedule.local_time:
            return 0
        start, end = recap_week(now, tz)
        if not await self._store.claim(schedule.channel_id, week_key(start), now):
            return 0  # posted already (by this process or another)
        due = datetime.combine(local.date(), schedule.local_time, tz)
        late = timedelta(seconds=round((now - due).total_seconds()))
        if late > self._grace:
            log.warning(
                "weekly recap for channel %d skipped this week: due %s, %s ago, beyond the "
                "grace of %s (SCHEDULE_GRACE)",
                schedule.channel_id,
                due.isoformat(),
                format_duration(late),
                format_duration(self._grace),
            )
            return 0
        channel = await self._directory.channel_by_id(schedule.channel_id)
        message = await self.build(workspace, channel, start, end, prefix=prefix)
        if late > MIN_GRACE:
            message = late_note(message, due, late)
        await gateway.send_post(schedule.channel_external, message)
        return 1

    async def next_time(self, gateway: ChatGateway, now: datetime) -> datetime | None:
        """The soonest instant after ``now`` at which a recap this process serves falls due."""
        found: list[datetime] = []
        for schedule in await self._store.enabled():
            workspace = await self._directory.workspace_by_id(schedule.workspace_id)
            if not serves(gateway, workspace.external_id):
                continue
            tz = workspace.zone_at(now)
            local = now.astimezone(tz)
            day = local.date() + timedelta(days=(schedule.weekday - local.weekday()) % 7)
            at = datetime.combine(day, schedule.local_time, tz)
            found.append(at if at > now else at + timedelta(days=7))
        return min(found, default=None)

    def due_source(self, gateway: ChatGateway, *, command_prefix: str = "/") -> PlannedWork:
        """The weekly recaps as timed work for the scheduler, posting through ``gateway``:
        due at the soonest recap time; each channel's week is claimed before it is posted."""
        return PlannedWork(
            "weekly recaps",
            lambda: self.deliver(gateway, command_prefix=command_prefix),
            lambda now: self.next_time(gateway, now),
        )


def _answer(item: Item) -> str:
    """The right answer as a member would read it."""
    letter = replies.correct_letter(item)
    if letter is not None:
        choice = replies.choices_of(item)[CHOICE_LETTERS.index(letter)]
        return f"{letter}. {choice.text}"
    if isinstance(item, Flashcard):
        return item.answer
    if isinstance(item, Practice):
        return item.final_answer
    if isinstance(item, Exercise):
        return "see the reference solution with /solutions"
    return "see the question"


def late_note(message: Message, due: datetime, late: timedelta) -> Message:
    """The recap, saying it is late and why: members otherwise wonder why Friday's 18:00
    recap arrived at 21:44."""
    note = f"Posted {spoken_duration(late)} late: the bot was offline at {due:%a %H:%M}."
    footer = f"{message.footer} · {note}" if message.footer else note
    return replace(message, footer=footer)


def spoken_duration(delta: timedelta) -> str:
    """``3 h 44 min``, ``25 min``: how late, in words a member reads at a glance."""
    minutes = max(1, round(delta.total_seconds() / 60))
    hours, minutes = divmod(minutes, 60)
    if hours and minutes:
        return f"{hours} h {minutes} min"
    return f"{hours} h" if hours else f"{minutes} min"
