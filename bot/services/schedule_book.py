"""Channel schedules as admins manage them: ``schedule add|list|remove|pause|resume|skip|now|
preview``, the rules the scheduler follows after downtime, and the hook that wakes it.

Adapters call typed methods (:meth:`ScheduleBook.add` with a
:class:`~bot.core.schedule_spec.ScheduleForm`, :meth:`ScheduleBook.remove` with an id, ...)
and get a :class:`ScheduleReply`; the console and Slack get there through one text grammar
(:mod:`bot.adapters.text_commands`), Discord from its typed options. Reading is data first:
:meth:`ScheduleBook.channel_schedules` and :meth:`ScheduleBook.upcoming` return the schedules
with their next times (:class:`ScheduleTimes`), which ``list`` and ``preview`` render
(:func:`schedules_message`, :func:`preview_message`) and an admin page can show as they are.
Permissions are decided here, not in the adapters: only ``ctx.is_admin`` (workspace admins, or
the configured admin role or user group, as the adapter reads them) may change schedules;
everyone may list and preview them.

Checking specs and occurrence maths are :mod:`bot.core.schedule_spec` (pure, DST-tested); this
module only stores specs, applies admin actions and decides what to do with occurrences that
came due while nobody was looking (:func:`catch_up`). What posts is the schedules' due source,
:mod:`bot.services.schedule_source`, run by the timer loop (:mod:`bot.scheduler`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from bot.core.errors import BadInput, Forbidden, NotFound
from bot.core.messages import Message, Section, Tone
from bot.core.models import ChatContext
from bot.core.schedule_spec import (
    ScheduleError,
    ScheduleForm,
    ScheduleSpec,
    decode_spec,
    encode_spec,
    next_occurrence,
    occurrences,
    preview,
    timezone_warning,
    upcoming,
)
from bot.core.wakeup import ScheduleListener, Wakeup
from bot.log import get_logger
from bot.services.audit import AuditLog, audited
from bot.storage.schedule_store import ScheduleRow, ScheduleStore

if TYPE_CHECKING:
    from bot.core.clock import Clock
    from bot.services.catalogue import Catalogue
    from bot.services.places import Places
    from bot.services.posting import PostDraft, Posting
    from bot.storage.directory import ChannelRow, Directory, WorkspaceRow
    from bot.storage.posts import PostStore

__all__ = [
    "MAX_SCHEDULES_PER_CHANNEL",
    "MIN_GRACE",
    "PREVIEW_DEFAULT",
    "PREVIEW_MAX",
    "CatchUp",
    "ChannelSchedules",
    "Schedule",
    "ScheduleBook",
    "ScheduleListener",
    "ScheduleReply",
    "ScheduleTimes",
    "catch_up",
    "local_text",
    "preview_message",
    "schedules_message",
]

log = get_logger(__name__)

MAX_SCHEDULES_PER_CHANNEL = 25
PREVIEW_DEFAULT = 5
PREVIEW_MAX = 25
MIN_GRACE = timedelta(minutes=1)
"""However small the grace setting, a post this late is on time: the loop wakes a few
milliseconds after the due instant, and that must never count as downtime."""

_FORBIDDEN = (
    "Only admins can change schedules (workspace admins, or members of the configured admin "
    "role or user group). Everyone can use `schedule list` and `schedule preview ID`."
)


@dataclass(frozen=True, slots=True)
class ScheduleReply:
    """What a schedule command gives back to the adapter.

    ``message`` is for the caller (ephemeral). ``draft`` is set by ``now``: a question the
    adapter must publish with ``service.publish(draft, gateway)``.
    """

    message: Message
    draft: PostDraft | None = None


@dataclass(frozen=True, slots=True)
class Schedule:
    """A stored schedule with its spec parsed."""

    id: int
    channel_id: int
    workspace_id: int
    spec: ScheduleSpec
    paused: bool
    skip_until: datetime | None
    handled_until: datetime | None
    created_at: datetime

    @property
    def after(self) -> datetime:
        """Occurrences at or before this instant are done with: they came before the schedule
        existed, were skipped by an admin (or by a pause), or the scheduler handled them."""
        marks = (self.created_at, self.skip_until, self.handled_until)
        return max(mark for mark in marks if mark is not None)

    def next_after(self, moment: datetime) -> datetime:
        """The next occurrence that may still post, as seen at ``moment``."""
        return next_occurrence(self.spec, max(self.after, moment))


def _schedule(row: ScheduleRow) -> Schedule:
    return Schedule(
        id=row.id,
        channel_id=row.channel_id,
        workspace_id=row.workspace_id,
        spec=decode_spec(row.spec),
        paused=row.paused,
        skip_until=row.skip_until,
        handled_until=row.handled_until,
        created_at=row.created_at,
    )


@dataclass(frozen=True, slots=True)
class ScheduleTimes:
    """A schedule with when it posts next: what ``schedule list`` and ``schedule preview``
    show, and what an admin page lists.

    ``schedule`` is None when the stored spec no longer parses (then ``times`` is empty; it
    can only be removed). ``times`` are aware instants in the schedule's own zone; ``texts``
    are the same times as the channel reads them (``Sun 2026-03-29 03:30 CEST (shifted: ...)``).
    A paused schedule's times are those once it is resumed.
    """

    id: int
    channel: str  # the name of the channel it posts in
    schedule: Schedule | None
    times: tuple[datetime, ...]
    texts: tuple[str, ...]

    @property
    def paused(self) -> bool:
        return self.schedule is not None and self.schedule.paused


@dataclass(frozen=True, slots=True)
class ChannelSchedules:
    """A channel's schedules, oldest first, each with its next times."""

    channel: str
    schedules: tuple[ScheduleTimes, ...]


def _check_count(count: int) -> None:
    if not 1 <= count <= PREVIEW_MAX:
        raise BadInput(f"N is how many to show: a number from 1 to {PREVIEW_MAX}.")


def _times(
    schedule_id: int, schedule: Schedule | None, channel: str, now: datetime, count: int
) -> ScheduleTimes:
    if schedule is None:
        return ScheduleTimes(schedule_id, channel, None, (), ())
    after = max(schedule.after, now)
    found = upcoming(schedule.spec, after, count)  # walked once for both
    return ScheduleTimes(
        schedule.id,
        channel,
        schedule,
        tuple(when for when, _ in found),
        tuple(text for _, text in found),
    )


def schedules_message(listed: ChannelSchedules) -> Message:
    """``schedule list``: each schedule and when it posts next (or that it is paused)."""
    lines = []
    for entry in listed.schedules:
        schedule = entry.schedule
        if schedule is None:
            lines.append(
                f"**#{entry.id}** — cannot be read any more; remove it "
                f"(`schedule remove {entry.id}`) and add it again"
            )
            continue
        lines.append(
            f"**#{schedule.id}** {schedule.spec.describe()} — next: {entry.texts[0]}"
            if not schedule.paused
            else f"**#{schedule.id}** {schedule.spec.describe()} — ⏸️ paused"
        )
    where = f"#{listed.channel}"
    if not lines:
        body = (
            f"No schedules in {where} yet. Admins can add one, e.g. "
            "`schedule add 09:00 Europe/Berlin weekdays`."
        )
    else:
        body = "\n".join(lines)
    return Message(title=f"🗓️ Schedules in {where}", sections=(Section(body=body),), ephemeral=True)


def preview_message(upcoming: ScheduleTimes) -> Message:
    """``schedule preview ID [N]``: the schedule's next times, in its own zone."""
    schedule = upcoming.schedule
    assert schedule is not None  # a schedule that no longer parses is refused before this
    body = "\n".join(f"• {t}" for t in upcoming.texts)
    if schedule.paused:
        body = (
            f"Paused: these are the times once resumed (`schedule resume {schedule.id}`).\n" + body
        )
    title = (
        f"🗓️ Next {len(upcoming.texts)} of schedule #{schedule.id} in #{upcoming.channel} "
        f"({schedule.spec.timezone})"
    )
    return Message(title=title, sections=(Section(body=body),), ephemeral=True)


# --- after downtime --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CatchUp:
    """What to do with the occurrences in ``(after, now]``.

    ``post`` is the one to post now (the latest, if it is within the grace window), or None.
    ``skipped`` are due occurrences within the grace window that a later one replaces.
    ``too_late_since`` is the first due occurrence if any were older than the grace window
    (all of those are skipped; they are not listed one by one). ``upcoming`` is the first
    occurrence after ``now``: when the schedule is due next.
    """

    post: datetime | None
    skipped: tuple[datetime, ...] = ()
    too_late_since: datetime | None = None
    upcoming: datetime | None = None


def catch_up(
    spec: ScheduleSpec,
    after: datetime,
    now: datetime,
    grace: timedelta,
    *,
    first: datetime | None = None,
    following: datetime | None = None,
) -> CatchUp:
    """Decide which due occurrence (if any) still posts: never a burst of catch-up posts.

    After downtime only the most recent missed occurrence is posted, and only if
    ``now - occurrence <= grace``; everything older is skipped. Work is bounded by the grace
    window, not by how long the bot was down. ``first`` is ``next_occurrence(spec, after)``
    if the caller already knows it (the scheduler does: it is why the schedule is due), and
    ``following`` is ``next_occurrence(spec, first)`` if known (computed ahead of a batch).
    """
    grace = max(grace, MIN_GRACE)
    if first is None:
        first = next_occurrence(spec, after)
    if first > now:
        return CatchUp(None, upcoming=first)
    horizon = now - grace  # an occurrence at the horizon itself is still in time
    too_late_since = None
    due: list[datetime] = []
    if first < horizon:
        too_late_since = first
        occurrence = next_occurrence(spec, horizon - timedelta(microseconds=1))  # strictly after
    else:
        occurrence = first
    while occurrence <= now:
        due.append(occurrence)
        if following is not None and occurrence == first:
            occurrence = following
        else:
            occurrence = next_occurrence(spec, occurrence)
    if not due:
        return CatchUp(None, (), too_late_since, occurrence)
    return CatchUp(due[-1], tuple(due[:-1]), too_late_since, occurrence)


# --- the admin API ---------------------------------------------------------------------------


class ScheduleBook:
    """The schedules of every channel, and the commands that change them.

    Held by the service (``service.schedules``). While the timer loop runs, the schedules' due
    source (:class:`~bot.services.schedule_source.ScheduleSource`) registers a listener here so
    that every change is re-read at once (and the loop, listening to the same signal, wakes).
    """

    audit: AuditLog | None = None  # set by build_services: changes are recorded there

    def __init__(
        self,
        store: ScheduleStore,
        *,
        places: Places,
        catalogue: Catalogue,
        posting: Posting,
        posts: PostStore,
        directory: Directory,
        clock: Clock,
        wakeup: Wakeup,
    ) -> None:
        self.store = store
        self._places = places
        self._catalogue = catalogue
        self._posting = posting
        self._posts = posts
        self._directory = directory
        self._clock = clock
        self._wakeup = wakeup

    # --- the scheduler's side ----------------------------------------------------------------

    def listen(self, listener: ScheduleListener) -> None:
        self._wakeup.listen(listener)

    def unlisten(self, listener: ScheduleListener) -> None:
        self._wakeup.unlisten(listener)

    @property
    def listened(self) -> bool:
        return self._wakeup.listened

    def changed(self, schedule_id: int | None) -> None:
        """Tell the scheduler (if one runs) to re-read a schedule, or just to re-plan."""
        self._wakeup.changed(schedule_id)

    async def active(self) -> list[Schedule]:
        """Every schedule that may post; a stored spec that no longer parses is logged."""
        return [s for row in await self.store.active() if (s := self._readable(row))]

    async def many(self, ids: Sequence[int]) -> dict[int, Schedule]:
        """The live schedules among ``ids`` (paused ones included; removed ones absent)."""
        rows = await self.store.many(ids)
        return {i: s for i, row in rows.items() if (s := self._readable(row))}

    async def changed_since(self, since: datetime) -> list[int]:
        """Ids of the schedules changed at or after ``since``, by any process."""
        return await self.store.changed_since(since)

    async def get(self, schedule_id: int) -> Schedule | None:
        row = await self.store.get(schedule_id)
        return None if row is None else self._readable(row)

    async def mark_handled(self, marks: Sequence[tuple[int, datetime]]) -> None:
        await self.store.mark_handled(marks)

    @staticmethod
    def _readable(row: ScheduleRow) -> Schedule | None:
        try:
            return _schedule(row)
        except (ScheduleError, ValueError, KeyError) as exc:
            log.error(
                "schedule %d has a stored spec that no longer parses (%s): %s",
                row.id,
                exc,
                row.spec,
            )
            return None

    # --- commands ----------------------------------------------------------------------------

    def require_admin(self, ctx: ChatContext) -> None:
        """Raise :class:`Forbidden` unless ``ctx`` may change schedules."""
        if not ctx.is_admin:
            raise Forbidden(_FORBIDDEN)

    @audited("schedule add")
    async def add(self, ctx: ChatContext, form: ScheduleForm) -> ScheduleReply:
        """Add a schedule to the caller's channel (admins); the form's zone defaults to the
        workspace's."""
        self.require_admin(ctx)
        workspace, channel = await self._where(ctx)
        spec = _checked(form, workspace.timezone)
        await self._check_filters(channel, spec)
        now = self._clock.now()
        others = [
            other
            for other in map(self._readable, await self.store.in_channel(channel.id))
            if other is not None
        ]
        where = f"#{ctx.channel_name or _channel_name(channel)}"
        twin = next((o for o in others if encode_spec(o.spec) == encode_spec(spec)), None)
        if twin is not None:
            raise BadInput(
                f"{where} already has this schedule: #{twin.id} ({spec.describe()}). Nothing "
                f"was added; `schedule list` shows this channel's schedules."
            )
        member = await self._directory.member(workspace, ctx.member, ctx.member_name, now)
        row = await self.store.create(
            channel_id=channel.id,
            spec=encode_spec(spec),
            created_by=member.id,
            now=now,
            limit=MAX_SCHEDULES_PER_CHANNEL,
        )
        if row is None:
            raise BadInput(
                f"This channel already has {MAX_SCHEDULES_PER_CHANNEL} schedules; remove one "
                "first (`schedule list` shows their ids)."
            )
        schedule = _schedule(row)
        self.changed(schedule.id)
        log.info("schedule %d added in channel %d: %s", schedule.id, channel.id, spec.describe())
        text = (
            f"✅ Schedule **#{schedule.id}** added in {where}: {spec.describe()}.\n"
            f"First question: {_next_text(schedule, now)}."
        )
        zone_warning = timezone_warning(spec.timezone)
        if zone_warning is not None:
            text += f"\n⚠️ {zone_warning}."
        close = _posting_together(spec, [o for o in others if not o.paused], now)
        if close is not None:
            other, moment = close
            text += (
                f"\n⚠️ It posts within a minute of schedule #{other.id} "
                f"({local_text(spec, moment)}): two questions at once. "
                f"`schedule remove {schedule.id}` if that was not meant."
            )
        return _reply(text, tone=Tone.SUCCESS)

    async def _check_filters(self, channel: ChannelRow, spec: ScheduleSpec) -> None:
        """Refuse a schedule that could never post: an unknown pack, or filters nothing
        matches (better now, to the admin, than a silent skip every morning)."""
        if spec.pack is not None and not self._catalogue.has(spec.pack):
            close = self._catalogue.closest(spec.pack)
            hint = f" — did you mean {close}?" if close else "; see `pack list`"
            raise BadInput(
                str(ScheduleError("pack", f"no pack called {spec.pack!r}{hint}")), field="pack"
            )
        found = await self._catalogue.candidates(
            channel.id,
            pack=spec.pack,
            difficulty=spec.difficulty,
            tags=spec.tags,
            kinds=spec.posted_kinds,
        )
        if not found:
            wanted = [f"pack {spec.pack}" if spec.pack else "", spec.difficulty or ""]
            wanted += [f"tag {t}" for t in spec.tags]
            wanted += [f"kinds {', '.join(spec.posted_kinds)}"]
            raise BadInput(
                str(
                    ScheduleError(
                        "filters",
                        f"no questions match {', '.join(w for w in wanted if w)}",
                        example="/schedule add 09:00 --pack pytorch-dynamic-graphs "
                        "--difficulty medium",
                    )
                ),
                field="filters",
            )

    async def draft_times(
        self, ctx: ChatContext, form: ScheduleForm, count: int = PREVIEW_DEFAULT
    ) -> ScheduleTimes:
        """When a schedule not yet added would post, ``count`` times in its own zone (admins):
        the form's preview, checked by the same rules as :meth:`add` (the error names the
        field), nothing stored."""
        self.require_admin(ctx)
        _check_count(count)
        workspace, channel = await self._where(ctx)
        spec = _checked(form, workspace.timezone)
        await self._check_filters(channel, spec)
        now = self._clock.now()
        zone = ZoneInfo(spec.timezone)
        return ScheduleTimes(
            0,
            _channel_name(channel),
            None,
            tuple(t.astimezone(zone) for t in occurrences(spec, now, count)),
            tuple(preview(spec, now, count)),
        )

    async def channel_schedules(self, ctx: ChatContext, count: int = 1) -> ChannelSchedules:
        """The caller's channel's schedules, each with its next ``count`` posting times
        (everyone): what ``schedule list`` shows and what an admin page lists."""
        _check_count(count)
        _, channel = await self._where(ctx)
        now = self._clock.now()
        found = tuple(
            _times(row.id, self._readable(row), _channel_name(channel), now, count)
            for row in await self.store.in_channel(channel.id)
        )
        return ChannelSchedules(ctx.channel_name or channel.name or ctx.channel, found)

    async def workspace_schedules(self, ctx: ChatContext, count: int = 1) -> list[ScheduleTimes]:
        """Every schedule of the caller's workspace, each with its next ``count`` posting
        times (admins' App Home, an admin page)."""
        _check_count(count)
        workspace = await self._places.workspace(ctx)
        now = self._clock.now()
        found = []
        for row in await self.store.in_workspace(workspace.id):
            owner = await self._directory.channel_by_id(row.channel_id)
            found.append(_times(row.id, self._readable(row), _channel_name(owner), now, count))
        return found

    async def list(self, ctx: ChatContext) -> ScheduleReply:
        """The caller's channel's schedules and when each posts next (everyone)."""
        return ScheduleReply(schedules_message(await self.channel_schedules(ctx)))

    @audited("schedule edit")
    async def edit(
        self,
        ctx: ChatContext,
        schedule_id: int,
        form: ScheduleForm,
        *,
        channel: str | None = None,
    ) -> ScheduleReply:
        """Change a schedule's time, days and filters (admins), with ``add``'s rules; it keeps
        its number, its pause and its history, and posts by the new rule from now on."""
        self.require_admin(ctx)
        schedule = await self._named_row(ctx, schedule_id, channel, "edit")
        posts_in = await self._directory.channel_by_id(schedule.channel_id)
        workspace = await self._directory.workspace_by_id(posts_in.workspace_id)
        spec = _checked(form, workspace.timezone)
        await self._check_filters(posts_in, spec)
        others = [
            other
            for other in map(self._readable, await self.store.in_channel(posts_in.id))
            if other is not None and other.id != schedule.id
        ]
        if any(encode_spec(o.spec) == encode_spec(spec) for o in others):
            raise BadInput(f"{await self._in(posts_in.id)} already has this schedule.")
        now = self._clock.now()
        row = await self.store.set_spec(schedule.id, encode_spec(spec), now)
        if row is None:
            raise _not_found(schedule.id)
        self.changed(schedule.id)
        edited = _schedule(row)
        return _reply(
            f"✏️ Schedule **#{schedule.id}** in {await self._in(posts_in.id)} is now "
            f"{spec.describe()}. Next question: {_next_text(edited, now)}.",
            tone=Tone.SUCCESS,
        )

    @audited("schedule remove")
    async def remove(
        self, ctx: ChatContext, schedule_id: int, *, channel: str | None = None
    ) -> ScheduleReply:
        """Remove a schedule (admins). ``channel`` names another channel's schedule."""
        self.require_admin(ctx)
        # by row, not parsed: a schedule whose stored spec no longer reads can still go
        schedule = await self._named_row(ctx, schedule_id, channel, "remove")
        now = self._clock.now()
        if not await self.store.delete(schedule.id, now):
            raise _not_found(schedule.id)
        self.changed(schedule.id)
        log.info("schedule %d removed", schedule.id)
        where = await self._in(schedule.channel_id)
        text = f"🗑️ Schedule **#{schedule.id}** in {where} removed; it will not post again."
        latest = await self._posts.latest_of_schedule(schedule.id)
        if latest is not None:
            post = await self._posts.get(latest)
            if post is not None and post.is_open and post.closes_at is None:
                text += " Its open question stays open until an admin reveals it."
        return _reply(text)

    @audited("schedule pause")
    async def pause(
        self, ctx: ChatContext, schedule_id: int, *, channel: str | None = None
    ) -> ScheduleReply:
        """Pause a schedule until it is resumed (admins)."""
        self.require_admin(ctx)
        schedule = await self._named(ctx, schedule_id, channel, "pause")
        row = await self.store.set_paused(schedule.id, True, self._clock.now())
        if row is None:
            raise _not_found(schedule.id)
        self.changed(schedule.id)
        return _reply(
            f"⏸️ Schedule **#{schedule.id}** in {await self._in(schedule.channel_id)} paused: "
            f"nothing posts until `schedule resume {schedule.id}`."
        )

    @audited("schedule resume")
    async def resume(
        self, ctx: ChatContext, schedule_id: int, *, channel: str | None = None
    ) -> ScheduleReply:
        """Resume a paused schedule (admins); the paused days are not made up."""
        self.require_admin(ctx)
        schedule = await self._named(ctx, schedule_id, channel, "resume")
        now = self._clock.now()
        row = await self.store.set_paused(schedule.id, False, now)
        if row is None:
            raise _not_found(schedule.id)
        self.changed(schedule.id)
        resumed = _schedule(row)
        return _reply(
            f"▶️ Schedule **#{schedule.id}** in {await self._in(schedule.channel_id)} resumed "
            "(the days it was paused are not made up). "
            f"Next question: {_next_text(resumed, now)}.",
            tone=Tone.SUCCESS,
        )

    @audited("schedule skip")
    async def skip(
        self, ctx: ChatContext, schedule_id: int, *, channel: str | None = None
    ) -> ScheduleReply:
        """Skip a schedule's next occurrence (admins)."""
        self.require_admin(ctx)
        schedule = await self._named(ctx, schedule_id, channel, "skip")
        now = self._clock.now()
        skipped = schedule.next_after(now)
        row = await self.store.skip_until(schedule.id, skipped, now)
        if row is None:
            raise _not_found(schedule.id)
        self.changed(schedule.id)
        updated = _schedule(row)
        tz = schedule.spec.timezone
        return _reply(
            f"⏭️ Schedule **#{schedule.id}** in {await self._in(schedule.channel_id)} skips "
            f"{local_text(schedule.spec, skipped)} ({tz}). "
            f"Next question: {_next_text(updated, now)}."
        )

    @audited("schedule now")
    async def now(
        self, ctx: ChatContext, schedule_id: int, *, channel: str | None = None
    ) -> ScheduleReply:
        """Post a question from a schedule now (admins); the reply carries the draft."""
        self.require_admin(ctx)
        schedule = await self._named(ctx, schedule_id, channel, "now")
        posts_in = await self._directory.channel_by_id(schedule.channel_id)
        workspace = await self._directory.workspace_by_id(posts_in.workspace_id)
        spec = schedule.spec
        now = self._clock.now()
        draft = await self._posting.post_in(
            workspace,
            posts_in,
            pack=spec.pack,
            difficulty=spec.difficulty,
            tags=spec.tags,
            kinds=spec.posted_kinds,
            closes_at=None if spec.window is None else now + spec.window,
            schedule_id=schedule.id,
            mention=spec.mention,
            timezone=spec.timezone,
        )
        assert draft is not None  # no occurrence key: an extra post, not an occurrence
        # "Until the next question": this one is the next, so the previous one closes now.
        superseded = await self._posts.open_until_next(schedule.id, draft.post.id)
        await self._posts.set_closes_at([p.id for p in superseded], now)
        self.changed(schedule.id)
        log.info("schedule %d posted now (post %d)", schedule.id, draft.post.id)
        return ScheduleReply(
            _reply(
                f"📨 Posting a question from schedule **#{schedule.id}** in "
                f"#{_channel_name(posts_in)} now."
            ).message,
            draft=draft,
        )

    async def upcoming(
        self,
        ctx: ChatContext,
        schedule_id: int,
        count: int = PREVIEW_DEFAULT,
        *,
        channel: str | None = None,
    ) -> ScheduleTimes:
        """A schedule of the caller's channel (or of the named ``channel``) with its next
        ``count`` posting times, in its own zone (everyone); a paused one's are the times once
        resumed."""
        _check_count(count)
        schedule = await self._named(ctx, schedule_id, channel, "preview")
        owner = await self._directory.channel_by_id(schedule.channel_id)
        return _times(schedule.id, schedule, _channel_name(owner), self._clock.now(), count)

    async def preview(
        self,
        ctx: ChatContext,
        schedule_id: int,
        count: int = PREVIEW_DEFAULT,
        *,
        channel: str | None = None,
    ) -> ScheduleReply:
        """When a schedule posts next, ``count`` times, in its own zone (everyone)."""
        return ScheduleReply(
            preview_message(await self.upcoming(ctx, schedule_id, count, channel=channel))
        )

    # --- helpers -----------------------------------------------------------------------------

    async def _where(self, ctx: ChatContext) -> tuple[WorkspaceRow, ChannelRow]:
        return await self._places.channel(ctx)

    async def _named(
        self, ctx: ChatContext, schedule_id: int, named: str | None, verb: str
    ) -> Schedule:
        """The schedule ``schedule_id``, checked to belong to the caller's workspace."""
        row = await self._named_row(ctx, schedule_id, named, verb)
        schedule = self._readable(row)
        if schedule is None:
            raise BadInput(
                f"Schedule #{row.id} cannot be read any more; remove it "
                f"(`schedule remove {row.id}`) and add it again."
            )
        return schedule

    async def _named_row(
        self, ctx: ChatContext, schedule_id: int, named: str | None, verb: str
    ) -> ScheduleRow:
        """The stored row ``schedule_id`` in the caller's channel, parsed or not.

        Ids are numbered across the workspace, but an id typed in one channel must not act on
        another channel's schedule by accident (``remove 1`` in #torch-help once removed
        #general's daily question). A schedule of another channel is refused unless that
        channel is named with ``--channel NAME``.
        """
        row = await self.store.get(schedule_id)
        workspace, here = await self._where(ctx)
        if row is None or row.workspace_id != workspace.id:
            raise _not_found(schedule_id)
        if row.channel_id != here.id:
            owner = await self._directory.channel_by_id(row.channel_id)
            label = _channel_name(owner)
            if named is None or named.lstrip("#").casefold() not in {
                label.casefold(),
                owner.external_id.casefold(),
            }:
                raise BadInput(
                    f"Schedule #{schedule_id} posts in #{label}, not in this channel. Run "
                    f"`schedule {verb} {schedule_id}` in #{label}, or name that channel: "
                    f"`schedule {verb} {schedule_id} --channel {label}`."
                )
        return row

    async def _in(self, channel_id: int) -> str:
        """``#name`` of a schedule's channel, for replies that say what they affected."""
        return f"#{_channel_name(await self._directory.channel_by_id(channel_id))}"


NEAR_SECONDS = 60
"""Schedules of one channel that post this close together get a warning when added."""
NEAR_LOOKAHEAD = 14
"""How many coming occurrences of each are compared."""


def _posting_together(
    spec: ScheduleSpec, others: Sequence[Schedule], now: datetime
) -> tuple[Schedule, datetime] | None:
    """Another schedule that posts within :data:`NEAR_SECONDS` of ``spec``, and when."""
    mine = occurrences(spec, now, NEAR_LOOKAHEAD)
    for other in others:
        theirs = occurrences(other.spec, max(other.after, now), NEAR_LOOKAHEAD)
        for moment in mine:
            if any(abs((moment - t).total_seconds()) < NEAR_SECONDS for t in theirs):
                return other, moment
    return None


def _checked(form: ScheduleForm, default_timezone: str) -> ScheduleSpec:
    """The form's spec, or the chat's error for it, naming the field that is wrong."""
    try:
        return form.spec(default_timezone)
    except ScheduleError as exc:
        raise BadInput(str(exc), field=exc.field) from None


def _channel_name(channel: ChannelRow) -> str:
    return channel.name or channel.external_id


def _not_found(schedule_id: int) -> NotFound:
    return NotFound(f"There is no schedule #{schedule_id} here; `schedule list` shows the ids.")


def _reply(text: str, *, tone: Tone = Tone.INFO) -> ScheduleReply:
    return ScheduleReply(Message(sections=(Section(body=text),), ephemeral=True, tone=tone))


def _next_text(schedule: Schedule, now: datetime) -> str:
    """When it posts next, as the channel reads it (DST shifts explained), or ``paused``."""
    if schedule.paused:
        return "paused"
    return preview(schedule.spec, max(schedule.after, now), 1)[0]


def local_text(spec: ScheduleSpec, moment: datetime) -> str:
    """An instant as the channel reads it: ``Mon 2026-03-30 09:00 CEST``."""
    local = moment.astimezone(ZoneInfo(spec.timezone))
    return f"{local:%a %Y-%m-%d %H:%M} {local.tzname()}"
