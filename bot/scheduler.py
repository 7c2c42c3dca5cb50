"""The durable scheduler: one loop per process that posts scheduled questions and reveals them.

It sleeps until the soonest thing due -- an occurrence of some schedule, the end of an answer
window, a re-send -- raced against an :class:`asyncio.Event` that schedule commands set (through
``service.schedules``), then handles everything due and goes back to sleep. Nothing polls, so an
idle scheduler costs no CPU. Started once at start-up by :mod:`bot.__main__` (never from a
platform's "ready" event, which fires again on every reconnect).

Durability comes from the database, not from this loop's memory:

- The post row of an occurrence is inserted *before* the question is sent, keyed
  ``UNIQUE(schedule_id, occurrence)``: a restart, a reconnect or a second process cannot post
  the same occurrence twice.
- ``schedules.handled_until`` records how far each schedule got, so a restart resumes there.
- After downtime only the latest missed occurrence is posted, and only within the grace window
  (:func:`bot.core.schedules.catch_up`); the others are skipped with a log line.
- Crash mid-send: a post row without a platform message id means the send was never confirmed.
  It is re-sent **once** if it is still the schedule's latest post, its answer window is open
  and it is within the grace window; otherwise it is closed without a reveal. Members would
  rather see the rare duplicate of the *same* post (its buttons carry the same post id, so every
  answer still counts once) than lose a day and everyone's streak. A send that fails while the
  bot runs is retried the same way a minute later.
- Windows: ``closes_at = occurrence + window``, so a late post keeps the schedule's rhythm (and a
  late post whose window is already over is not posted at all). "Until the next question": the
  schedule's previous open post is revealed just before the next one is sent. Reveals that came
  due while the bot was down happen at start-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar
from zoneinfo import ZoneInfo

from bot.core.clock import Clock, SimulatedClock
from bot.core.errors import NotFound, PostClosed, StudyError
from bot.core.gateway import ChatGateway
from bot.core.models import Post
from bot.core.schedule import ScheduleSpec, next_occurrence, occurrence_key
from bot.core.schedules import MIN_GRACE, Schedule, catch_up
from bot.core.service import PostDraft, StudyService
from bot.log import get_logger
from bot.storage.posts import ScheduledPost

__all__ = ["RESEND_DELAY", "Scheduler"]

log = get_logger(__name__)

RESEND_DELAY = timedelta(minutes=1)
"""How long after a failed send the post is tried again (once)."""
_FAILED_PASS_DELAY = timedelta(minutes=1)
_STOP_TIMEOUT = 10.0  # seconds a stopping scheduler may spend finishing sends in flight
T = TypeVar("T")


@dataclass(slots=True)
class _Entry:
    """A schedule the loop is watching: its spec, where it got to, and when it is due."""

    schedule: Schedule
    after: datetime  # every occurrence at or before this has been dealt with
    due: datetime
    version: int


class Scheduler:
    """Posts every schedule's questions on time, and reveals them when their windows end.

    ``concurrency`` is how many channels are served at once when many posts fall due
    together (each channel's own posts always go out in order); the console uses 1 so that
    a scripted session prints the same thing every time.
    """

    def __init__(
        self,
        service: StudyService,
        gateway: ChatGateway,
        clock: Clock,
        grace: timedelta,
        *,
        concurrency: int = 16,
    ) -> None:
        self.service = service
        self.gateway = gateway
        self.clock = clock
        self.grace = max(grace, MIN_GRACE)
        self._concurrency = max(1, concurrency)
        self._entries: dict[int, _Entry] = {}
        self._heap: list[tuple[datetime, int, int]] = []  # (due, schedule id, version)
        self._versions = itertools.count()
        self._pending: set[int] = set()
        self._retries: dict[int, tuple[datetime, int, str]] = {}  # post -> (at, schedule, occ)
        self._next_close: datetime | None = None
        self._marks: list[tuple[int, datetime]] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._first_pass = True
        self._failed_until: datetime | None = None
        self._passes_started = 0
        self._passes_done = 0
        self._pass_done = asyncio.Event()
        self.loaded_in: float | None = None  # seconds start() took to load the schedules

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Load every active schedule and start the loop (once per process)."""
        if self._task is not None:
            raise RuntimeError("the scheduler is already running")
        if self.service.schedules.listened:
            raise RuntimeError("another scheduler already serves this service")
        self.service.schedules.listen(self._changed)
        began = time.perf_counter()
        schedules = await self.service.schedules.active()
        for schedule in schedules:
            self._put(schedule)
        self.loaded_in = time.perf_counter() - began
        log.info(
            "scheduler started: %d schedule(s) loaded in %.0f ms, grace %s",
            len(schedules),
            self.loaded_in * 1000,
            self.grace,
        )
        self._task = asyncio.create_task(self._run(), name="scheduler")

    async def stop(self) -> None:
        """Stop after the sends in flight finish (a bounded wait), so shutdown does not
        itself cause a crash mid-send."""
        task = self._task
        if task is None:
            return
        self._stopping = True
        self._wake.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), _STOP_TIMEOUT)
        except TimeoutError:
            log.warning("scheduler did not finish within %.0f s; cancelling it", _STOP_TIMEOUT)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        except Exception:
            log.exception("the scheduler loop had failed")
        finally:
            self.service.schedules.unlisten(self._changed)
            self._task = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Scheduler]:
        await self.start()
        try:
            yield self
        finally:
            await self.stop()

    def is_stopping(self) -> bool:
        return self._stopping

    def wake(self) -> None:
        """Re-plan now (schedules changed, or something new may be due)."""
        self._wake.set()

    def _changed(self, schedule_id: int | None) -> None:
        if schedule_id is not None:
            self._pending.add(schedule_id)
        self._wake.set()

    # --- for the console and tests -----------------------------------------------------------

    async def settle(self) -> None:
        """Return once a pass that began after this call has finished: everything due at the
        clock's current time (and every change made before the call) has been handled."""
        task = self._task
        if task is None:
            raise RuntimeError("the scheduler is not running")
        wanted = self._passes_started + 1
        self._wake.set()
        while self._passes_done < wanted:
            if task.done():
                task.result()  # re-raise what stopped the loop
                return
            done = asyncio.ensure_future(self._pass_done.wait())
            await asyncio.wait({done, task}, return_when=asyncio.FIRST_COMPLETED)
            done.cancel()

    def next_due(self) -> datetime | None:
        """When the loop next has something to do (as of its last pass)."""
        candidates = [self._next_close, *(at for at, _, _ in self._retries.values())]
        if (top := self._top()) is not None:
            candidates.append(top)
        found = [c for c in candidates if c is not None]
        return min(found) if found else None

    async def advance(self, clock: SimulatedClock, target: datetime) -> None:
        """Move a simulated clock to ``target`` as if the bot had been running all along:
        stop at each due time in order and let the scheduler handle it before going on.

        (Jumping straight there would look like downtime, and the grace rule would skip
        what fell due on the way.)
        """
        await self.settle()
        while (due := self.next_due()) is not None and due <= target:
            if due <= clock.now():
                break  # nothing left to step to (a failed pass waits for its retry)
            clock.set(due)
            await self.settle()
        if target > clock.now():
            clock.set(target)
        await self.settle()

    # --- the loop ----------------------------------------------------------------------------

    async def _run(self) -> None:
        while not self._stopping:
            self._wake.clear()
            self._passes_started += 1
            now = self.clock.now()
            try:
                await self._pass(now)
                self._failed_until = None
            except Exception:
                log.exception("scheduler pass failed; trying again in a minute")
                self._failed_until = now + _FAILED_PASS_DELAY
            self._passes_done = self._passes_started
            self._pass_done.set()
            self._pass_done = asyncio.Event()
            if self._stopping or self._wake.is_set():
                continue
            wake_at = self._failed_until or self.next_due()
            if wake_at is not None and wake_at <= self.clock.now():
                continue
            await self._sleep(wake_at)

    async def _sleep(self, until: datetime | None) -> None:
        """Sleep until ``until`` (forever if None) or until woken, whichever comes first."""
        waiters: set[asyncio.Future[object]] = {asyncio.ensure_future(self._wake.wait())}
        if until is not None:
            waiters.add(asyncio.ensure_future(self.clock.sleep_until(until)))
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()

    async def _pass(self, now: datetime) -> None:
        """Everything due at ``now``, in the order members should see it: reveals first, then
        re-sends, then new posts (each reveals its until-next predecessor just before)."""
        await self._reload()
        if self._first_pass:
            await self._resend_unconfirmed(now)
            self._first_pass = False
        await self._reveal_due(now)
        await self._retry_due(now)
        await self._post_due(now)
        marks, self._marks = self._marks, []
        await self.service.schedules.mark_handled(marks)
        self._next_close = await self.service.posts.next_close()

    # --- the plan ----------------------------------------------------------------------------

    def _put(self, schedule: Schedule) -> None:
        previous = self._entries.get(schedule.id)
        after = schedule.after if previous is None else max(schedule.after, previous.after)
        try:
            due = next_occurrence(schedule.spec, after)
        except ValueError:
            log.exception("schedule %d: cannot compute its next occurrence", schedule.id)
            self._entries.pop(schedule.id, None)
            return
        entry = _Entry(schedule, after, due, next(self._versions))
        self._entries[schedule.id] = entry
        heapq.heappush(self._heap, (due, schedule.id, entry.version))

    def _top(self) -> datetime | None:
        """The soonest valid occurrence (stale heap items are dropped on the way)."""
        while self._heap:
            due, schedule_id, version = self._heap[0]
            entry = self._entries.get(schedule_id)
            if entry is not None and entry.version == version:
                return due
            heapq.heappop(self._heap)
        return None

    async def _reload(self) -> None:
        """Re-read the schedules that commands changed since the last pass."""
        if not self._pending:
            return
        ids, self._pending = sorted(self._pending), set()
        found = await self.service.schedules.many(ids)
        for schedule_id in ids:
            schedule = found.get(schedule_id)
            if schedule is None or schedule.paused:
                self._entries.pop(schedule_id, None)  # its heap items go stale
            else:
                self._put(schedule)

    # --- posting -----------------------------------------------------------------------------

    async def _post_due(self, now: datetime) -> None:
        due: list[_Entry] = []
        while (top := self._top()) is not None and top <= now:
            _, schedule_id, _ = heapq.heappop(self._heap)
            due.append(self._entries[schedule_id])
        if not due:
            return
        by_channel: dict[int, list[_Entry]] = {}
        for entry in due:  # heap order: by due time, then schedule id
            by_channel.setdefault(entry.schedule.channel_id, []).append(entry)
        await self._per_channel(list(by_channel.values()), lambda e: self._handle(e, now))

    async def _handle(self, entry: _Entry, now: datetime) -> None:
        schedule_id = entry.schedule.id
        try:
            await self._occurrences(entry, now)
        except Exception:
            log.exception("schedule %d: posting failed", schedule_id)
        # Every occurrence up to now is dealt with, whatever happened to it: never retried
        # into a burst later.
        self._marks.append((schedule_id, now))
        current = self._entries.get(schedule_id)  # None if it was paused or removed meanwhile
        if current is not None:
            current.after = max(current.after, now)
            self._put(current.schedule)

    async def _occurrences(self, entry: _Entry, now: datetime) -> None:
        schedule, spec = entry.schedule, entry.schedule.spec
        plan = catch_up(spec, entry.after, now, self.grace)
        if plan.too_late_since is not None:
            log.info(
                "schedule %d: occurrences from %s on were missed by more than the %s grace "
                "window and are skipped",
                schedule.id,
                _local(spec, plan.too_late_since),
                self.grace,
            )
        for skipped in plan.skipped:
            log.info(
                "schedule %d: missed occurrence %s skipped (a later one is due; never a burst)",
                schedule.id,
                _local(spec, skipped),
            )
        if plan.post is None:
            return
        occurrence = plan.post
        closes_at = None if spec.window is None else occurrence + spec.window
        if closes_at is not None and closes_at <= now:
            log.info(
                "schedule %d: occurrence %s skipped: its answer window ended while the bot was "
                "down",
                schedule.id,
                _local(spec, occurrence),
            )
            return
        if occurrence < now - MIN_GRACE:
            log.info(
                "schedule %d: posting occurrence %s late (%s after it was due)",
                schedule.id,
                _local(spec, occurrence),
                _round(now - occurrence),
            )
        await self._post_occurrence(schedule, occurrence, closes_at)

    async def _post_occurrence(
        self, schedule: Schedule, occurrence: datetime, closes_at: datetime | None
    ) -> None:
        service, spec = self.service, schedule.spec
        channel = await service.directory.channel_by_id(schedule.channel_id)
        workspace = await service.directory.workspace_by_id(channel.workspace_id)
        key = occurrence_key(occurrence)
        try:
            draft = await service.post_in(
                workspace,
                channel,
                pack=spec.pack,
                difficulty=spec.difficulty,
                tags=spec.tags,
                closes_at=closes_at,
                schedule_id=schedule.id,
                occurrence=key,
                mention=spec.mention,
                timezone=spec.timezone,
            )
        except StudyError as exc:  # e.g. the pack was removed since the schedule was added
            log.warning(
                "schedule %d: occurrence %s not posted: %s",
                schedule.id,
                _local(spec, occurrence),
                exc,
            )
            return
        if draft is None:
            # The row exists: posted before a restart, or by another process. If it was never
            # confirmed as sent, the re-send rule decides.
            existing = await service.posts.by_occurrence(schedule.id, key)
            if existing is not None and existing.post.platform_message_id is None:
                await self._resend(existing, self.clock.now())
            return
        if spec.window is None:
            await self._close_superseded(schedule.id, draft.post.id)
        await self._send(draft, schedule.id, key)

    async def _send(self, draft: PostDraft, schedule_id: int, occurrence: str) -> None:
        try:
            message_id = await self.gateway.send_post(draft.channel, draft.message)
        except Exception:
            log.exception(
                "sending post %d (schedule %d) to channel %s failed; it is tried once more in %s",
                draft.post.id,
                schedule_id,
                draft.channel,
                RESEND_DELAY,
            )
            self._retries[draft.post.id] = (
                self.clock.now() + RESEND_DELAY,
                schedule_id,
                occurrence,
            )
            return
        await self.service.attach_message(draft.post.id, message_id)

    # --- unconfirmed sends -------------------------------------------------------------------

    async def _resend_unconfirmed(self, now: datetime) -> None:
        """At start-up: posts the previous process inserted but never confirmed as sent."""
        unconfirmed = await self.service.posts.unsent_scheduled()
        for item in unconfirmed:
            try:
                await self._resend(item, now)
            except Exception:
                log.exception("re-sending post %d failed", item.post.id)

    async def _retry_due(self, now: datetime) -> None:
        for post_id, (at, schedule_id, occurrence) in list(self._retries.items()):
            if at > now:
                continue
            del self._retries[post_id]
            item = await self.service.posts.by_occurrence(schedule_id, occurrence)
            if item is not None and item.post.platform_message_id is None:
                await self._resend(item, now)

    async def _resend(self, item: ScheduledPost, now: datetime) -> None:
        """The crash-mid-send rule: re-send an unconfirmed post once, while it still makes
        sense; otherwise close it quietly (a reveal of a question nobody saw helps no one)."""
        post = item.post
        assert post.schedule_id is not None
        if not post.is_open:
            return
        occurrence = datetime.fromisoformat(item.occurrence.replace("Z", "+00:00"))
        schedule = await self.service.schedules.get(post.schedule_id)
        latest = await self.service.posts.latest_of_schedule(post.schedule_id)
        reason = None
        if item.resent:
            reason = "it was re-sent once already"
        elif schedule is None:
            reason = "its schedule was removed"
        elif latest != post.id:
            reason = "a newer question of its schedule exists"
        elif now - occurrence > self.grace:
            reason = f"it is more than the {self.grace} grace window late"
        elif post.closes_at is not None and post.closes_at <= now:
            reason = "its answer window is over"
        if reason is not None:
            await self._close_quietly(post, reason)
            return
        assert schedule is not None
        if not await self.service.posts.claim_resend(post.id):
            return
        log.warning(
            "re-sending post %d (schedule %d, occurrence %s) once: its first send was never "
            "confirmed",
            post.id,
            post.schedule_id,
            item.occurrence,
        )
        channel = await self.service.directory.channel_by_id(post.channel_id)
        workspace = await self.service.directory.workspace_by_id(channel.workspace_id)
        draft = await self.service.draft(
            post,
            channel.external_id,
            workspace,
            mention=schedule.spec.mention,
            timezone=schedule.spec.timezone,
        )
        try:
            message_id = await self.gateway.send_post(draft.channel, draft.message)
        except Exception:
            log.exception("re-sending post %d failed; it is not tried again", post.id)
            await self._close_quietly(post, "the re-send failed too")
            return
        await self.service.attach_message(post.id, message_id)

    async def _close_quietly(self, post: Post, reason: str) -> None:
        log.warning(
            "post %d (schedule %s) was never confirmed as sent and is not re-sent: %s; "
            "closed without a reveal",
            post.id,
            post.schedule_id,
            reason,
        )
        await self.service.posts.close(post.id, self.clock.now())

    # --- reveals -----------------------------------------------------------------------------

    async def _reveal_due(self, now: datetime) -> None:
        due = await self.service.posts.due_to_close(now)
        if not due:
            return
        by_channel: dict[int, list[Post]] = {}
        for post in due:
            by_channel.setdefault(post.channel_id, []).append(post)
        await self._per_channel(list(by_channel.values()), self._reveal)

    async def _close_superseded(self, schedule_id: int, new_post_id: int) -> None:
        """ "Until the next question": reveal the schedule's older open posts first."""
        for post in await self.service.posts.open_until_next(schedule_id, new_post_id):
            await self._reveal(post)

    async def _reveal(self, post: Post) -> None:
        try:
            edit = await self.service.reveal(None, post.id)
        except (PostClosed, NotFound):
            return  # an admin revealed it first
        except Exception:
            log.exception("closing post %d failed", post.id)
            return
        if edit.message_id is None and post.schedule_id is not None:
            log.info("post %d closed without a reveal: it was never sent", post.id)
            return
        try:
            await self.service.apply_edit(edit, self.gateway)
        except Exception:
            log.exception("revealing post %d in channel %s failed", post.id, edit.channel)

    # --- fan-out -----------------------------------------------------------------------------

    async def _per_channel(
        self, groups: Sequence[Sequence[T]], work: Callable[[T], Awaitable[None]]
    ) -> None:
        """Run ``work`` over each channel's items in order, up to ``concurrency`` channels at
        once; a stopping scheduler starts nothing new but lets items in flight finish."""
        queue = list(reversed(groups))

        async def worker() -> None:
            while queue and not self.is_stopping():
                for item in queue.pop():
                    if self.is_stopping():
                        return
                    await work(item)

        workers = min(self._concurrency, len(groups))
        if workers == 1:
            await worker()
            return
        await asyncio.gather(*(worker() for _ in range(workers)))


def _local(spec: ScheduleSpec, moment: datetime) -> str:
    local = moment.astimezone(ZoneInfo(spec.timezone))
    return f"{local:%a %Y-%m-%d %H:%M} {local.tzname()}"


def _round(delta: timedelta) -> timedelta:
    return timedelta(seconds=round(delta.total_seconds()))
