"""The crash-mid-send rule, reason by reason (the scheduler's tests cover it end to end)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.core.resend import Unconfirmed, why_not_resend

NOW = datetime(2026, 3, 4, 9, 5, tzinfo=UTC)
GRACE = timedelta(hours=2)


def post(**changes: object) -> Unconfirmed:
    base: dict[str, object] = {
        "occurrence": datetime(2026, 3, 4, 9, 0, tzinfo=UTC),
        "resent": False,
        "schedule_exists": True,
        "is_latest": True,
        "closes_at": datetime(2026, 3, 4, 9, 30, tzinfo=UTC),
    }
    base.update(changes)
    return Unconfirmed(**base)  # type: ignore[arg-type]


def test_a_fresh_unconfirmed_post_is_re_sent() -> None:
    assert why_not_resend(post(), NOW, GRACE) is None
    assert why_not_resend(post(closes_at=None), NOW, GRACE) is None


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"resent": True}, "it was re-sent once already"),
        ({"schedule_exists": False}, "its schedule was removed"),
        ({"is_latest": False}, "a newer question of its schedule exists"),
        (
            {"occurrence": datetime(2026, 3, 4, 7, 0, tzinfo=UTC)},
            "it is more than the 2:00:00 grace window late",
        ),
        ({"closes_at": datetime(2026, 3, 4, 9, 5, tzinfo=UTC)}, "its answer window is over"),
    ],
)
def test_each_reason_not_to_re_send(changes: dict[str, object], reason: str) -> None:
    assert why_not_resend(post(**changes), NOW, GRACE) == reason


def test_the_first_reason_wins() -> None:
    both = post(resent=True, schedule_exists=False)
    assert why_not_resend(both, NOW, GRACE) == "it was re-sent once already"
