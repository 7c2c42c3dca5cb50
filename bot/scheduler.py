"""The one timer loop of a process, for every kind of timed work.

It sleeps until the soonest time any due source (:mod:`bot.core.timer`) has work -- an
occurrence of some schedule, the end of an answer window, a re-send, a weekly recap, a review
reminder, a live round's next step -- raced against an :class:`asyncio.Event` that commands set
(through the :class:`~bot.core.wakeup.Wakeup` signal), then runs every source that is due, in
the order they were added, and goes back to sleep. Nothing polls, so an idle loop costs no CPU,
and no feature runs a loop of its own: timed work is a due source handed to
:meth:`Scheduler.add_source`, built beside its feature in :mod:`bot.services`. Started once at
start-up by :mod:`bot.app` (never from a platform's "ready" event, which fires again on every
reconnect).

This module imports no feature service and no store (an import-linter contract keeps it so):
it knows the clock, the sources, the wake-up signal, the knobs it is given (the
:class:`~bot.core.lanes.Lanes` that serve many channels at once, ``sync_every``) and logging.

Durability comes from the database, not from this loop's memory, and is the sources' to keep.
The scheduled questions' (:mod:`bot.services.scheduled_sources`):

- The post row of an occurrence is inserted *before* the question is sent, keyed
  ``UNIQUE(schedule_id, occurrence)``: a restart, a reconnect or a second process cannot post
  the same occurrence twice (:mod:`bot.services.scheduled_posts`).
- ``schedules.handled_until`` records how far each schedule got, so a restart resumes there;
  after downtime only the latest missed occurrence is posted, and only within the grace window
  (:func:`bot.services.schedule_book.catch_up`) (:mod:`bot.services.schedule_source`).
- Posts whose send was never confirmed are re-sent once or closed, on the first pass and, with
  several processes, once their lease ran out (:mod:`bot.services.scheduled_resends`); answer
  windows end in reveals (:mod:`bot.services.scheduled_reveals`).

Several processes (PostgreSQL; or `studybot web` beside the bot on SQLite, which runs no loop):
each runs this loop for the workspaces its gateway serves. Every ``sync_every`` the loop calls
each :class:`~bot.core.timer.Syncs` source's ``sync`` (the schedules other processes changed,
the posts of a process that died mid-send) and then runs every source, since another process
may have changed any plan. Two processes due at the same occurrence race on its row; the loser
leaves it to the winner.

Many at once: at 09:00 thousands of channels may be due together. The loop's
:class:`~bot.core.lanes.Lanes` serve up to ``concurrency`` channels at once, each channel's
steps in order (the console uses one lane, so a scripted session prints the same lines every
time); a :class:`~bot.core.timer.Prepares` source wakes the loop a little ahead of a large batch
to get it ready. See docs/BENCHMARKS.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime, timedelta

from bot.core.clock import Clock, SimulatedClock
from bot.core.lanes import Lanes
from bot.core.timer import DueSource, Prepares, Starts, Syncs
from bot.core.wakeup import Wakeup
from bot.log import get_logger

__all__ = ["SYNC_EVERY", "Scheduler"]

log = get_logger(__name__)

_FAILED_PASS_DELAY = timedelta(minutes=1)
SYNC_EVERY = timedelta(seconds=5)
"""Several processes: how often the loop looks for other processes' changes and dead claims."""
_STOP_TIMEOUT = 3.0  # seconds a stopping scheduler may spend finishing sends in flight


class Scheduler:
    """Runs every due source on time, in the order they were added.

    ``lanes`` serve many channels at once when much falls due together (its concurrency is the
    knob: the console uses 1 so a scripted session prints the same thing every time); the
    loop stops them on :meth:`stop`. ``sync_every``: several processes share the database.
    ``next_post``: when the next scheduled question posts (the console shows it).
    """

    def __init__(
        self,
        clock: Clock,
        wakeup: Wakeup,
        *,
        lanes: Lanes | None = None,
        sync_every: timedelta | None = None,
        next_post: Callable[[], datetime | None] | None = None,
    ) -> None:
        self.clock = clock
        self.wakeup = wakeup
        self.lanes = lanes if lanes is not None else Lanes()
        self._sync_every = sync_every
        self._next_post = next_post
        self._next_sync: datetime | None = None
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._started: list[Starts] = []
        self._first_pass = True
        self._failed_until: datetime | None = None
        self._passes_started = 0
        self._passes_done = 0
        self._pass_done = asyncio.Event()
        self.loaded_in: float | None = None  # seconds start() took to start the sources
        self._sources: list[DueSource] = []
        self._sources_stale = False  # a source's plan changed: ask every source again

    def add_source(self, source: DueSource) -> None:
        """Timed work (see :mod:`bot.core.timer`); asked at the next pass, after the sources
        added before it. Add sources before :meth:`start` if they must load first."""
        self._sources.append(source)
        self._wake.set()

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the sources that load and listen, then the loop (once per process)."""
        if self._task is not None:
            raise RuntimeError("the scheduler is already running")
        began = time.perf_counter()
        try:
            for source in self._sources:
                if isinstance(source, Starts):
                    await source.start()
                    self._started.append(source)
        except BaseException:
            self._stop_sources()
            raise
        self.wakeup.listen(self._changed)
        self.wakeup.listen_timing(self._timing_changed)
        self.loaded_in = time.perf_counter() - began
        self._task = asyncio.create_task(self._run(), name="scheduler")

    async def stop(self) -> None:
        """Stop after the sends in flight finish (a bounded wait), so shutdown does not
        itself cause a crash mid-send."""
        task = self._task
        if task is None:
            return
        self.lanes.stop()
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
            self._stop_sources()
            self.wakeup.unlisten(self._changed)
            self.wakeup.unlisten_timing(self._timing_changed)
            self._task = None

    def _stop_sources(self) -> None:
        started, self._started = self._started, []
        for source in started:
            source.stop()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Scheduler]:
        await self.start()
        try:
            yield self
        finally:
            await self.stop()

    def is_stopping(self) -> bool:
        return self.lanes.is_stopping()

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
        self._wake.set()  # the sources that plan from it listen too, and say when they are due

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
        candidates = [self._next_sync]
        candidates += [source.next_due() for source in self._sources]
        found = [c for c in candidates if c is not None]
        return min(found) if found else None

    def next_post(self) -> datetime | None:
        """When the next scheduled question posts, as this loop knows its schedules: what a
        change made through another process shows up in once the loop has looked."""
        return None if self._next_post is None else self._next_post()

    async def advance(self, clock: SimulatedClock, target: datetime) -> None:
        """Move a simulated clock to ``target`` as if the bot had been running all along:
        stop at each due time in order and let the scheduler handle it before going on.

        (Jumping straight there would look like downtime, and the grace rule would skip
        what fell due on the way.)
        """
        await self.settle()
        while (due := self.next_due()) is not None and due <= target:
            if due <= clock.now():
                if self._wake.is_set() or self._passes_started > self._passes_done:
                    # A change during the last pass (a round's question with a window, say)
                    # left a source due at once: let the pass it woke run, then step on.
                    await self.settle()
                    continue
                break  # nothing left to step to (a failed pass waits for its retry)
            clock.set(due)
            await self.settle()
        if target > clock.now():
            clock.set(target)
        await self.settle()

    # --- the loop ----------------------------------------------------------------------------

    async def _run(self) -> None:
        while not self.is_stopping():
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
            if self.is_stopping() or self._wake.is_set():
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
        """Everything due at ``now``: on a sync, every source's look at other processes'
        changes first; then each source whose time has come (all of them when a plan changed
        or on a sync), in the order they were added; then any preparation ahead."""
        syncing = self._next_sync is not None and now >= self._next_sync
        if syncing:
            for source in self._sources:
                if isinstance(source, Syncs):
                    await source.sync(now)
            self._sources_stale = True  # another process may have changed a source's plan
        await self._run_sources(now)
        if (self._first_pass or syncing) and self._sync_every is not None:
            self._next_sync = now + self._sync_every
        self._first_pass = False
        for source in self._sources:
            if isinstance(source, Prepares):
                await source.prepare(now)

    async def _run_sources(self, now: datetime) -> None:
        """Every due source whose time has come (all of them when a plan changed)."""
        stale, self._sources_stale = self._sources_stale, False
        for source in self._sources:
            due = source.next_due()
            if stale or (due is not None and due <= now):
                await source.run_due(now)

    def _next_wake(self, now: datetime) -> datetime | None:
        """:meth:`next_due`, or earlier if a source prepares a large batch first."""
        wake = self.next_due()
        for source in self._sources:
            if isinstance(source, Prepares):
                at = source.prepare_at(now)
                if at is not None and at > now and (wake is None or at < wake):
                    wake = at
        return wake
