"""One timer for all timed work (issue 28, part 3): questions, reveals, recaps and reminders
are due sources of the one scheduler loop, so the console's ``/clock advance`` fires every kind
of timed work in time order, exactly as a running bot would.

Before, recaps and reminders were two polling loops beside the scheduler (not run in the
console at all), and the console delivered them after each command at the clock's final time:
a week's advance printed one reminder, at the end, after every question of the week.
"""

from __future__ import annotations

from pathlib import Path

from tests.adapters.test_console import _run_console


def test_a_week_of_clock_advance_fires_everything_in_time_order(tmp_path: Path) -> None:
    script = (
        "/schedule add 09:30 UTC daily --pack mini --window 1h\n"
        "/recap on fri 18:00\n"
        "/quiz mini --difficulty medium\n"
        "/answer A\n"  # wrong: the card stays due, so every day has a reminder
        "/review remind 19:00 UTC\n"
        "/clock advance 7d\n"
    )
    out = _run_console(tmp_path / "timer.sqlite3", script)
    week = [line for line in out if str(line["at"]) > "2026-03-04T09:00:00+00:00"]
    moments = [str(line["at"]) for line in week]
    assert moments == sorted(moments), moments  # in time order, whatever the kind

    def at(kind: str, text: str) -> list[str]:
        return [str(x["at"]) for x in week if x["kind"] == kind and text in str(x["text"])]

    reminders = at("dm", "due for review")
    assert reminders == [f"2026-03-{d:02d}T19:00:00+00:00" for d in range(4, 11)]
    [recap] = at("post", "Weekly recap")
    assert recap == "2026-03-06T18:00:00+00:00"  # Friday
    posts = [str(x["at"]) for x in week if x["kind"] == "post" and x["question_id"]]
    assert posts[:2] == ["2026-03-04T09:30:00+00:00", "2026-03-05T09:30:00+00:00"]
    reveals = [str(x["at"]) for x in week if x["kind"] == "edit"]
    assert "2026-03-04T10:30:00+00:00" in reveals  # each daily question closes after its hour
