"""Posting scheduled occurrences durably: what the schedules' due sources hand each batch to.

The due sources (:mod:`bot.services.schedule_source`, :mod:`bot.services.scheduled_reveals`,
:mod:`bot.services.scheduled_resends`) decide *when*; this decides *what* and does it, with every
store it touches given to it: pick a question per occurrence by the no-repeat rule (from
questions picked ahead of a large batch where still valid), insert the post rows keyed
``UNIQUE(schedule_id, occurrence)`` before anything is sent, reveal the "until the next
question" predecessors, draft and send, and the crash-mid-send rule (``core/resend.py``
decides; this gathers its inputs and acts). A send that fails is retried once a minute later:
the retry table lives here and its due source asks :meth:`ScheduledPosts.next_retry` when
to wake.

The rules it keeps:

- Crash mid-send: a post row without a platform message id means the send was never confirmed.
  First the platform is asked whether the channel shows it after all (Discord: the channel's
  recent messages, matched by the post id in their buttons); if so, that message is adopted and
  nothing is sent. Otherwise it is re-sent **once** if it is still the schedule's latest post,
  its answer window is open and it is within the grace window; otherwise it is closed without a
  reveal. Where the platform cannot tell (Slack, without reading channel history), members
  would rather see the rare duplicate of the *same* post (its buttons carry the same post id,
  so every answer still counts once) than lose a day and everyone's streak. A send that fails
  while the bot runs is retried the same way a minute later.
- Windows: ``closes_at = occurrence + window``, so a late post keeps the schedule's rhythm (and a
  late post whose window is already over is not posted at all). "Until the next question": the
  schedule's previous open post is revealed just before the next one is sent. Reveals that came
  due while the bot was down happen at start-up.

Work for the chat platform comes back as one list of steps per channel, so the loop's lanes
(:class:`~bot.core.lanes.Lanes`) can serve
many channels at once while each channel's posts and reveals go out in order.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING

from bot.core.clock import Clock
from bot.core.gateway import ChatGateway, PostFinder, WorkspaceOwner, serves
from bot.core.lanes import Step
from bot.core.messages import Message
from bot.core.models import Post
from bot.core.resend import Unconfirmed, why_not_resend
from bot.core.schedule_spec import occurrence_key
from bot.log import get_logger
from bot.metrics import Metrics
from bot.services.posting import PostDraft, Posting
from bot.services.quiz import PostEdit, Quiz
from bot.services.rounds import Rounds
from bot.services.schedule_book import MIN_GRACE, Schedule, ScheduleBook, catch_up, local_text
from bot.storage.directory import ChannelRow, Directory, WorkspaceRow
from bot.storage.packs import Candidate, PackStore
from bot.storage.posts import NewScheduledPost, PostStore, ScheduledPost

__all__ = [
    "RESEND_DELAY",
    "Due",
    "Prepared",
    "ScheduledPosts",
    "Step",
    "plan_due",
    "serves_channel",
]

if TYPE_CHECKING:  # only the type is named here
    from bot.services.exams import Exams
    from bot.services.extra_time import ExtraTime

log = get_logger(__name__)

RESEND_DELAY = timedelta(minutes=1)
"""How long after a failed send the post is tried again (once)."""


# A plan's filters (pack, difficulty, tags, kinds) and whether its channel needs every candidate.
_Filters = tuple[str | None, str | None, tuple[str, ...], tuple[str, ...], bool]


@dataclass(frozen=True, slots=True)
class Due:
    """One occurrence to post now."""

    schedule: Schedule
    occurrence: datetime
    key: str  # occurrence_key(occurrence), the UNIQUE key of its post row
    closes_at: datetime | None


@dataclass(frozen=True, slots=True)
class Prepared:
    """Questions picked ahead of a large batch, valid for channels that get no other post
    before it is due (checked against the ``watermark``, the newest post id at the time)."""

    due: datetime
    watermark: int
    picks: dict[int, list[Candidate]]  # schedule id -> its channel's least-posted candidates


def plan_due(
    schedule: Schedule,
    after: datetime,
    first: datetime,
    following: datetime | None,
    now: datetime,
    grace: timedelta,
) -> tuple[Due | None, datetime | None]:
    """Which occurrence of a due schedule (if any) posts now, and when it is due next.

    :func:`~bot.services.schedule_book.catch_up` decides (never a burst after downtime); the
    occurrences it skips, and a late post, are logged here so an admin can see why.
    """
    spec = schedule.spec
    try:
        plan = catch_up(spec, after, now, grace, first=first, following=following)
    except ValueError:
        log.exception("schedule %d: cannot compute its occurrences", schedule.id)
        return None, None
    if plan.too_late_since is not None:
        log.info(
            "schedule %d: occurrences from %s on were missed by more than the %s grace "
            "window and are skipped",
            schedule.id,
            local_text(spec, plan.too_late_since),
            grace,
        )
    for skipped in plan.skipped:
        log.info(
            "schedule %d: missed occurrence %s skipped (a later one is due; never a burst)",
            schedule.id,
            local_text(spec, skipped),
        )
    if plan.post is None:
        return None, plan.upcoming
    occurrence = plan.post
    closes_at = None if spec.window is None else occurrence + spec.window
    if closes_at is not None and closes_at <= now:
        log.info(
            "schedule %d: occurrence %s skipped: its answer window ended while the bot was down",
            schedule.id,
            local_text(spec, occurrence),
        )
        return None, plan.upcoming
    if occurrence < now - MIN_GRACE:
        late = timedelta(seconds=round((now - occurrence).total_seconds()))
        log.info(
            "schedule %d: posting occurrence %s late (%s after it was due)",
            schedule.id,
            local_text(spec, occurrence),
            late,
        )
    return Due(schedule, occurrence, occurrence_key(occurrence), closes_at), plan.upcoming


async def serves_channel(gateway: ChatGateway, directory: Directory, channel_id: int) -> bool:
    """Whether this process serves the channel's workspace (always, unless sharded: see
    :class:`~bot.core.gateway.WorkspaceOwner`)."""
    if not isinstance(gateway, WorkspaceOwner):
        return True
    channel = await directory.channel_by_id(channel_id)
    workspace = await directory.workspace_by_id(channel.workspace_id)
    return serves(gateway, workspace.external_id)


class ScheduledPosts:
    # Set by the wiring: daily questions lean toward an exam's tags as it nears (None: never).
    exams: Exams | None = None
    # Set by the wiring: a window some member with extra time still needs is held open.
    extra_time: ExtraTime | None = None

    def __init__(
        self,
        *,
        directory: Directory,
        posts: PostStore,
        packs: PackStore,
        posting: Posting,
        quiz: Quiz,
        schedules: ScheduleBook,
        gateway: ChatGateway,
        clock: Clock,
        grace: timedelta,
        metrics: Metrics | None = None,
        lease: timedelta | None = None,
        rounds: Rounds | None = None,
    ) -> None:
        self._rounds = rounds  # a schedule with --round starts a live round instead
        # ``lease``: several processes share the database. A post row claims its occurrence
        # for this long; only after that may another process re-send an unconfirmed post.
        self._lease = lease
        self._directory = directory
        self._posts = posts
        self._packs = packs
        self._posting = posting
        self._quiz = quiz
        self._schedules = schedules
        self._gateway = gateway
        self._clock = clock
        self._grace = grace
        self._metrics = metrics
        self._retries: dict[int, tuple[datetime, int, str]] = {}  # post -> (at, schedule, occ)

    # --- a due batch -------------------------------------------------------------------------

    async def post_batch(
        self,
        plans: Sequence[Due],
        now: datetime,
        prepared: Prepared | None,
        stopping: Callable[[], bool],
    ) -> list[list[Step]] | None:
        """Pick, insert and reveal the until-next predecessors; the sends and reveals, per
        channel. ``None`` if ``stopping()`` said so before the rows were inserted (nothing
        happened, so the occurrences stay due). A round schedule's occurrence starts a live
        round instead (its round row is its claim, keyed by schedule and occurrence)."""
        rounds = [p for p in plans if p.schedule.spec.round is not None]
        if not rounds or self._rounds is None:
            return await self._post_questions(plans, now, prepared, stopping)
        questions = [p for p in plans if p.schedule.spec.round is None]
        work = await self._post_questions(questions, now, prepared, stopping) if questions else []
        if work is None or stopping():
            return work
        for plan in rounds:
            channel = await self._directory.channel_by_id(plan.schedule.channel_id)
            workspace = await self._directory.workspace_by_id(channel.workspace_id)
            hello = await self._rounds.start_scheduled(
                workspace, channel, plan.schedule, plan.key, now
            )
            if hello is not None:
                work.append([partial(self._announce, channel.external_id, hello)])
        return work

    async def _announce(self, channel: str, message: Message) -> None:
        await self._gateway.send_post(channel, message)

    async def _post_questions(
        self,
        plans: Sequence[Due],
        now: datetime,
        prepared: Prepared | None,
        stopping: Callable[[], bool],
    ) -> list[list[Step]] | None:
        where: dict[int, tuple[ChannelRow, WorkspaceRow]] = {}
        for plan in plans:
            channel = await self._directory.channel_by_id(plan.schedule.channel_id)
            where[channel.id] = (
                channel,
                await self._directory.workspace_by_id(channel.workspace_id),
            )
        rows, picked = await self._pick(plans, prepared)
        if stopping():
            return None
        posts = await self._posts.create_many(rows, now, lease_until=self._lease_from(now))
        created: list[tuple[Due, Post]] = []
        for plan, post in zip(picked, posts, strict=True):
            if post is None:
                await self._already_there(plan)
            else:
                created.append((plan, post))
        if not created:
            return []
        try:
            # "Until the next question": the open predecessors close now and are revealed just
            # before their successor is sent, in the same channel.
            new_ids = {post.id for _, post in created}
            until_next = [
                plan.schedule.id for plan, _ in created if plan.schedule.spec.window is None
            ]
            superseded = [
                p.id
                for p in await self._posts.open_until_next_many(until_next)
                if p.id not in new_ids
            ]
            work: dict[int, list[Step]] = {}
            for edit in await self._quiz.reveal_many(superseded):
                work.setdefault(edit.post.channel_id, []).append(partial(self.apply, edit))
            for plan, post in created:
                channel, workspace = where[post.channel_id]
                spec = plan.schedule.spec
                draft = await self._posting.draft(
                    post,
                    channel.external_id,
                    workspace,
                    mention=spec.mention,
                    timezone=spec.timezone,
                )
                work.setdefault(post.channel_id, []).append(
                    partial(self._send, draft, plan.schedule.id, plan.key)
                )
        except Exception:
            # The rows exist but nothing was sent: queue each for the resend path, so a bad
            # moment never costs a channel its day's question.
            log.exception(
                "preparing %d scheduled post(s) failed; retrying in %s", len(created), RESEND_DELAY
            )
            for plan, post in created:
                self._retries[post.id] = (now + RESEND_DELAY, plan.schedule.id, plan.key)
            return []
        return list(work.values())

    async def prepare(self, due: datetime, schedules: Sequence[Schedule]) -> Prepared:
        """Pick the questions of a large batch due at ``due`` ahead of time (and load its
        channels), so the due instant is not spent reading thousands of channels' history.
        Channels due more than once in the batch are left to the due instant."""
        began = time.perf_counter()
        watermark = await self._posts.last_id()  # before reading any history
        await self._directory.load_channels(s.channel_id for s in schedules)
        per_channel = Counter(s.channel_id for s in schedules)
        singles = [
            Due(s, due, occurrence_key(due), None)
            for s in schedules
            if per_channel[s.channel_id] == 1
        ]
        picks = await self._candidates(singles, set())
        log.info(
            "prepared %d question(s) due at %s in %.0f ms",
            len(picks),
            due.isoformat(),
            (time.perf_counter() - began) * 1000,
        )
        return Prepared(due, watermark, picks)

    async def _pick(
        self, plans: Sequence[Due], prepared: Prepared | None
    ) -> tuple[list[NewScheduledPost], list[Due]]:
        """One question per occurrence by the no-repeat rule, in order; a channel due twice
        in one batch does not get the same question twice."""
        per_channel = Counter(plan.schedule.channel_id for plan in plans)
        found: dict[int, list[Candidate]] = {}
        if prepared is not None:
            usable = [
                plan
                for plan in plans
                if plan.occurrence == prepared.due
                and plan.schedule.id in prepared.picks
                and per_channel[plan.schedule.channel_id] == 1
            ]
            if usable:
                stale = await self._posts.channels_posted_since(prepared.watermark)
                for plan in usable:
                    if plan.schedule.channel_id not in stale:
                        found[plan.schedule.id] = prepared.picks[plan.schedule.id]
        rest = [plan for plan in plans if plan.schedule.id not in found]
        multi = {channel for channel, count in per_channel.items() if count > 1}
        found.update(await self._candidates(rest, multi))
        if self.exams is not None:
            await self._lean_to_exams(plans, found)
        picks = self._posting.pick_batch(
            [(plan.schedule.id, plan.schedule.channel_id) for plan in plans], found
        )
        rows: list[NewScheduledPost] = []
        picked: list[Due] = []
        for plan in plans:
            schedule = plan.schedule
            version = picks.get(schedule.id)
            if version is None:  # e.g. the pack was removed since the schedule was added
                log.warning(
                    "schedule %d: occurrence %s not posted: no questions match its filters (%s)",
                    schedule.id,
                    local_text(schedule.spec, plan.occurrence),
                    schedule.spec.describe(),
                )
                continue
            rows.append(
                NewScheduledPost(
                    channel_id=schedule.channel_id,
                    version_id=version,
                    schedule_id=schedule.id,
                    occurrence=plan.key,
                    closes_at=plan.closes_at,
                )
            )
            picked.append(plan)
        return rows, picked

    async def _lean_to_exams(self, plans: Sequence[Due], found: dict[int, list[Candidate]]) -> None:
        """As an exam nears, some occurrences draw from the exam's questions only (see
        :meth:`bot.services.exams.Exams.lean`): every live candidate is read for those, not
        just the least-posted, so the exam's own least-posted question is the pick."""
        assert self.exams is not None
        for plan in plans:
            schedule = plan.schedule
            if schedule.id not in found:
                continue
            workspace = await self._directory.workspace_by_id(schedule.workspace_id)
            spec = schedule.spec
            every = await self._packs.candidates_many(
                [schedule.channel_id],
                pack=spec.pack,
                difficulty=spec.difficulty,
                tags=spec.tags,
                kinds=spec.posted_kinds,
                fewest_only=False,
            )
            chosen = await self.exams.lean(
                workspace,
                schedule.channel_id,
                f"{schedule.id}:{plan.key}",
                every.get(schedule.channel_id, []),
            )
            if chosen is not None:
                found[schedule.id] = chosen

    async def _candidates(
        self, plans: Sequence[Due], multi: set[int]
    ) -> dict[int, list[Candidate]]:
        """Each plan's candidates, one query per filter set: just the least-posted ones,
        except for channels in ``multi`` (due more than once), which need every one."""
        groups: dict[_Filters, list[Due]] = {}
        for plan in plans:
            spec = plan.schedule.spec
            every = plan.schedule.channel_id in multi
            key = (spec.pack, spec.difficulty, spec.tags, spec.posted_kinds, every)
            groups.setdefault(key, []).append(plan)
        found: dict[int, list[Candidate]] = {}
        for (pack, difficulty, tags, kinds, every), group in groups.items():
            by_channel = await self._packs.candidates_many(
                [plan.schedule.channel_id for plan in group],
                pack=pack,
                difficulty=difficulty,
                tags=tags,
                kinds=kinds,
                fewest_only=not every,
            )
            for plan in group:
                if (candidates := by_channel.get(plan.schedule.channel_id)) is not None:
                    found[plan.schedule.id] = candidates
        return found

    async def _already_there(self, plan: Due) -> None:
        """The occurrence has its row already: posted before a restart, or by another
        process. If it was never confirmed as sent, the re-send rule decides."""
        existing = await self._posts.by_occurrence(plan.schedule.id, plan.key)
        if existing is not None and existing.post.platform_message_id is None:
            await self.resend(existing, self._clock.now())

    async def _send(self, draft: PostDraft, schedule_id: int, occurrence: str) -> None:
        try:
            message_id = await self._gateway.send_post(draft.channel, draft.message)
        except Exception:
            log.exception(
                "sending post %d (schedule %d) to channel %s failed; it is tried once more in %s",
                draft.post.id,
                schedule_id,
                draft.channel,
                RESEND_DELAY,
            )
            self._retries[draft.post.id] = (
                self._clock.now() + RESEND_DELAY,
                schedule_id,
                occurrence,
            )
            return
        await self._posting.attach_message(draft.post.id, message_id)
        if self._metrics is not None:
            self._metrics.posts.labels(origin="scheduled").inc()
            due = datetime.fromisoformat(occurrence)
            lag = max(0.0, (self._clock.now() - due).total_seconds())
            self._metrics.scheduler_lag.observe(lag)

    # --- unconfirmed sends -------------------------------------------------------------------

    def _lease_from(self, now: datetime) -> datetime | None:
        return None if self._lease is None else now + self._lease

    async def unconfirmed(self, now: datetime) -> list[list[ScheduledPost]]:
        """Posts a process inserted but never confirmed, per channel: at start-up, those of
        the previous run; with several processes, those whose lease ran out before ``now``
        (their process died), checked every few seconds.

        A crash in the 09:00 burst can leave hundreds, in as many channels: served like a
        burst, several channels at once, each channel's posts in order.
        """
        by_channel: dict[int, list[ScheduledPost]] = {}
        for item in await self._posts.unsent_scheduled(now):
            by_channel.setdefault(item.post.channel_id, []).append(item)
        return list(by_channel.values())

    def next_retry(self) -> datetime | None:
        """When the soonest failed send is tried again (None: none waits)."""
        return min((at for at, _, _ in self._retries.values()), default=None)

    async def retry_due(self, now: datetime) -> None:
        for post_id, (at, schedule_id, occurrence) in list(self._retries.items()):
            if at > now:
                continue
            del self._retries[post_id]
            item = await self._posts.by_occurrence(schedule_id, occurrence)
            if item is not None and item.post.platform_message_id is None:
                await self.resend(item, now)

    async def resend(self, item: ScheduledPost, now: datetime) -> None:
        """The crash-mid-send rule (``core/resend.py`` decides; this gathers its inputs, then
        re-sends once or closes the post quietly)."""
        post = item.post
        assert post.schedule_id is not None
        if not post.is_open:
            return
        occurrence = datetime.fromisoformat(item.occurrence.replace("Z", "+00:00"))
        schedule = await self._schedules.get(post.schedule_id)
        latest = await self._posts.latest_of_schedule(post.schedule_id)
        unconfirmed = Unconfirmed(
            occurrence=occurrence,
            resent=item.resent,
            schedule_exists=schedule is not None,
            is_latest=latest == post.id,
            closes_at=post.closes_at,
        )
        reason = why_not_resend(unconfirmed, now, self._grace)
        if reason is not None:
            await self._close_quietly(post, reason)
            return
        assert schedule is not None
        # Only now ask the platform (a network call): a post that would not be re-sent anyway
        # is settled by the database alone.
        channel = await self._directory.channel_by_id(post.channel_id)
        shown = await self._shown_already(channel.external_id, post.id)
        if shown is not None:
            log.info("post %d shows in its channel after all (message %s)", post.id, shown)
            await self._posting.attach_message(post.id, shown)
            return
        if not await self._posts.claim_resend(post.id, now, self._lease_from(now)):
            return
        log.warning(
            "re-sending post %d (schedule %d, occurrence %s) once: its first send was never "
            "confirmed",
            post.id,
            post.schedule_id,
            item.occurrence,
        )
        workspace = await self._directory.workspace_by_id(channel.workspace_id)
        draft = await self._posting.draft(
            post,
            channel.external_id,
            workspace,
            mention=schedule.spec.mention,
            timezone=schedule.spec.timezone,
        )
        try:
            message_id = await self._gateway.send_post(draft.channel, draft.message)
        except Exception:
            log.exception("re-sending post %d failed; it is not tried again", post.id)
            await self._close_quietly(post, "the re-send failed too")
            return
        await self._posting.attach_message(post.id, message_id)

    async def _shown_already(self, channel: str, post_id: int) -> str | None:
        """The message of a post whose send was never confirmed, if the platform shows it."""
        if not isinstance(self._gateway, PostFinder):
            return None
        try:
            return await self._gateway.find_post(channel, post_id)
        except Exception:
            log.warning("cannot tell whether post %d shows already", post_id, exc_info=True)
            return None

    async def _close_quietly(self, post: Post, reason: str) -> None:
        log.warning(
            "post %d (schedule %s) was never confirmed as sent and is not re-sent: %s; "
            "closed without a reveal",
            post.id,
            post.schedule_id,
            reason,
        )
        await self._posts.close(post.id, self._clock.now())

    # --- reveals -----------------------------------------------------------------------------

    async def reveals_due(self, now: datetime) -> list[list[Step]]:
        """The reveals whose answer windows ended by ``now``, per channel."""
        due = await self._posts.due_to_close(now)
        if self.extra_time is not None:
            due = await self.extra_time.hold(due, now)
        if not due:
            return []
        work: dict[int, list[Step]] = {}
        for edit in await self._quiz.reveal_many([post.id for post in due]):
            work.setdefault(edit.post.channel_id, []).append(partial(self.apply, edit))
        return list(work.values())

    async def apply(self, edit: PostEdit) -> None:
        if edit.message_id is None and edit.post.schedule_id is not None:
            log.info("post %d closed without a reveal: it was never sent", edit.post.id)
            return
        try:
            await self._quiz.apply_edit(edit, self._gateway)
        except Exception:
            log.exception("revealing post %d in channel %s failed", edit.post.id, edit.channel)
