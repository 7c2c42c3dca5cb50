"""Posting a question: pick one for a channel, create its post row, draft its message, publish.

Shared by a member's ``quiz``, a schedule's ``now`` and the scheduler, so that the no-repeat
rule, the "pack is off here" answer and the message of a question are written once.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cache
from zoneinfo import ZoneInfo

from bot.core import replies
from bot.core.clock import Clock
from bot.core.errors import NotFound
from bot.core.gateway import ChatGateway
from bot.core.messages import Byline, Message
from bot.core.models import Post
from bot.core.schedule_spec import ALL_KINDS
from bot.core.wakeup import Wakeup
from bot.questions.written import COMMUNITY_PACK
from bot.services.catalogue import Catalogue
from bot.storage.directory import ChannelRow, WorkspaceRow
from bot.storage.packs import Candidate, eligible
from bot.storage.posts import PostStore
from bot.storage.suggestions import SuggestionStore

__all__ = ["PostDraft", "Posting", "zone"]


@dataclass(frozen=True, slots=True)
class PostDraft:
    """A question ready to send: the adapter sends it, then calls :meth:`attach_message`."""

    post: Post
    channel: str  # the platform's channel id
    message: Message


@cache
def zone(name: str) -> ZoneInfo:
    """A time zone by name, built once (cards show local times on every post)."""
    return ZoneInfo(name)


#: The kinds a question without a kind filter (or a pack) is drawn from: all but exercises.
UNASKED_KINDS = tuple(kind for kind in ALL_KINDS if kind != "exercise")


class Posting:
    """Picks, stores and drafts questions; sends drafts through a gateway."""

    def __init__(
        self,
        catalogue: Catalogue,
        posts: PostStore,
        clock: Clock,
        wakeup: Wakeup,
        rng: random.Random | None = None,
        credits: SuggestionStore | None = None,
    ) -> None:
        self._credits = credits  # who suggested a community question, for its byline
        self._catalogue = catalogue
        self._posts = posts
        self._clock = clock
        self._wakeup = wakeup
        self._rng = rng or random.Random()

    async def post_in(
        self,
        workspace: WorkspaceRow,
        channel: ChannelRow,
        *,
        pack: str | None = None,
        difficulty: str | None = None,
        tags: Sequence[str] = (),
        kinds: Sequence[str] = (),
        closes_at: datetime | None = None,
        requested_by: int | None = None,
        schedule_id: int | None = None,
        occurrence: str | None = None,
        mention: str | None = None,
        timezone: str | None = None,
        round_id: int | None = None,
        question: str | None = None,
    ) -> PostDraft | None:
        """A new post for a known channel, drafted.

        ``None`` when this schedule ``occurrence`` already has its post row (the
        ``UNIQUE(schedule_id, occurrence)`` key): it was posted, or is being posted, already.
        """
        if pack is not None:
            self.check_pack(pack)
        # Exercises are posted when asked for (by kind or by their pack): each takes minutes
        # and the sandbox, so they never turn up in a plain /quiz or an unfiltered schedule.
        picked = kinds or (UNASKED_KINDS if pack is None and question is None else ())
        candidates = await self._catalogue.candidates(
            channel.id, pack=pack, difficulty=difficulty, tags=tags, kinds=picked, question=question
        )
        if not candidates:
            if question is not None:
                raise NotFound(
                    f"No {' or '.join(kinds) or 'question'} `{question}` is on in this channel; "
                    "see `pack list`."
                )
            if pack is not None and pack in await self._catalogue.disabled_in(channel.id):
                raise NotFound(
                    f"Pack `{pack}` is off in this channel; an admin can turn it on with "
                    f"`pack enable {pack}`."
                )
            wanted = ", ".join(
                [f"{k} {v}" for k, v in (("pack", pack), ("difficulty", difficulty)) if v]
                + [f"tag {tag}" for tag in tags]
                + ([f"kinds {', '.join(kinds)}"] if kinds else [])
            )
            unknown = [tag for tag in tags if tag not in self._catalogue.tags()]
            if unknown:
                raise NotFound(
                    f"No question has the tag {', '.join(f'`{t}`' for t in unknown)}. Tags: "
                    f"{', '.join(self._catalogue.tags()) or 'none yet'}."
                )
            raise NotFound(f"No questions match {wanted or 'this channel'}. Try `pack list`.")
        choice = self.pick(candidates)
        post = await self._posts.create(
            channel_id=channel.id,
            version_id=choice.version_id,
            now=self._clock.now(),
            requested_by=requested_by,
            closes_at=closes_at,
            schedule_id=schedule_id,
            occurrence=occurrence,
            round_id=round_id,
        )
        if post is None:
            return None
        if closes_at is not None:
            self._wakeup.changed(None)  # the scheduler reveals it on time
        return await self.draft(
            post, channel.external_id, workspace, mention=mention, timezone=timezone
        )

    def check_pack(self, pack: str) -> None:
        """Raise :class:`NotFound` (with a "did you mean") for a pack not installed."""
        if self._catalogue.has(pack):
            return
        close = self._catalogue.closest(pack)
        hint = f" Did you mean `{close}`?" if close else " See `pack list`."
        word = pack.lower()
        if word in {"easy", "medium", "hard"}:  # `/quiz hard`: a difficulty, not a pack
            hint = f" For {word} questions, use `--difficulty {word}`."
        elif word in self._catalogue.tags():
            hint = f" `{word}` is a tag: use `--tag {word}`."
        raise NotFound(f"There is no pack called `{pack}`.{hint}")

    def pick(self, candidates: Sequence[Candidate]) -> Candidate:
        """The no-repeat rule: one of the questions this channel has seen least often, and
        never the question it saw last while there is another (see :func:`eligible`)."""
        return self._rng.choice(eligible(candidates))

    def pick_batch(
        self, wants: Sequence[tuple[int, int]], found: Mapping[int, Sequence[Candidate]]
    ) -> dict[int, int]:
        """The same rule for a batch of due schedules: ``wants`` is ``(schedule id, channel
        id)`` in posting order, ``found`` each schedule's candidates; the result maps each
        schedule that has candidates to the question version it posts.

        A channel due more than once in one batch counts the batch's own earlier picks as
        posted (and its last pick as the latest), so it never gets the same question twice.
        """
        taken: dict[int, Counter[int]] = {}
        last_pick: dict[int, int] = {}
        picks: dict[int, int] = {}
        for schedule_id, channel_id in wants:
            candidates = found.get(schedule_id)
            if not candidates:
                continue
            local = taken.setdefault(channel_id, Counter())
            if local:
                previous = last_pick[channel_id]
                candidates = [
                    Candidate(
                        c.version_id,
                        c.times_posted + local[c.version_id],
                        latest=c.version_id == previous,
                    )
                    for c in candidates
                ]
            version = self.pick(candidates).version_id
            local[version] += 1
            last_pick[channel_id] = version
            picks[schedule_id] = version
        return picks

    async def draft(
        self,
        post: Post,
        channel: str,
        workspace: WorkspaceRow,
        *,
        mention: str | None = None,
        timezone: str | None = None,
    ) -> PostDraft:
        """The message for a post row; ``timezone`` (a schedule's) overrides the workspace's
        for the "answers close at" line."""
        stored = await self._catalogue.posted(post)
        message = replies.question_message(
            post,
            stored.item,
            self._catalogue.title(stored.pack),
            zone(timezone or workspace.timezone),
        )
        if mention:
            message = replace(message, mention=mention)
        byline = await self.byline(stored.pack, stored.item.id, workspace.id)
        if byline is not None:
            message = replace(message, byline=byline)
        return PostDraft(post, channel, message)

    async def byline(self, pack: str, item_id: str, workspace_id: int) -> Byline | None:
        """ "Suggested by ..." for a ``community`` question a member suggested (its post and
        its reveal both show it). The author is mentioned in their own workspace only; a
        deployment's other workspaces (the pack is shared) see the name."""
        if self._credits is None or pack != COMMUNITY_PACK:
            return None
        credit = await self._credits.credit(item_id)
        if credit is None:
            return None
        member = credit.author if credit.workspace_id == workspace_id else ""
        return Byline(member, credit.author_name)

    async def attach_message(self, post_id: int, message_id: str) -> None:
        """Remember the platform's id for a sent post, so the reveal can edit it in place."""
        await self._posts.attach_message(post_id, message_id)

    async def publish(self, draft: PostDraft, gateway: ChatGateway) -> str:
        """Send a drafted post through a gateway and remember its message id."""
        message_id = await gateway.send_post(draft.channel, draft.message)
        await self.attach_message(draft.post.id, message_id)
        return message_id
