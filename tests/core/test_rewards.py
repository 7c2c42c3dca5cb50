"""The role reward rule: exactly the members at or above a threshold hold its reward."""

from __future__ import annotations

import pytest

from bot.core.errors import BadInput
from bot.core.rewards import Metric, Reward, Standing, parse_threshold, reward_changes
from bot.core.workspace_settings import Setting, parse_value

STREAK = Reward(1, Metric.STREAK, 7, "r1", "Week streak")
POINTS = Reward(2, Metric.POINTS, 500, "r2", "Scholar")


def _ann(points: int = 0, streak: int = 0, reviews: int = 0) -> Standing:
    return Standing(10, "u-ann", "ann", points, streak, reviews)


def _changes(standing: Standing, held: set[tuple[int, int]]) -> list[tuple[str, bool]]:
    return [
        (c.reward.role_name, c.gain) for c in reward_changes([STREAK, POINTS], [standing], held)
    ]


def test_reaching_a_threshold_exactly_gives_the_reward() -> None:
    assert _changes(_ann(points=500, streak=6), set()) == [("Scholar", True)]


def test_falling_below_takes_it_back_and_removals_come_first() -> None:
    held = {(1, 10)}
    assert _changes(_ann(points=500, streak=0), held) == [("Week streak", False), ("Scholar", True)]


def test_a_member_holding_what_they_should_changes_nothing() -> None:
    assert _changes(_ann(points=900, streak=8), {(1, 10), (2, 10)}) == []


def test_members_not_looked_at_keep_what_they_hold() -> None:
    assert reward_changes([STREAK], [], {(1, 99)}) == []


@pytest.mark.parametrize("typed", ["0", "-3", "ten", "1000001", ""])
def test_a_threshold_is_a_whole_number_in_range(typed: str) -> None:
    with pytest.raises(BadInput, match="whole number from 1 to 1,000,000"):
        parse_threshold(typed)


def test_amounts_read_naturally() -> None:
    assert Metric.STREAK.amount(1) == "1 streak day"
    assert Metric.POINTS.amount(500) == "500 points"


def test_reward_notices_is_channel_or_dm() -> None:
    assert parse_value(Setting.named("reward-notices"), "DM") == ("1", None)
    assert parse_value(Setting.REWARD_NOTICES, "channel") == ("0", None)
    with pytest.raises(BadInput, match="`reward-notices` is channel or dm, not `email`"):
        parse_value(Setting.REWARD_NOTICES, "email")
