"""The admins' group mastery picture: share right per tag and week, and recall per tag.

Drawn like the /stats picture (:mod:`bot.services.studychart`): matplotlib's object API on the
Agg canvas, no pyplot and no global state (safe in a worker thread), imported on the first
picture only. :func:`draw_group_chart` is pure, data in and PNG bytes out; what is withheld
is decided before (the service marks the cells), so the drawing cannot leak a small group's
figure by mistake: a withheld cell carries no number to draw.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["MAX_TAGS", "GroupCell", "GroupChart", "RecallBar", "draw_group_chart", "week_label"]

MAX_TAGS = 10  # heat map rows and recall bars: the tags with the most answers
NAME_CHARS = 40
_TEXT = "#1a202c"
_MUTED = "#718096"
_WITHHELD = "#e2e8f0"
_EMPTY = "#f7fafc"
_RECALL = "#2b6cb0"


@dataclass(frozen=True, slots=True)
class GroupCell:
    """One tag in one week. ``share`` is None when the cell is withheld (fewer members than
    the privacy threshold answered): the picture then shows no number."""

    answers: int
    share: float | None

    @property
    def withheld(self) -> bool:
        return self.share is None


@dataclass(frozen=True, slots=True)
class RecallBar:
    """The group's mean predicted recall now of one tag's cards; None: withheld."""

    tag: str
    cards: int
    recall: float | None


@dataclass(frozen=True, slots=True)
class GroupChart:
    """What the picture shows: rows ``tags`` (most answered first) by columns ``weeks``
    (Mondays, oldest first); ``cells`` only where the tag was answered that week."""

    name: str
    weeks: Sequence[date]
    tags: Sequence[str]
    cells: Mapping[tuple[str, date], GroupCell]
    recall: Sequence[RecallBar]
    desired_retention: float
    members_due: int
    members_overdue: int
    threshold: int = 5

    @property
    def due_line(self) -> str:
        due = self.members_due
        return (
            f"{due} member{'s' if due != 1 else ''} {'have' if due != 1 else 'has'} cards due, "
            f"{self.members_overdue} overdue"
        )


def week_label(monday: date) -> str:
    """``Mar 2``: a week by its Monday (no ``%-d``, which not every platform's strftime has)."""
    return f"{monday:%b} {monday.day}"


def tag_label(tag: str) -> str:
    return tag or "(untagged)"


_STOPS = ((0.0, (0.84, 0.19, 0.15)), (0.5, (1.0, 0.87, 0.45)), (1.0, (0.10, 0.60, 0.31)))


def _colour(share: float) -> tuple[float, float, float]:
    """Red (0 %) through yellow to green (100 %): a share right reads at a glance. Computed
    here, not by a matplotlib colormap, which copies its table on every lookup."""
    share = min(max(share, 0.0), 1.0)
    (x0, c0), (x1, c1) = (_STOPS[0], _STOPS[1]) if share <= 0.5 else (_STOPS[1], _STOPS[2])
    t = (share - x0) / (x1 - x0)
    return (c0[0] + t * (c1[0] - c0[0]), c0[1] + t * (c1[1] - c0[1]), c0[2] + t * (c1[2] - c0[2]))


def _heatmap(ax: Axes, chart: GroupChart) -> None:
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    ax.set_title(
        "Share right by tag and week (UTC weeks; hatched: fewer than "
        f"{chart.threshold} members answered)",
        loc="left",
        fontsize=10,
        color=_TEXT,
    )
    if not chart.tags or not chart.weeks:
        _empty(ax, "No scored answers in these weeks yet.")
        return
    # Half a year of weeks is 26 narrow columns: smaller numbers, every other week named.
    size = 8 if len(chart.weeks) <= 12 else 6
    every = 1 if len(chart.weeks) <= 13 else 2
    shown: list[Rectangle] = []
    colours: list[tuple[float, float, float] | str] = []
    hidden: list[Rectangle] = []
    for row, tag in enumerate(chart.tags):
        for col, week in enumerate(chart.weeks):
            cell = chart.cells.get((tag, week))
            box = Rectangle((col - 0.47, row - 0.45), 0.94, 0.9)
            if cell is None:
                shown.append(box)
                colours.append(_EMPTY)
            elif cell.share is None:
                hidden.append(box)
            else:
                shown.append(box)
                colours.append(_colour(cell.share))
                ax.text(
                    col,
                    row,
                    f"{round(100 * cell.share)}%",
                    ha="center",
                    va="center",
                    fontsize=size,
                    color=_TEXT,
                )
    ax.add_collection(PatchCollection(shown, facecolors=colours, edgecolors="none"))
    if hidden:
        ax.add_collection(
            PatchCollection(
                hidden, facecolors=_WITHHELD, edgecolors=_MUTED, hatch="///", linewidths=0
            )
        )
    ax.set_xlim(-0.55, len(chart.weeks) - 0.45)
    ax.set_ylim(len(chart.tags) - 0.5, -0.5)
    # Labels as plain text: a tick is a line and two labels, and ~30 of them cost more
    # to lay out than all the cells.
    for col, week in enumerate(chart.weeks):
        if (len(chart.weeks) - 1 - col) % every == 0:
            ax.text(
                col,
                len(chart.tags) - 0.4,
                week_label(week),
                ha="center",
                va="top",
                fontsize=8,
                color=_MUTED,
            )
    for row, tag in enumerate(chart.tags):
        ax.text(-0.6, row, tag_label(tag), ha="right", va="center", fontsize=8, color=_TEXT)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)


def _bars(ax: Axes, chart: GroupChart) -> None:
    ax.set_title(
        "Mean predicted recall now, by tag (FSRS), and the desired retention",
        loc="left",
        fontsize=10,
        color=_TEXT,
    )
    bars = list(chart.recall)
    if not bars:
        _empty(ax, "No cards yet: answers and reviews make them.")
        return
    rows = range(len(bars))
    ax.barh(list(rows), [b.recall or 0.0 for b in bars], height=0.6, color=_RECALL)
    for r, bar in zip(rows, bars, strict=True):
        if bar.recall is None:
            ax.barh(
                [r], [1.0], height=0.6, color=_WITHHELD, hatch="///", edgecolor=_MUTED, linewidth=0
            )
            ax.text(
                0.01,
                r,
                f"withheld: fewer than {chart.threshold} members",
                va="center",
                fontsize=7,
                color=_TEXT,
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.5},
            )
        else:
            ax.text(
                bar.recall + 0.01,
                r,
                f"{round(100 * bar.recall)}%",
                va="center",
                fontsize=7,
                color=_TEXT,
            )
    ax.axvline(chart.desired_retention, color=_TEXT, linestyle="--", linewidth=0.9)
    ax.text(
        chart.desired_retention,
        -0.75,
        f"target {round(100 * chart.desired_retention)}%",
        fontsize=7,
        color=_TEXT,
        ha="center",
        va="bottom",
    )
    labels = [f"{tag_label(b.tag)} · {b.cards}" for b in bars]
    ax.set_yticks(list(rows), labels, fontsize=8, color=_TEXT)
    ax.set_ylim(len(bars) - 0.5, -0.8)
    ax.set_xlim(0, 1.0)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"], fontsize=7)
    ax.tick_params(axis="x", colors=_MUTED, length=0)
    ax.tick_params(axis="y", length=0)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)


def _empty(ax: Axes, text: str) -> None:
    """A panel with nothing to draw: the reason in its middle, and no axes."""
    ax.text(0.5, 0.5, text, ha="center", va="center", fontsize=9, color=_MUTED,
            transform=ax.transAxes)  # fmt: skip
    ax.set_axis_off()


def draw_group_chart(chart: GroupChart, fmt: str = "png") -> bytes:
    """The picture as PNG bytes, 1000 px wide (taller with more tags); ``fmt="svg"`` keeps
    its words as text, for tests that read what it says.

    Axes are placed in inches, as in the /stats picture: no layout engine, one draw.
    """
    from matplotlib import rc_context
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    heat_rows = max(1, min(len(chart.tags), MAX_TAGS))
    bar_rows = max(1, min(len(chart.recall), MAX_TAGS))
    width, top = 8.0, 0.75
    heat_h, gap, bars_h, bottom = 0.32 * heat_rows + 0.75, 0.45, 0.3 * bar_rows + 0.5, 0.3
    height = top + heat_h + gap + bars_h + bottom
    figure = Figure(figsize=(width, height), dpi=125)
    FigureCanvasAgg(figure)
    left = 1.6  # room for tag names

    def box(from_top: float, tall: float) -> tuple[float, float, float, float]:
        return (
            left / width,
            1 - (from_top + tall) / height,
            (width - left - 0.35) / width,
            tall / height,
        )

    name = chart.name if len(chart.name) <= NAME_CHARS else chart.name[: NAME_CHARS - 1] + "…"
    figure.text(
        0.2 / width,
        1 - 0.28 / height,
        f"Group mastery: {name}",
        fontsize=12,
        color=_TEXT,
        va="center",
    )
    figure.text(
        0.2 / width, 1 - 0.55 / height, chart.due_line, fontsize=9, color=_MUTED, va="center"
    )
    _heatmap(figure.add_axes(box(top + 0.3, heat_h - 0.55)), chart)
    _bars(figure.add_axes(box(top + heat_h + gap + 0.2, bars_h - 0.2)), chart)
    out = io.BytesIO()
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "studybot", "hatch.color": _MUTED}):
        if fmt == "png":  # flat colours compress well at any level; 1 saves a third
            figure.savefig(out, format=fmt, facecolor="white", pil_kwargs={"compress_level": 1})
        else:
            figure.savefig(out, format=fmt, facecolor="white")
    return out.getvalue()
