"""Re-sends of scheduled posts, as two due sources of the timer loop.

- :class:`ResendSource`: posts inserted but never confirmed as sent -- by the previous run (on
  the first pass) or, with several processes, by a process that died mid-send (their lease ran
  out; looked for at every sync). The crash-mid-send rule decides each
  (:meth:`~bot.services.scheduled_posts.ScheduledPosts.resend`).
- :class:`RetrySource`: a send that failed while the bot runs, tried once more a minute later
  (the retry table is :class:`~bot.services.scheduled_posts.ScheduledPosts`'s).

Two sources rather than one because members see them at different points of a pass: the
unconfirmed posts before any reveal, the retries after the reveals and before new posts.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial

from bot.core.gateway import ChatGateway
from bot.core.lanes import Lanes
from bot.services.scheduled_posts import ScheduledPosts, serves_channel
from bot.storage.directory import Directory

__all__ = ["ResendSource", "RetrySource"]

_NOW = datetime.min.replace(tzinfo=UTC)


class ResendSource:
    """A :class:`~bot.core.timer.DueSource`: unconfirmed posts of a previous run or of a dead
    process, served like a burst (several channels at once, each channel's posts in order)."""

    name = "unconfirmed re-sends"

    def __init__(
        self, posts: ScheduledPosts, directory: Directory, gateway: ChatGateway, lanes: Lanes
    ) -> None:
        self._posts = posts
        self._directory = directory
        self._gateway = gateway
        self._lanes = lanes
        self._look = True  # the first pass looks for the previous run's

    def next_due(self) -> datetime | None:
        return _NOW if self._look else None

    async def sync(self, now: datetime) -> None:
        """Several processes: look for posts whose lease ran out (their process died)."""
        self._look = True

    async def run_due(self, now: datetime) -> None:
        if not self._look:
            return
        unconfirmed = await self._posts.unconfirmed(now)
        await self._lanes.per_channel(
            [
                group
                for group in unconfirmed
                if await serves_channel(self._gateway, self._directory, group[0].post.channel_id)
            ],
            partial(self._posts.resend, now=now),
        )
        self._look = False


class RetrySource:
    """A :class:`~bot.core.timer.DueSource`: failed sends, each tried once more."""

    name = "retries of failed sends"

    def __init__(self, posts: ScheduledPosts) -> None:
        self._posts = posts

    def next_due(self) -> datetime | None:
        return self._posts.next_retry()

    async def run_due(self, now: datetime) -> None:
        await self._posts.retry_due(now)
