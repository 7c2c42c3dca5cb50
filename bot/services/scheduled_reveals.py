"""Answer windows ending, as a due source of the timer loop: the reveals of scheduled and
``/quiz`` posts whose windows closed.

It is due at the soonest ``closes_at`` of an open post. That time is read again whenever it may
have moved: after each run, when a command created a post with a window (the wake-up signal, through
:meth:`RevealSource.replan`),
after the schedules' source posted a batch (:meth:`RevealSource.refresh`), and at every sync
(another process's posts). Reveals that came due while the bot was down happen on the first
pass, before anything new is posted.
"""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.lanes import Lanes, call
from bot.services.scheduled_posts import ScheduledPosts
from bot.storage.posts import PostStore

__all__ = ["RevealSource"]

_NOW = datetime.min.replace(tzinfo=UTC)  # "due at once": the plan must be read again


class RevealSource:
    """A :class:`~bot.core.timer.DueSource`: reveal each channel's posts whose windows ended."""

    name = "reveals"

    def __init__(self, posts: ScheduledPosts, store: PostStore, lanes: Lanes) -> None:
        self._posts = posts
        self._store = store
        self._lanes = lanes
        self._next: datetime | None = _NOW  # look at the start: reveals due while down

    def replan(self) -> None:
        """A post with a window was created, or a schedule changed: read the plan again (the
        schedules' source, which listens to the wake-up signal, says so)."""
        self._next = _NOW

    def next_due(self) -> datetime | None:
        return self._next

    async def run_due(self, now: datetime) -> None:
        self._next = _NOW  # a failure leaves it due: the loop retries the pass
        await self._lanes.per_channel(await self._posts.reveals_due(now), call)
        await self.refresh()

    async def refresh(self) -> None:
        """Read when the soonest open window ends (new posts may close sooner)."""
        self._next = await self._store.next_close()
