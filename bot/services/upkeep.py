"""The operator's own tasks on a database, for ``studybot scores export``, ``db check`` and
``review optimize|retention``: the CLI calls these, never a store.

Each is what the bot's own services use underneath (the score events, the review log), read
or changed with the same rules: the export's current streak is the one ``/stats`` shows, a
check re-adds the scores and replays the review log, a fit is kept only if it predicts better.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

from bot.services.optimize import FitReport, optimize_workspace
from bot.storage.reviews import ReviewStore
from bot.storage.scores import ScoreStore

__all__ = ["IntegrityCheck", "Upkeep", "WorkspaceNotFound"]

#: The database engine's own checks (SQLite's integrity and foreign keys; PostgreSQL's).
IntegrityCheck = Callable[[], Awaitable[list[str]]]


class WorkspaceNotFound(LookupError):
    """No workspace has that row id or platform id (the message is the id typed)."""


class Upkeep:
    """The operator's tasks over one database's score and review stores."""

    def __init__(
        self, *, scores: ScoreStore, reviews: ReviewStore, integrity: IntegrityCheck
    ) -> None:
        self._scores = scores
        self._reviews = reviews
        self._integrity = integrity

    async def export_scores(self, workspace: str | None, now: datetime) -> list[tuple[object, ...]]:
        """Every member's all-time numbers, best first, for a spreadsheet (``workspace``:
        one workspace by its platform id or name)."""
        return await self._scores.export_rows(workspace, now=now)

    async def problems(self) -> list[str]:
        """What ``db check`` reports: the engine's own checks, the scores re-added from their
        events, and the review log replayed against the stored card states."""
        found = await self._integrity()
        found += await self._scores.consistency_problems()
        found += await self._reviews.replay_problems()
        return found

    async def fit_reviews(self, workspace: str | None, now: datetime) -> list[FitReport]:
        """FSRS parameters fitted to each workspace's review log (or the one named)."""
        targets = await self._workspaces(workspace)
        return [await optimize_workspace(self._reviews, target, now) for target in targets]

    async def set_retention(self, workspace: str, value: float) -> int:
        """The recall probability FSRS schedules for; the cards rescheduled with it."""
        (target,) = await self._workspaces(workspace)
        return await self._reviews.update_settings(target, desired_retention=value)

    async def _workspaces(self, typed: str | None) -> list[int]:
        if typed is None:
            return await self._reviews.workspaces()
        found = await self._reviews.find_workspace(typed)
        if found is None:
            raise WorkspaceNotFound(typed)
        return [found]
