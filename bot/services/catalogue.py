"""The question packs installed on this host: their stored rows and the titles shown with them.

The titles are read once per sync and kept in memory because every card and every "did you
mean" needs them; the database stays the truth (a sync replaces the whole map).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import replace

from bot.core.choice_order import arranged
from bot.core.clock import Clock
from bot.core.models import Post
from bot.log import get_logger
from bot.questions.loader import LoadedPack
from bot.storage.packs import Candidate, PackStore, PackSummary, StoredQuestion, SyncReport

__all__ = ["Catalogue"]

log = get_logger(__name__)


class Catalogue:
    """Pack names and titles over the pack store; what quiz, schedules and pack admin look up."""

    def __init__(self, store: PackStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock
        self._titles: dict[str, str] = {}
        self._tags: tuple[str, ...] = ()

    async def sync(self, loaded: Sequence[LoadedPack]) -> SyncReport:
        """Store the loaded packs (new, updated, retired) and refresh the titles."""
        report = await self._store.sync(loaded, self._clock.now())
        self._titles = {s.slug: s.title for s in await self._store.summaries()}
        self._tags = tuple(
            sorted({tag for pack in loaded for i in pack.pack.items for tag in i.tags})
        )
        log.info(
            "packs synced: %d packs, %d new, %d updated, %d retired, %d unchanged",
            report.packs,
            report.added,
            report.updated,
            report.retired,
            report.unchanged,
        )
        return report

    async def question(self, version_id: int) -> StoredQuestion:
        """The item of a version, in its file's order (a version never changes)."""
        return await self._store.question(version_id)

    async def posted(self, post: Post) -> StoredQuestion:
        """The item exactly as ``post`` showed it: its version, its choices in the post's
        order. Every reader of a post asks here, so the post, its reveal, ``/history`` and
        the answer breakdown agree on which letter is which choice."""
        return await self.as_shown(post.question_version_id, post.choice_seed)

    async def as_shown(self, version_id: int, choice_seed: int | None) -> StoredQuestion:
        """A version's item with its choices in the order ``choice_seed`` draws (a post's
        stored seed, or a review card's: :mod:`bot.core.choice_order`)."""
        stored = await self._store.question(version_id)
        return replace(stored, item=arranged(stored.item, choice_seed))

    async def candidates(
        self,
        channel_id: int,
        *,
        pack: str | None = None,
        difficulty: str | None = None,
        tags: Sequence[str] = (),
        kinds: Sequence[str] = (),
        question: str | None = None,
    ) -> list[Candidate]:
        """Every live question that fits the filters, with how often the channel saw it."""
        return await self._store.candidates(
            channel_id, pack=pack, difficulty=difficulty, tags=tags, kinds=kinds, question=question
        )

    async def summaries(self) -> list[PackSummary]:
        """Every installed pack with its title, description and live question count."""
        return await self._store.summaries()

    async def disabled_in(self, channel_id: int) -> set[str]:
        """The packs switched off in a channel."""
        return await self._store.disabled_in(channel_id)

    async def set_enabled(self, channel_id: int, slug: str, enabled: bool) -> bool | None:
        """Switch a pack on or off in one channel; whether it was on (None: no such pack)."""
        return await self._store.set_enabled(channel_id, slug, enabled)

    def title(self, pack: str) -> str:
        """The pack's title, or its slug for a pack no longer installed."""
        return self._titles.get(pack, pack)

    def has(self, pack: str) -> bool:
        return pack in self._titles

    def titles(self) -> dict[str, str]:
        """Slug -> title of every installed pack (a copy)."""
        return dict(self._titles)

    def tags(self) -> tuple[str, ...]:
        """Every tag of the installed packs, sorted: what a tag filter can name."""
        return self._tags

    def closest(self, pack: str) -> str | None:
        """The installed pack whose name is nearest a mistyped one, for "did you mean"."""
        close = difflib.get_close_matches(pack, list(self._titles), n=1)
        return close[0] if close else None
