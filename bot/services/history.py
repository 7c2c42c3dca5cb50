"""``/history`` and ``/question ID``: look at past questions after they close.

A member who missed a day, or wants the solution again, asks here instead of scrolling. Both
replies are private, and a question still open is shown without its answer (answer it where
it was posted): nothing here can spoil an open question or score a second time.
"""

from __future__ import annotations

from bot.core import cards
from bot.core.clock import Clock
from bot.core.errors import BadInput, NotFound
from bot.core.messages import Message
from bot.core.models import ChatContext
from bot.services.catalogue import Catalogue
from bot.services.places import Places
from bot.storage.posts import PostStore

__all__ = ["DEFAULT_COUNT", "MAX_COUNT", "QuestionHistory"]

DEFAULT_COUNT = 5
MAX_COUNT = 20


class QuestionHistory:
    def __init__(
        self,
        *,
        places: Places,
        catalogue: Catalogue,
        posts: PostStore,
        clock: Clock,
    ) -> None:
        self._places = places
        self._catalogue = catalogue
        self._posts = posts
        self._clock = clock

    async def recent(self, ctx: ChatContext, count: int = DEFAULT_COUNT) -> Message:
        """This channel's last ``count`` questions, newest first."""
        if not 1 <= count <= MAX_COUNT:
            raise BadInput(f"Show 1 to {MAX_COUNT} questions, not {count}.")
        workspace, channel = await self._places.channel(ctx)
        posts = await self._posts.recent(channel.id, count)
        counts = await self._posts.breakdowns([p.id for p in posts])
        rows = []
        for post in posts:
            stored = await self._catalogue.question(post.question_version_id)
            rows.append((post, stored.item, counts[post.id]))
        return cards.history_message(
            channel.name or ctx.channel_name or ctx.channel,
            rows,
            workspace.zone_at(self._clock.now()),
            ctx.command("question ID"),
        )

    async def question(self, ctx: ChatContext, post_id: int) -> Message:
        """One question of this workspace by its number, privately."""
        workspace = await self._places.workspace(ctx)
        post = await self._posts.get(post_id)
        channel = await self._places.channel_of(workspace, post)
        if post is None or channel is None:
            raise NotFound(
                f"There is no question #{post_id} here; {ctx.command('history')} lists the "
                "recent ones."
            )
        stored = await self._catalogue.question(post.question_version_id)
        counts = {} if post.is_open else await self._posts.breakdown(post.id)
        return cards.past_question_message(
            post,
            stored.item,
            self._catalogue.title(stored.pack),
            counts,
            workspace.zone_at(self._clock.now()),
            channel.name or channel.external_id,
        )
