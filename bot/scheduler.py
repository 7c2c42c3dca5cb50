"""The durable scheduler: the one timer loop of a process, for every kind of timed work.

It sleeps until the soonest thing due -- an occurrence of some schedule, the end of an answer
window, a re-send, or the next time of a due source (weekly recaps, review reminders: see
:mod:`bot.core.timer`) -- raced against an :class:`asyncio.Event` that commands set (through
the services' :class:`~bot.services.wakeup.Wakeup`), then handles everything due and goes back
to sleep. Nothing polls, so an idle scheduler costs no CPU, and no feature runs a loop of its
own: new timed work is a due source handed to :meth:`Scheduler.add_source`. Started once at
start-up by :mod:`bot.app` (never from a platform's "ready" event, which fires again on every
reconnect).

Durability comes from the database, not from this loop's memory:

- The post row of an occurrence is inserted *before* the question is sent, keyed
  ``UNIQUE(schedule_id, occurrence)``: a restart, a reconnect or a second process cannot post
  the same occurrence twice.
- ``schedules.handled_until`` records how far each schedule got, so a restart resumes there.
- After downtime only the latest missed occurrence is posted, and only within the grace window
  (:func:`bot.services.schedule_book.catch_up`); the others are skipped with a log line.
- What a due batch does, and the crash-mid-send and answer-window rules, are
  :mod:`bot.services.scheduled_posts`; which occurrence of a due schedule posts is its
  :func:`~bot.services.scheduled_posts.plan_due`; the timetable is
  :mod:`bot.services.timetable`. This module is the loop: when, and how many at once.

Several processes (PostgreSQL; or `studybot web` beside the bot on SQLite, which runs no loop):
each runs this loop for the workspaces its gateway serves
(:class:`~bot.core.gateway.WorkspaceOwner`: a Discord shard range; Slack replicas serve all).
Every ``sync_every`` the loop also re-reads the schedules other processes changed, and re-sends
the posts of a process that died mid-send once their lease has run out. Two processes due at
the same occurrence race on its row; the loser leaves it to the winner.

Many at once: at 09:00 thousands of channels may be due together, so a due batch is handled in
a few set-based statements (one candidates query per filter set, one insert, one close), with
sends confirmed by group commit and WAL checkpoints held until the batch is out. A large batch
is also prepared ten seconds ahead (channels loaded, questions picked); at the due instant only
channels that got another post in between are picked for again. See docs/BENCHMARKS.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import TypeVar

from bot.core.clock import Clock, SimulatedClock
from bot.core.gateway import ChatGateway, WorkspaceOwner, serves
from bot.core.schedule_spec import next_occurrence
from bot.core.timer import DueSource
from bot.log import get_logger
from bot.metrics import Metrics
from bot.services.posting import Posting
from bot.services.quiz import Quiz
from bot.services.rounds import Rounds
from bot.services.schedule_book import MIN_GRACE, Schedule, ScheduleBook
from bot.services.scheduled_posts import RESEND_DELAY, Due, Prepared, ScheduledPosts, plan_due
from bot.services.timetable import Entry, Timetable
from bot.services.wakeup import Wakeup
from bot.storage.database import Database
from bot.storage.directory import Directory
from bot.storage.packs import PackStore
from bot.storage.posts import PostStore

__all__ = [
    "LEASE",
    "PREPARE_LEAD",
    "PREPARE_MIN",
    "RESEND_DELAY",
    "SYNC_EVERY",
    "Scheduler",
    "SchedulerParts",
]  # RESEND_DELAY: re-export

log = get_logger(__name__)

_FAILED_PASS_DELAY = timedelta(minutes=1)
_SYNC_OVERLAP = timedelta(seconds=30)  # re-read a little before the last look: clock skew
LEASE = timedelta(seconds=45)
"""Several processes: how long a post row's claim holds (under RESEND_DELAY, so a process's
own retry of a failed send finds its lease expired)."""
SYNC_EVERY = timedelta(seconds=5)
"""Several processes: how often the loop looks for other processes' changes and dead claims."""
_BATCH = 500  # occurrences picked, inserted and sent together
PREPARE_LEAD = timedelta(seconds=10)
"""How long before a large batch falls due the scheduler picks its questions."""
PREPARE_MIN = 50
"""A batch this large is worth preparing (at 09:00, thousands of channels may be due)."""
_STOP_TIMEOUT = 3.0  # seconds a stopping scheduler may spend finishing sends in flight
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SchedulerParts:
    """Exactly what the loop uses, handed to it by :mod:`bot.app`: the schedules, the posts
    and their reveals, the stores a due batch reads and writes, and the wake-up signal."""

    db: Database
    directory: Directory
    posts: PostStore
    packs: PackStore
    posting: Posting
    quiz: Quiz
    schedules: ScheduleBook
    wakeup: Wakeup
    metrics: Metrics | None = None
    rounds: Rounds | None = None  # a schedule with --round starts one


class Scheduler:
    """Posts every schedule's questions on time, and reveals them when their windows end.

    ``concurrency`` is how many channels are served at once when many posts fall due
    together (each channel's own posts always go out in order); the console uses 1 so that
    a scripted session prints the same thing every time. A batch of at least
    ``prepare_min`` occurrences due at one instant has its questions picked
    ``prepare_lead`` ahead (the part of posting that reads each channel's history), so that
    at the due instant only inserting, rendering and sending remain.
    """

    def __init__(
        self,
        parts: SchedulerParts,
        gateway: ChatGateway,
        clock: Clock,
        grace: timedelta,
        *,
        concurrency: int = 16,
        prepare_lead: timedelta = PREPARE_LEAD,
        prepare_min: int = PREPARE_MIN,
        lease: timedelta | None = None,
        sync_every: timedelta | None = None,
    ) -> None:
        self.parts = parts
        self.gateway = gateway
        self.clock = clock
        self.grace = max(grace, MIN_GRACE)
        # What each due batch is handed to: picking, inserting, sending, re-sending, reveals.
        self.posts = ScheduledPosts(
            directory=parts.directory,
            posts=parts.posts,
            packs=parts.packs,
            posting=parts.posting,
            quiz=parts.quiz,
            schedules=parts.schedules,
            gateway=gateway,
            clock=clock,
            grace=self.grace,
            metrics=parts.metrics,
            lease=lease,
            rounds=parts.rounds,
        )
        self._sharded = isinstance(gateway, WorkspaceOwner)  # else: every workspace is ours
        self._sync_every = sync_every
        self._next_sync: datetime | None = None
        self._synced_at: datetime | None = None
        self._concurrency = max(1, concurrency)
        self._prepare_lead = prepare_lead
        self._prepare_min = max(1, prepare_min)
        self._prepared: Prepared | None = None
        self._timetable = Timetable()
        self._pending: set[int] = set()
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
        self._sources: list[DueSource] = []
        self._sources_stale = False  # a source's plan changed: ask every source again

    def add_source(self, source: DueSource) -> None:
        """Timed work of another kind (see :mod:`bot.core.timer`); asked at the next pass."""
        self._sources.append(source)
        self._wake.set()

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Load every active schedule and start the loop (once per process)."""
        if self._task is not None:
            raise RuntimeError("the scheduler is already running")
        if self.parts.schedules.listened:
            raise RuntimeError("another scheduler already serves this service")
        self.parts.schedules.listen(self._changed)
        self.parts.wakeup.listen_timing(self._timing_changed)
        began = time.perf_counter()
        self._synced_at = self.clock.now()
        schedules = await self._served(await self.parts.schedules.active())
        for schedule in schedules:
            self._timetable.put(schedule)
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
            self.parts.schedules.unlisten(self._changed)
            self.parts.wakeup.unlisten_timing(self._timing_changed)
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

    def is_alive(self) -> bool:
        """The loop is running (the ``scheduler`` health check)."""
        return self._task is not None and not self._task.done()

    @property
    def passes(self) -> int:
        """How many passes have finished: an idle scheduler's count stays put."""
        return self._passes_done

    def wake(self) -> None:
        """Re-plan now (schedules changed, or something new may be due)."""
        self._wake.set()

    def _changed(self, schedule_id: int | None) -> None:
        if schedule_id is not None:
            self._pending.add(schedule_id)
        self._wake.set()

    def _timing_changed(self) -> None:
        self._sources_stale = True
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
        candidates = [self._next_close, self.posts.next_retry(), self._next_sync]
        candidates += [source.next_due() for source in self._sources]
        if (top := self._timetable.top()) is not None:
            candidates.append(top)
        found = [c for c in candidates if c is not None]
        return min(found) if found else None

    def next_post(self) -> datetime | None:
        """When the next scheduled question posts, as this loop knows its schedules: what a
        change made through another process shows up in once the loop has looked."""
        return self._timetable.top()

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
            wake_at = self._failed_until or self._next_wake(now)
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
        syncing = self._next_sync is not None and now >= self._next_sync
        if syncing:
            await self._sync(now)
            self._sources_stale = True  # another process may have changed a source's plan
        await self._reload()
        if self._first_pass or syncing:
            unconfirmed = await self.posts.unconfirmed(now)
            await self._per_channel(
                [
                    group
                    for group in unconfirmed
                    if await self._serves_channel(group[0].post.channel_id)
                ],
                partial(self.posts.resend, now=now),
            )
            self._first_pass = False
            if self._sync_every is not None:
                self._next_sync = now + self._sync_every
        await self._per_channel(await self.posts.reveals_due(now), _call)
        await self.posts.retry_due(now)
        await self._post_due(now)
        marks, self._marks = self._marks, []
        await self.parts.schedules.mark_handled(marks)
        self._next_close = await self.parts.posts.next_close()
        await self._run_sources(now)
        await self._prepare(now)

    async def _run_sources(self, now: datetime) -> None:
        """Every due source whose time has come (all of them when a plan changed), after the
        questions of this instant."""
        stale, self._sources_stale = self._sources_stale, False
        for source in self._sources:
            due = source.next_due()
            if stale or (due is not None and due <= now):
                await source.run_due(now)

    def _next_wake(self, now: datetime) -> datetime | None:
        """:meth:`next_due`, or earlier if a large batch should be prepared first."""
        wake = self.next_due()
        top = self._timetable.top()
        if top is None or (self._prepared is not None and self._prepared.due == top):
            return wake
        prepare_at = top - self._prepare_lead
        if prepare_at <= now or (wake is not None and prepare_at >= wake):
            return wake
        return prepare_at if self._timetable.batch_size(top) >= self._prepare_min else wake

    async def _prepare(self, now: datetime) -> None:
        """Pick the questions of the next large batch ahead of time (and load its channels),
        so the due instant is not spent reading thousands of channels' history."""
        top = self._timetable.top()
        if top is None or top <= now or top - now > self._prepare_lead:
            return
        if self._prepared is not None and self._prepared.due == top:
            return
        if self._timetable.batch_size(top) < self._prepare_min:
            return
        entries = self._timetable.due_at(top)
        for entry in entries:  # the pure part of planning, ahead of time too
            entry.following = next_occurrence(entry.schedule.spec, entry.due)
        self._prepared = await self.posts.prepare(top, [e.schedule for e in entries])

    # --- the plan ----------------------------------------------------------------------------

    async def _sync(self, now: datetime) -> None:
        """Several processes: queue the schedules that changed since the last look, wherever
        the command that changed them was handled (a little overlap: clocks differ)."""
        since = (self._synced_at or now) - _SYNC_OVERLAP
        self._synced_at = now
        self._pending.update(await self.parts.schedules.changed_since(since))

    async def _serves_channel(self, channel_id: int) -> bool:
        if not self._sharded:
            return True
        directory = self.parts.directory
        channel = await directory.channel_by_id(channel_id)
        workspace = await directory.workspace_by_id(channel.workspace_id)
        return serves(self.gateway, workspace.external_id)

    async def _served(self, schedules: Sequence[Schedule]) -> list[Schedule]:
        """The schedules of the workspaces this process serves (all, unless sharded)."""
        if not self._sharded:
            return list(schedules)
        return [s for s in schedules if await self._serves_channel(s.channel_id)]

    async def _reload(self) -> None:
        """Re-read the schedules that commands changed since the last pass."""
        if not self._pending:
            return
        ids, self._pending = sorted(self._pending), set()
        try:
            found = await self.parts.schedules.many(ids)
            served = {s.id for s in await self._served(list(found.values()))}
        except BaseException:
            self._pending.update(ids)  # keep the change notices for the next pass
            raise
        for schedule_id in ids:
            schedule = found.get(schedule_id)
            if schedule is None or schedule.paused or schedule_id not in served:
                self._timetable.drop(schedule_id)
            else:
                self._timetable.put(schedule)

    # --- posting -----------------------------------------------------------------------------

    async def _post_due(self, now: datetime) -> None:
        """Every schedule due at ``now``, in batches: at 09:00 thousands of channels may be
        due together, and one query or transaction per batch (not per post) is what keeps
        them all within a second."""
        due = self._timetable.pop_due(now)
        held = (
            self.parts.db.checkpoints_held()
            if len(due) >= self._prepare_min
            else contextlib.nullcontext()
        )
        async with held:
            for start in range(0, len(due), _BATCH):
                chunk = due[start : start + _BATCH]
                plans = [plan for entry in chunk if (plan := self._plan(entry, now)) is not None]
                try:
                    work = await self.posts.post_batch(plans, now, self._prepared, self.is_stopping)
                    if work is None:
                        return  # stopping before anything was inserted: they stay due
                    await self._per_channel(work, _call)
                except Exception:
                    log.exception("posting %d scheduled question(s) failed", len(plans))
                for entry in chunk:  # dealt with, whatever happened: never retried into a burst
                    self._done(entry, now)

    def _done(self, entry: Entry, now: datetime) -> None:
        schedule_id = entry.schedule.id
        self._marks.append((schedule_id, now))
        current = self._timetable.get(schedule_id)  # None if it was paused or removed meanwhile
        if current is not None:
            current.after = max(current.after, now)
            self._timetable.put(current.schedule, entry.upcoming if current is entry else None)

    def _plan(self, entry: Entry, now: datetime) -> Due | None:
        """Which occurrence of a due schedule (if any) posts now (see :func:`plan_due`)."""
        due, entry.upcoming = plan_due(
            entry.schedule, entry.after, entry.due, entry.following, now, self.grace
        )
        return due

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
                    try:
                        await work(item)
                    except Exception:  # one channel's failure must not stop the others
                        log.exception("a scheduled send or reveal failed")

        workers = min(self._concurrency, len(groups))
        if workers == 1:
            await worker()
            return
        await asyncio.gather(*(worker() for _ in range(workers)))


async def _call(thunk: Callable[[], Awaitable[None]]) -> None:
    await thunk()
