"""``/history`` and ``/question ID``: look at past questions after they close.

A member who missed a day, or wants the solution again, asks here instead of scrolling. Both
replies are private, and a question still open is shown without its answer (answer it where
it was posted): nothing here can spoil an open question or score a second time.
:meth:`QuestionHistory.channel_history` returns the history as data (:class:`ChannelHistory`),
which ``/history`` renders and an admin page can show.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from bot.core import replies
from bot.core.clock import Clock
from bot.core.errors import BadInput, NotFound
from bot.core.messages import Message
from bot.core.models import ChatContext, Post
from bot.questions.schema import Item
from bot.services.catalogue import Catalogue
from bot.services.places import Places
from bot.storage.posts import PostStore

__all__ = [
    "DEFAULT_COUNT",
    "MAX_COUNT",
    "ChannelHistory",
    "PastQuestion",
    "QuestionHistory",
    "history_message",
]

DEFAULT_COUNT = 5
MAX_COUNT = 20


@dataclass(frozen=True, slots=True)
class PastQuestion:
    """One posted question as the history shows it.

    ``counts`` is how many members picked each choice (or knew/forgot): empty while the
    question is open, so nothing here tells how the group is answering it. ``item`` holds the
    answer too; a reader shows it only for a closed question (``post.is_open`` is False).
    """

    post: Post
    item: Item
    pack: str
    pack_title: str
    counts: Mapping[str, int]

    @property
    def answered(self) -> int:
        return sum(self.counts.values())

    @property
    def right(self) -> int | None:
        """How many answered right; None while open or for a kind that is not scored."""
        if self.post.is_open:
            return None
        share = replies.right_share(self.item, self.counts)
        return None if share is None else share[0]


@dataclass(frozen=True, slots=True)
class ChannelHistory:
    """A channel's recent questions, newest first, and the zone their times are read in."""

    channel: str
    timezone: ZoneInfo
    questions: tuple[PastQuestion, ...]


def history_message(history: ChannelHistory, show: str) -> Message:
    """``/history``: ``show`` is how the platform writes ``question ID``."""
    return replies.history_message(
        history.channel,
        [(q.post, q.item, q.counts) for q in history.questions],
        history.timezone,
        show,
    )


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

    async def channel_history(self, ctx: ChatContext, count: int = DEFAULT_COUNT) -> ChannelHistory:
        """This channel's last ``count`` questions, newest first (everyone): what ``/history``
        shows and what an admin page lists. An open question carries no answer counts."""
        if not 1 <= count <= MAX_COUNT:
            raise BadInput(f"Show 1 to {MAX_COUNT} questions, not {count}.")
        workspace, channel = await self._places.channel(ctx)
        posts = await self._posts.recent(channel.id, count)
        counts = await self._posts.breakdowns([p.id for p in posts])
        questions = []
        for post in posts:
            stored = await self._catalogue.posted(post)
            questions.append(
                PastQuestion(
                    post=post,
                    item=stored.item,
                    pack=stored.pack,
                    pack_title=self._catalogue.title(stored.pack),
                    counts={} if post.is_open else counts[post.id],
                )
            )
        return ChannelHistory(
            channel=channel.name or ctx.channel_name or ctx.channel,
            timezone=workspace.display_zone,
            questions=tuple(questions),
        )

    async def recent(self, ctx: ChatContext, count: int = DEFAULT_COUNT) -> Message:
        """This channel's last ``count`` questions, newest first."""
        return history_message(await self.channel_history(ctx, count), ctx.command("question ID"))

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
        stored = await self._catalogue.posted(post)
        counts = {} if post.is_open else await self._posts.breakdown(post.id)
        return replies.past_question_message(
            post,
            stored.item,
            self._catalogue.title(stored.pack),
            counts,
            workspace.display_zone,
            channel.name or channel.external_id,
        )
