"""``studybot review optimize``: fit a workspace's FSRS parameters to its review log.

The fit is FSRS's own optimizer (``fsrs.optimizer``, which needs torch and pandas); it is
imported inside :func:`_fit` only, so this runs in the CLI process and never in the bot's.
The fitted parameters are kept only if they predict the log better (a lower log-loss on the
same reviews) than what the workspace uses now; storing them replays its cards.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.core import srs
from bot.storage.reviews import ReviewStore

__all__ = ["FitReport", "optimize_workspace"]


@dataclass(frozen=True, slots=True)
class FitReport:
    workspace_id: int
    cards: int
    reviews: int
    counted: int  # reviews a day or more after the card's previous one: what the loss is over
    loss_before: float
    loss_after: float
    stored: bool
    parameters: tuple[float, ...]

    def describe(self) -> str:
        head = (
            f"workspace {self.workspace_id}: {self.reviews} review(s) of {self.cards} card(s), "
            f"{self.counted} counted"
        )
        if self.counted == 0:
            return f"{head}; nothing to fit yet (no card was reviewed a day or more later)"
        loss = f"log-loss {self.loss_before:.4f} -> {self.loss_after:.4f}"
        if self.stored:
            return f"{head}; {loss}: improved, stored (cards rescheduled)"
        return f"{head}; {loss}: not better, kept the current parameters"


def _fit(histories: Sequence[Sequence[tuple[srs.Grade, datetime]]]) -> tuple[float, ...]:
    from fsrs import Rating, ReviewLog
    from fsrs.optimizer import Optimizer

    logs = [
        ReviewLog(
            card_id=card_id, rating=Rating(int(grade)), review_datetime=at, review_duration=None
        )
        for card_id, history in enumerate(histories, start=1)
        for grade, at in history
    ]
    return tuple(float(p) for p in Optimizer(logs).compute_optimal_parameters())


async def optimize_workspace(reviews: ReviewStore, workspace_id: int, now: datetime) -> FitReport:
    settings = await reviews.settings(workspace_id)
    histories = [
        [(g, at) for _, g, at in h] for h in (await reviews.histories(workspace_id)).values()
    ]
    before, counted = srs.log_loss(histories, settings)
    total = sum(len(h) for h in histories)
    if counted == 0:
        return FitReport(workspace_id, len(histories), total, 0, math.nan, math.nan, False, ())
    parameters = await asyncio.to_thread(_fit, histories)
    candidate = srs.SrsSettings(settings.desired_retention, parameters)
    after, _ = srs.log_loss(histories, candidate)
    improved = after < before - 1e-9
    if improved:
        await reviews.update_settings(workspace_id, parameters=parameters, log_loss=after, now=now)
    return FitReport(
        workspace_id, len(histories), total, counted, before, after, improved, parameters
    )
