"""Which members saw a hint before answering: item analysis reports a question's hint use.

A :class:`PostRules` the quiz asks on every hint, so no kind of post forgets to record one;
the first view per member and post is kept (a second look changes nothing).
"""

from __future__ import annotations

from bot.core.clock import Clock
from bot.core.messages import Message
from bot.core.models import Post
from bot.services.post_rules import MemberId, PostRules
from bot.storage.item_stats import ItemStatsStore

__all__ = ["HintLog"]


class HintLog(PostRules):
    def __init__(self, store: ItemStatsStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    async def hint_taken(self, post: Post, member: MemberId, reply: Message) -> Message:
        await self._store.hint_shown(post.id, await member(), self._clock.now())
        return reply
