"""The rules a kind of post adds to the quiz's: a live round's question, an exercise.

The quiz service answers, hints and reveals every post the same way; where a kind of post
scores, hints, closes or reads differently, it asks each :class:`PostRules` it was given,
in order. A new kind of post is a new ``PostRules`` beside its feature (rounds keep theirs in
:mod:`bot.services.round_rules`, exercises in :class:`bot.services.exercises.Exercises`),
handed to the quiz by :mod:`bot.app`; the quiz service is not edited.

Every hook has a default that changes nothing, so a kind overrides only what it changes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime

from bot.core.messages import Message
from bot.core.models import ChatContext, Post

__all__ = ["MemberId", "PostRules"]

#: The answering member's row id, looked up only if a rule needs it.
MemberId = Callable[[], Awaitable[int]]


class PostRules:
    """What a kind of post changes; the defaults change nothing."""

    def connect(self, gateway: object) -> None:
        """The chat gateway this process answers through is ``gateway`` (a kind that reads
        the chat, such as a round's role teams, keeps it)."""

    async def admit(self, ctx: ChatContext, post: Post, member: MemberId, now: datetime) -> None:
        """Before an answer to ``post`` is graded: raise :class:`~bot.core.errors.BadInput`
        to refuse it (nothing is stored), or settle who is answering (a round's teams)."""

    async def points(
        self, post: Post, base: int, now: datetime, member: MemberId, *, race: bool = False
    ) -> int | None:
        """What a correct answer scores now, when this kind decides (None: it does not).
        ``race``: a right answer to a typed question, where only the first earns a bonus."""
        return None

    async def after_answer(self, post: Post, member: MemberId, now: datetime) -> None:
        """An answer to ``post`` was stored (what this kind settles once it is in)."""

    def answered(self, ctx: ChatContext, post: Post, correct: bool, reply: Message) -> Message:
        """The private reply to an answer, as this kind says it."""
        return reply

    async def hint_taken(self, post: Post, member: MemberId, reply: Message) -> Message:
        """A hint was shown: what it costs, said in its reply."""
        return reply

    def closed_text(self, post: Post) -> str | None:
        """Why a late answer does not count, in this kind's words (None: the usual words)."""
        return None

    async def closing(self, post_ids: Sequence[int]) -> None:
        """The posts are about to close (settle what must be settled before the reveal)."""

    async def revealed(self, post: Post, reveal: Message) -> Message:
        """The revealed post, as this kind shows it."""
        return reveal
