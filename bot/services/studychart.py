"""The /stats picture: a calendar heatmap of study days and retention bars per tag.

Drawn in the bot process with matplotlib's object API on the Agg canvas (no pyplot, no global
state, so it is safe in a worker thread); it never imports torch. :func:`draw_study_chart` is
pure (data in, PNG bytes out), so the service runs it with ``asyncio.to_thread`` and a slow
render never stalls the event loop. matplotlib is imported on the first picture only: a bot
whose members never ask for /stats never pays for it.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["WEEKS", "StudyChart", "TagBar", "draw_study_chart"]

WEEKS = 26  # the heatmap's width: half a year, as on a contributions calendar
MAX_TAGS = 8  # bars; the tags with the most cards
_DASH = "\N{EN DASH}"  # a tag's retention before any review a day apart
NAME_CHARS = 40  # of a member's name in the title, which shares its line with the streak
_DAYS = ("Mon", "", "Wed", "", "Fri", "", "Sun")
# Empty day, then 1, 2-3, 4-6, 7+ reviews (light to dark).
_LEVELS = ("#ebedf0", "#c6e48b", "#7bc96f", "#239a3b", "#196127")
_RETENTION = "#2b6cb0"
_MASTERY = "#a3bffa"
_TEXT = "#1a202c"
_MUTED = "#718096"


@dataclass(frozen=True, slots=True)
class TagBar:
    """One tag's bars: true retention over 30 days (None without a qualifying review), and
    mastery (mean predicted recall of its cards a week from now)."""

    tag: str
    cards: int
    recalled: int
    reviewed: int
    mastery: float

    @property
    def retention(self) -> float | None:
        return self.recalled / self.reviewed if self.reviewed else None


@dataclass(frozen=True, slots=True)
class StudyChart:
    """What the picture shows; ``days`` maps a local date to that day's review count."""

    name: str
    today: date
    days: Mapping[date, int]
    tags: Sequence[TagBar]
    desired_retention: float
    streak: int = 0
    freezes: int = 0  # streak freezes held
    freezes_used: int = 0

    @property
    def streak_line(self) -> str:
        """The header's right-hand side: the streak and its freezes, as /stats says them."""
        days = f"{self.streak} day{'s' if self.streak != 1 else ''}"
        return f"Streak {days} · freezes: {self.freezes} held, {self.freezes_used} used"


def _level(count: int) -> str:
    if count <= 0:
        return _LEVELS[0]
    if count == 1:
        return _LEVELS[1]
    if count <= 3:
        return _LEVELS[2]
    if count <= 6:
        return _LEVELS[3]
    return _LEVELS[4]


def _heatmap(ax: Axes, chart: StudyChart) -> None:
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    # Columns are weeks starting Monday; the last column holds today.
    last_monday = chart.today - timedelta(days=chart.today.weekday())
    first_monday = last_monday - timedelta(weeks=WEEKS - 1)
    studied = reviews = 0
    month_seen: set[int] = set()
    cells: list[Rectangle] = []
    colours: list[str] = []
    for week in range(WEEKS):
        monday = first_monday + timedelta(weeks=week)
        if monday.day <= 7 or week == 0:  # label the first column of each month
            key = monday.year * 12 + monday.month
            if key not in month_seen:
                month_seen.add(key)
                ax.text(week, -1.0, monday.strftime("%b"), fontsize=8, color=_MUTED, va="bottom")
        for weekday in range(7):
            day = monday + timedelta(days=weekday)
            if day > chart.today:
                continue
            count = chart.days.get(day, 0)
            if count:
                studied += 1
                reviews += count
            cells.append(Rectangle((week - 0.43, weekday - 0.43), 0.86, 0.86))
            colours.append(_level(count))
    # One collection, drawn in one call: ~180 separate patches cost ~10x more to render.
    ax.add_collection(PatchCollection(cells, facecolors=colours, edgecolors="none"))
    ax.add_patch(  # today
        Rectangle(
            ((len(cells) - 1) // 7 - 0.43, chart.today.weekday() - 0.43),
            0.86,
            0.86,
            facecolor="none",
            edgecolor=_TEXT,
            linewidth=0.8,
        )
    )
    ax.set_xlim(-0.6, WEEKS - 0.4)
    ax.set_ylim(6.6, -1.6)
    ax.set_yticks(range(7), _DAYS, fontsize=8, color=_MUTED)
    ax.set_xticks([])
    ax.set_aspect("equal")
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.tick_params(length=0)
    ax.set_title(
        f"Study days, last {WEEKS} weeks: {studied} day{'s' if studied != 1 else ''}, "
        f"{reviews} review{'s' if reviews != 1 else ''}",
        loc="left",
        fontsize=10,
        color=_TEXT,
    )
    # The legend: less ... more.
    x = WEEKS - 7.5
    ax.text(x - 0.7, 7.4, "less", fontsize=7, color=_MUTED, ha="right", va="center")
    for i, colour in enumerate(_LEVELS):
        ax.add_patch(Rectangle((x + i - 0.4, 7.0), 0.8, 0.8, facecolor=colour, clip_on=False))
    ax.text(x + len(_LEVELS) - 0.4, 7.4, "more", fontsize=7, color=_MUTED, va="center")


def _bars(ax: Axes, chart: StudyChart) -> None:
    tags = sorted(chart.tags, key=lambda t: (-t.cards, t.tag))[:MAX_TAGS]
    more = len(chart.tags) - len(tags)
    ax.set_title(
        "Retention by tag: true retention, last 30 days, and mastery (recall in a week)",
        loc="left",
        fontsize=10,
        color=_TEXT,
    )
    if not tags:
        ax.text(0.5, 0.5, "No cards yet: answer a question to start.", ha="center",
                va="center", fontsize=9, color=_MUTED, transform=ax.transAxes)  # fmt: skip
        ax.set_axis_off()
        return
    rows = range(len(tags))
    retention = [t.retention or 0.0 for t in tags]
    ax.barh([r - 0.18 for r in rows], retention, height=0.34, color=_RETENTION,
            label="true retention (30 days)")  # fmt: skip
    ax.barh([r + 0.18 for r in rows], [t.mastery for t in tags], height=0.34, color=_MASTERY,
            label="mastery (recall in a week)")  # fmt: skip
    for r, tag in zip(rows, tags, strict=True):
        kept = tag.retention
        # A tag without a review a day apart has no retention yet: a dash, explained once
        # below the bars rather than on every one.
        note = (
            f"{round(100 * kept)}% ({tag.recalled} of {tag.reviewed})"
            if kept is not None
            else _DASH
        )
        ax.text(max(kept or 0.0, 0.0) + 0.01, r - 0.18, note, va="center", fontsize=7,
                color=_TEXT if kept is not None else _MUTED)  # fmt: skip
        ax.text(tag.mastery + 0.01, r + 0.18, f"{round(100 * tag.mastery)}%", va="center",
                fontsize=7, color=_MUTED)  # fmt: skip
    ax.axvline(chart.desired_retention, color=_MUTED, linestyle="--", linewidth=0.8)
    ax.text(chart.desired_retention + 0.01, len(tags) - 0.35,
            f"target {round(100 * chart.desired_retention)}%", fontsize=7, color=_MUTED,
            ha="left", va="bottom")  # fmt: skip
    labels = [f"{t.tag or '(untagged)'} · {t.cards}" for t in tags]
    ax.set_yticks(list(rows), labels, fontsize=8, color=_TEXT)
    ax.set_ylim(len(tags) - 0.3, -0.7)
    ax.set_xlim(0, 1.0)  # a share: the axis ends at 100%; the labels may run past it
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"], fontsize=7)
    ax.tick_params(colors=_MUTED, length=0)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    below = -0.35 / (0.34 * len(tags) + 0.25)
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, below), ncol=2, fontsize=7,
              frameon=False)  # fmt: skip
    if more:  # the bars show the tags with the most cards; say that others exist
        ax.text(-0.01, below, f"and {more} more tag{'s' if more != 1 else ''}",
                transform=ax.transAxes, ha="right", va="top", fontsize=8,
                color=_MUTED)  # fmt: skip
    if any(t.retention is None for t in tags):
        ax.text(1.0, below, f"{_DASH} no review a day apart yet", transform=ax.transAxes,
                ha="right", va="top", fontsize=7, color=_MUTED)  # fmt: skip


def draw_study_chart(chart: StudyChart, fmt: str = "png") -> bytes:
    """The picture as PNG bytes (960 px wide; taller with more tags); ``fmt="svg"`` gives it
    with its words kept as text, which is how the tests read what the picture says.

    Axes are placed in inches, not by a layout engine: ``bbox_inches="tight"`` would draw the
    figure twice, and the heatmap's fixed aspect would float in a grid cell.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = max(1, min(len(chart.tags), MAX_TAGS))
    width, top, heat_h, gap, bars_h, bottom = 8.0, 0.5, 2.25, 0.7, 0.34 * rows + 0.25, 0.7
    height = top + heat_h + gap + bars_h + bottom
    figure = Figure(figsize=(width, height), dpi=120)
    FigureCanvasAgg(figure)

    def box(from_top: float, tall: float, left: float) -> tuple[float, float, float, float]:
        return (left / width, 1 - (from_top + tall) / height, (width - left - 0.3) / width,
                tall / height)  # fmt: skip

    name = chart.name if len(chart.name) <= NAME_CHARS else chart.name[: NAME_CHARS - 1] + "…"
    figure.text(0.2 / width, 1 - 0.3 / height, f"Study stats: {name}", fontsize=12,
                color=_TEXT, va="center")  # fmt: skip
    figure.text(1 - 0.3 / width, 1 - 0.3 / height, chart.streak_line, fontsize=9,
                color=_MUTED, va="center", ha="right")  # fmt: skip
    heat = figure.add_axes(box(top + 0.3, heat_h - 0.3, 0.8))
    heat.set_anchor("W")
    _heatmap(heat, chart)
    bars = box(top + heat_h + gap, bars_h, 1.7)
    # Room on the right for the labels past a full bar ("100% (12 of 12)"), off the axis.
    _bars(figure.add_axes((bars[0], bars[1], bars[2] - 1.0 / width, bars[3])), chart)
    out = io.BytesIO()
    from matplotlib import rc_context

    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "studybot"}):
        figure.savefig(out, format=fmt, facecolor="white")
    return out.getvalue()
