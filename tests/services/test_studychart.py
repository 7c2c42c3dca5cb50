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
