"""Extra time (an accommodation) on a posted question's answer window, as Canvas gives it.

When a daily or ``/quiz`` question's window ends while a member with extra time has not
answered, the reveal waits: the post stays open until the latest of their own deadlines (the
window times their factor). Everyone else's answers are refused from the usual end on, as
they would have been; the post closes as soon as every member with extra time has answered.
A live round keeps its own per-player deadlines (:mod:`bot.services.round_rules`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from bot.core.accommodations import own_close, own_deadline
from bot.core.errors import PostClosed
from bot.core.models import ChatContext, Post
from bot.core.wakeup import Wakeup
from bot.services.post_rules import MemberId, PostRules
from bot.storage.accommodations import AccommodationStore
from bot.storage.directory import Directory
from bot.storage.posts import PostStore

__all__ = ["ACTIVE_FOR", "TOO_LATE", "ExtraTime"]

#: A member with extra time holds a channel's questions open if they answered one there lately.
ACTIVE_FOR = timedelta(days=30)

TOO_LATE = "Too late: this question's answer window has closed, and your answer does not count."


class ExtraTime(PostRules):
    """Holds a posted question open for members with extra time; refuses others' late answers."""

    def __init__(
        self,
        posts: PostStore,
        accommodations: AccommodationStore,
        directory: Directory,
        wakeup: Wakeup | None = None,
    ) -> None:
        self._posts = posts
        self._accommodations = accommodations
        self._directory = directory
        self._wakeup = wakeup  # a window closed early re-plans the reveals

    async def hold(self, due: Sequence[Post], now: datetime) -> list[Post]:
        """Of the posts whose windows ended by ``now``, the ones to reveal now: a post some
        member with extra time has not answered is held open to their own deadline instead
        (once: a held post is revealed when that ends, or when they have all answered)."""
        if not due:
            return []
        extra = await self._accommodations.workspaces_with_extra_time()
        if not extra:
            return list(due)
        reveal: list[Post] = []
        for post in due:
            until = await self._held_until(post, extra)
            if until is None or until <= now:
                reveal.append(post)
            elif not await self._posts.extend(post, until):
                continue  # another process held (or closed) it: its next pass decides
        return reveal

    async def _held_until(self, post: Post, extra: frozenset[int]) -> datetime | None:
        if post.round_id is not None or post.window_ends_at is not None or post.closes_at is None:
            return None
        workspace_id = (await self._directory.channel_by_id(post.channel_id)).workspace_id
        if workspace_id not in extra:
            return None
        waiting = await self._waiting(workspace_id, post, post.closes_at)
        if not waiting:
            return None
        return own_deadline(post.posted_at, post.closes_at - post.posted_at, max(waiting.values()))

    async def _waiting(self, workspace_id: int, post: Post, now: datetime) -> dict[int, float]:
        """Who the post waits for: members with extra time who played in its channel in the
        last :data:`ACTIVE_FOR` (so one who never plays there holds nothing open)."""
        return await self._accommodations.waiting(
            workspace_id, post.id, post.channel_id, now - ACTIVE_FOR
        )

    async def admit(self, ctx: ChatContext, post: Post, member: MemberId, now: datetime) -> None:
        """Past the usual end of a held window, only a member with extra time still inside
        their own deadline may answer."""
        if post.round_id is not None or post.window_ends_at is None or now < post.window_ends_at:
            return
        given = await self._accommodations.of_member(await member())
        closes = own_close(post, 1.0 if given is None else given.time_factor)
        if closes is not None and now >= closes:
            raise PostClosed(TOO_LATE)

    async def after_answer(self, post: Post, member: MemberId, now: datetime) -> None:
        """A held window closes once every member with extra time has answered (at its usual
        end at the soonest): nobody waits for time nobody needs."""
        if post.round_id is not None or post.window_ends_at is None:
            return
        if post.closes_at is None or post.closes_at <= max(now, post.window_ends_at):
            return
        workspace_id = (await self._directory.channel_by_id(post.channel_id)).workspace_id
        if await self._waiting(workspace_id, post, now):
            return
        await self._posts.set_closes_at([post.id], max(now, post.window_ends_at))
        if self._wakeup is not None:
            self._wakeup.changed(None)  # the reveals read their plan again
