"""The /stats picture: its header carries the streak and its freezes, and long names fit."""

from __future__ import annotations

import io
from datetime import date

from bot.services.studychart import StudyChart, TagBar, draw_study_chart


def test_the_picture_says_the_streak_and_its_freezes() -> None:
    chart = StudyChart(
        "x" * 80,  # a long Slack name is cut in the title, which shares its line
        date(2026, 3, 20),
        {date(2026, 3, 18): 3},
        (TagBar("autograd", 5, 4, 5, 0.8),),
        0.9,
        streak=16,
        freezes=1,
        freezes_used=2,
    )
    assert chart.streak_line == "Streak 16 days · freezes: 1 held, 2 used"
    png = draw_study_chart(chart)
    assert png.startswith(b"\x89PNG\r\n")
    from matplotlib.image import imread

    assert imread(io.BytesIO(png)).shape[1] == 960  # 8 in at 120 dpi


def test_the_retention_bars_say_what_they_leave_out_once_and_end_at_100_percent() -> None:
    tags = [TagBar(f"tag{i}", 20 - i, 3 if i % 3 == 0 else 0, 4 if i % 3 == 0 else 0, 0.05 * i)
            for i in range(11)]  # fmt: skip
    chart = StudyChart("ann", date(2026, 3, 20), {date(2026, 3, 18): 3}, tags, 0.9)
    svg = draw_study_chart(chart, fmt="svg").decode()
    assert "and 3 more tags" in svg  # 8 bars of 11 tags
    # Said once under the bars, not beside each tag without such a review (5 of the 8).
    assert svg.count("no review a day apart yet") == 1
    # A share's axis ends at 100% (it ran on to 125%, past its last tick, for the labels).
    from matplotlib.figure import Figure

    from bot.services.studychart import _bars

    ax = Figure().add_subplot()
    _bars(ax, chart)
    assert ax.get_xlim() == (0.0, 1.0)
