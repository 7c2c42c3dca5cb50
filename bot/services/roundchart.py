"""The picture of a live round's board: one bar of points per member, best first.

Drawn like the /stats picture (:mod:`bot.services.studychart`): matplotlib's object API on the
Agg canvas, no pyplot and no global state, imported on the first board only; pure (rows in,
PNG bytes out) so the service draws it with ``asyncio.to_thread``.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["BoardBar", "draw_round_board"]

MAX_BARS = 12  # the board's top: a longer round board is in the text beside the picture
_BAR = "#2b6cb0"
_FIRST = "#d69e2e"
_TEXT = "#1a202c"
_MUTED = "#718096"


@dataclass(frozen=True, slots=True)
class BoardBar:
    """One member's bar: points, right answers of those answered, fastest right answer."""

    name: str
    points: int
    correct: int
    answered: int
    fastest_s: float | None


def draw_round_board(title: str, bars: Sequence[BoardBar]) -> bytes:
    """The board as PNG bytes (960 px wide; a row per member, up to :data:`MAX_BARS`)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    shown = list(bars[:MAX_BARS])
    rows = max(1, len(shown))
    width, height = 8.0, 1.1 + 0.42 * rows
    figure = Figure(figsize=(width, height), dpi=120)
    FigureCanvasAgg(figure)
    figure.text(0.2 / width, 1 - 0.32 / height, title, fontsize=12, color=_TEXT, va="center")
    ax = figure.add_axes(
        (2.2 / width, 0.35 / height, (width - 2.5) / width, (height - 0.95) / height)
    )
    best = max((b.points for b in shown), default=0) or 1
    rank, previous = 0, -1
    for row, bar in enumerate(shown):
        if bar.points != previous:  # ties share a rank, as in the text beside it
            rank, previous = row + 1, bar.points
        colour = _FIRST if rank == 1 and bar.points > 0 else _BAR
        ax.barh(row, bar.points, height=0.62, color=colour)
        ax.text(-best * 0.02, row, f"{rank}. {_short(bar.name)}", ha="right", va="center",
                fontsize=10, color=_TEXT)  # fmt: skip
        fastest = f" · fastest {bar.fastest_s:.1f} s" if bar.fastest_s is not None else ""
        ax.text(bar.points + best * 0.02, row, f"{bar.points} pts · {bar.correct}/{bar.answered}"
                f" right{fastest}", va="center", fontsize=9, color=_MUTED)  # fmt: skip
    if not shown:
        ax.text(0.5, 0, "Nobody answered this round.", ha="center", va="center", color=_MUTED)
    ax.set_xlim(0, best * 1.7)  # room after the longest bar for its label
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)
    out = io.BytesIO()
    figure.savefig(out, format="png", facecolor="white")
    return out.getvalue()


def _short(name: str) -> str:
    return name if len(name) <= 18 else name[:17] + "…"
