"""Role rewards through the console, as a member and an admin see them."""

from __future__ import annotations

from pathlib import Path

from tests.adapters.test_console import _run_console

_SETUP = "/as me --admin\n/rewards add streak 2 Regulars\n/rewards add reviews 1 Readers\n"
_DAY = "/as me\n/quiz mini --kinds mc\n/as ann\n/answer A\n/clock advance 1d\n"


def _texts(out: list[dict[str, object]], kind: str) -> list[str]:
    return [str(line["text"]) for line in out if line["kind"] == kind]


def test_a_streak_reward_is_given_on_day_two_and_taken_back_once_the_streak_lapses(
    tmp_path: Path,
) -> None:
    out = _run_console(
        tmp_path / "r.sqlite3",
        _SETUP + _DAY + _DAY + "/roles ann\n/clock advance 2d\n/roles ann\n/rewards list\n",
    )
    assert _texts(out, "role") == [
        "(role Readers given to ann)",  # her first answer is her first review, right or wrong
        "(role Regulars given to ann)",  # day 2 of her streak
        "(role Regulars taken from ann)",  # a whole day missed: the streak lapsed at midnight
    ]
    posts = [t for t in _texts(out, "post") if "Regulars" in t]
    assert len(posts) == 2  # said once each way, in the channel the reward was added in
    assert "ann earned Regulars" in posts[0] and "reached 2 streak days" in posts[0]
    assert "ann no longer holds Regulars" in posts[1] and "0 streak days" in posts[1]
    replies = _texts(out, "reply")
    assert "ann: Readers, Regulars" in replies
    assert replies[-2] == "ann: Readers"  # reviews done do not lapse
    assert "#1 · Regulars for 2 streak days or more" in replies[-1]


def test_only_admins_preview_and_a_settled_workspace_has_nothing_to_change(
    tmp_path: Path,
) -> None:
    out = _run_console(
        tmp_path / "p.sqlite3",
        _SETUP + _DAY + _DAY + "/as me\n/rewards preview\n/as ann\n/rewards preview\n",
    )
    # The one timer applies rewards right after each answer: nothing is left to change.
    assert "Nobody would gain or lose a role reward now." in _texts(out, "reply")
    refused = [str(line["text"]) for line in out if line["member"] == "ann"][-1]
    assert "Only admins can add, remove or preview role rewards" in refused


def test_bad_reward_lines_say_what_is_wrong(tmp_path: Path) -> None:
    out = _run_console(
        tmp_path / "b.sqlite3",
        "/as me --admin\n/rewards add streak 0 Regulars\n/rewards add colour 3 Regulars\n"
        "/rewards add points 5 Regulars\n/rewards add streak 3 Regulars\n/rewards remove 9\n",
    )
    said = [str(line["text"]) for line in out][1:]
    assert "threshold is a whole number from 1 to 1,000,000, not `0`" in said[0]
    assert "`colour` is not a metric" in said[1]
    assert "**Regulars** is a reward already (#1: points ≥ 5)" in said[3]
    assert "There is no reward #9 here" in said[4]
