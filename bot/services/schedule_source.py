"""The schedules as a due source of the timer loop: post each schedule's occurrences on time.

It keeps the :class:`~bot.services.timetable.Timetable` of the schedules this process serves and
is due at its top. At the due instant the batch is handed to
:class:`~bot.services.scheduled_posts.ScheduledPosts` (which occurrence posts is
:func:`~bot.services.scheduled_posts.plan_due`; a ``--round`` schedule starts a live round),
``schedules.handled_until`` records how far each got, and the reveals' source reads its plan
again (the new posts' windows).

Why it is built the way it is:

- Commands tell it which schedule changed (the wake-up signal): it re-reads just those before
  its next run. With several processes, :meth:`ScheduleSource.sync` (every ``sync_every``)
  queues those other processes changed, with a little overlap (clocks differ).
- At 09:00 thousands of channels may be due together, so a due batch is handled ``_BATCH``
  occurrences at a time in a few set-based statements, with WAL checkpoints held until the
  batch is out; a batch of at least ``prepare_min`` has its questions picked ``prepare_lead``
  ahead (:meth:`ScheduleSource.prepare`).
- One process's loop serves a schedule book: a second one is refused at start.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta

from bot.core.clock import Clock
from bot.core.gateway import ChatGateway, WorkspaceOwner
from bot.core.lanes import Lanes, call
from bot.core.schedule_spec import next_occurrence
from bot.log import get_logger
from bot.services.schedule_book import Schedule, ScheduleBook
from bot.services.scheduled_posts import Due, Prepared, ScheduledPosts, plan_due, serves_channel
from bot.services.timetable import Entry, Timetable
from bot.storage.database import Database
from bot.storage.directory import Directory

__all__ = ["PREPARE_LEAD", "PREPARE_MIN", "ScheduleSource"]

log = get_logger(__name__)

_NOW = datetime.min.replace(tzinfo=UTC)  # "due at once": changed schedules to re-read
_SYNC_OVERLAP = timedelta(seconds=30)  # re-read a little before the last look: clock skew
_BATCH = 500  # occurrences picked, inserted and sent together
PREPARE_LEAD = timedelta(seconds=10)
"""How long before a large batch falls due its questions are picked."""
PREPARE_MIN = 50
"""A batch this large is worth preparing (at 09:00, thousands of channels may be due)."""


class ScheduleSource:
    """A :class:`~bot.core.timer.DueSource` (also :class:`~bot.core.timer.Starts`,
    :class:`~bot.core.timer.Syncs` and :class:`~bot.core.timer.Prepares`) for the schedules."""

    name = "schedules"

    def __init__(
        self,
        *,
        db: Database,
        directory: Directory,
        schedules: ScheduleBook,
        posts: ScheduledPosts,
        gateway: ChatGateway,
        clock: Clock,
        grace: timedelta,
        lanes: Lanes,
        replan_reveals: Callable[[], None],
        refresh_reveals: Callable[[], Awaitable[None]],
        prepare_lead: timedelta = PREPARE_LEAD,
        prepare_min: int = PREPARE_MIN,
    ) -> None:
        self._db = db
        self._directory = directory
        self._schedules = schedules
        self._posts = posts
        self._gateway = gateway
        self._clock = clock
        self._grace = grace
        self._lanes = lanes
        self._replan_reveals = replan_reveals  # a change may have created or closed a window
        self._refresh_reveals = refresh_reveals  # after a batch: the new posts' windows
        self._prepare_lead = prepare_lead
        self._prepare_min = max(1, prepare_min)
        self._prepared: Prepared | None = None
        self._timetable = Timetable()
        self._pending: set[int] = set()
        self._marks: list[tuple[int, datetime]] = []
        self._synced_at: datetime | None = None

    # --- life with the loop ------------------------------------------------------------------

    async def start(self) -> None:
        """Listen for schedule changes and load every active schedule this process serves."""
        if self._schedules.listened:
            raise RuntimeError("another scheduler already serves this service")
        self._schedules.listen(self._changed)
        began = time.perf_counter()
        self._synced_at = self._clock.now()
        schedules = await self._served(await self._schedules.active())
        for schedule in schedules:
            self._timetable.put(schedule)
        log.info(
            "scheduler started: %d schedule(s) loaded in %.0f ms, grace %s",
            len(schedules),
            (time.perf_counter() - began) * 1000,
            self._grace,
        )

    def stop(self) -> None:
        self._schedules.unlisten(self._changed)

    def _changed(self, schedule_id: int | None) -> None:
        if schedule_id is not None:
            self._pending.add(schedule_id)
        self._replan_reveals()

    def next_due(self) -> datetime | None:
        return _NOW if self._pending else self._timetable.top()

    def next_post(self) -> datetime | None:
        """When the next scheduled question posts, as far as this process knows."""
        return self._timetable.top()

    async def sync(self, now: datetime) -> None:
        """Several processes: queue the schedules that changed since the last look, wherever
        the command that changed them was handled (a little overlap: clocks differ)."""
        since = (self._synced_at or now) - _SYNC_OVERLAP
        self._synced_at = now
        self._pending.update(await self._schedules.changed_since(since))

    # --- a run -------------------------------------------------------------------------------

    async def run_due(self, now: datetime) -> None:
        """Re-read changed schedules, post every occurrence due at ``now`` and record how far
        each schedule got; then the reveals' source re-reads its plan."""
        await self._reload()
        await self._post_due(now)
        marks, self._marks = self._marks, []
        await self._schedules.mark_handled(marks)
        await self._refresh_reveals()

    async def _served(self, schedules: Sequence[Schedule]) -> list[Schedule]:
        """The schedules of the workspaces this process serves (all, unless sharded)."""
        if not isinstance(self._gateway, WorkspaceOwner):
            return list(schedules)
        return [
            s
            for s in schedules
            if await serves_channel(self._gateway, self._directory, s.channel_id)
        ]

    async def _reload(self) -> None:
        """Re-read the schedules that commands changed since the last run."""
        if not self._pending:
            return
        ids, self._pending = sorted(self._pending), set()
        try:
            found = await self._schedules.many(ids)
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

    async def _post_due(self, now: datetime) -> None:
        """Every schedule due at ``now``, in batches: at 09:00 thousands of channels may be
        due together, and one query or transaction per batch (not per post) is what keeps
        them all within a second."""
        due = self._timetable.pop_due(now)
        held = (
            self._db.checkpoints_held()
            if len(due) >= self._prepare_min
            else contextlib.nullcontext()
        )
        stopping = self._lanes.is_stopping
        async with held:
            for start in range(0, len(due), _BATCH):
                chunk = due[start : start + _BATCH]
                plans = [plan for entry in chunk if (plan := self._plan(entry, now)) is not None]
                try:
                    work = await self._posts.post_batch(plans, now, self._prepared, stopping)
                    if work is None:
                        return  # stopping before anything was inserted: they stay due
                    await self._lanes.per_channel(work, call)
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
            entry.schedule, entry.after, entry.due, entry.following, now, self._grace
        )
        return due

    # --- ahead of a large batch --------------------------------------------------------------

    def prepare_at(self, now: datetime) -> datetime | None:
        """When to wake to prepare the next batch: ``prepare_lead`` before it, if it is large
        and not prepared yet."""
        top = self._timetable.top()
        if top is None or (self._prepared is not None and self._prepared.due == top):
            return None
        at = top - self._prepare_lead
        if at <= now or self._timetable.batch_size(top) < self._prepare_min:
            return None
        return at

    async def prepare(self, now: datetime) -> None:
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
        self._prepared = await self._posts.prepare(top, [e.schedule for e in entries])
