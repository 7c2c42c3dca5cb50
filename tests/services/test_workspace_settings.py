"""/settings: admins change the workspace's timezone, quiz window and points in chat.

The environment only seeds a new workspace; a timezone change takes over at the next local
midnight of the new zone (so a day in progress ends where it started) and nothing earned is
rewritten; every change is logged with who made it.
"""

from __future__ import annotations

import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.adapters.commands import settings_request
from bot.app import build_services
from bot.core.clock import SimulatedClock
from bot.core.errors import BadInput, Forbidden
from bot.doctor import Status, timezone_checks
from bot.questions.loader import load_packs
from bot.services.bundle import Services
from bot.storage.database import Database, open_database
from tests.conftest import TEST_PACKS
from tests.helpers import member, schedule_command

ANN = member("ann")
ADMIN = member("root", admin=True)


async def _service(db: Database, clock: SimulatedClock, **kwargs: object) -> Services:
    service = build_services(db, clock, rng=random.Random(7), **kwargs).services  # type: ignore[arg-type]
    await service.packs.sync(load_packs(TEST_PACKS).packs)
    return service


async def _answer_medium(service: Services, who: str = "B") -> str:
    draft = await service.quiz.post_question(ANN, pack="mini", difficulty="medium")
    return (await service.quiz.answer(ANN, draft.post.id, who)).plain_text()


async def test_members_see_the_settings_and_only_admins_change_them(
    service: Services,
) -> None:
    listing = (await service.settings.command(ANN, settings_request("console", []))).plain_text()
    assert "timezone: UTC" in listing and "quiz-window: no limit" in listing
    assert "points-easy: 10" in listing and "points-hard: 30" in listing
    with pytest.raises(Forbidden, match="Only admins can change `timezone`"):
        await service.settings.command(
            ANN, settings_request("console", ["timezone", "Europe/Berlin"])
        )
    one = (
        await service.settings.command(ANN, settings_request("console", ["points-hard"]))
    ).plain_text()
    assert one.startswith("points-hard: 30 — points for a correct hard answer")


async def test_a_new_timezone_takes_over_at_its_next_midnight_without_breaking_a_day(
    service: Services, clock: SimulatedClock
) -> None:
    # Wednesday 4 March 2026, 09:00 UTC. Tokyo is UTC+9: its next midnight is 15:00 UTC.
    await _answer_medium(service)
    assert "Streak: 1 day" in (await service.standings.stats(ANN, picture=False)).plain_text()
    reply = await service.settings.command(
        ADMIN, settings_request("console", ["timezone", "asia/tokyo"])
    )
    text = reply.plain_text()
    assert reply.ephemeral and "timezone: UTC → Asia/Tokyo." in text
    assert "from Thu 05 Mar 00:00 (Asia/Tokyo); until then they end as before (UTC)" in text
    clock.advance(timedelta(hours=5))  # 14:00 UTC = 23:00 in Tokyo, but still UTC's Wednesday
    await _answer_medium(service)
    assert "Streak: 1 day" in (await service.standings.stats(ANN, picture=False)).plain_text()
    listing = (await service.settings.command(ANN, settings_request("console", []))).plain_text()
    assert "(until Thu 05 Mar 00:00 Asia/Tokyo, days still end in UTC)" in listing
    clock.advance(timedelta(hours=2))  # 16:00 UTC = Thursday 01:00 in Tokyo: a new day
    await _answer_medium(service)
    stats = (await service.standings.stats(ANN, picture=False)).plain_text()
    assert "Streak: 2 days" in stats  # in UTC it would still be Wednesday: 1 day
    assert await service.places.timezone(ANN) == "Asia/Tokyo"
    # New schedules default to the new zone.
    added = await schedule_command(service, ADMIN, "add", ["10:00"])
    assert "Asia/Tokyo" in added.message.plain_text()


async def test_quiz_window_and_points_apply_to_what_comes_next(
    service: Services, clock: SimulatedClock
) -> None:
    before = await service.quiz.post_question(ANN, pack="mini", difficulty="medium")
    assert before.post.closes_at is None  # the test service has no QUIZ_WINDOW
    reply = (
        await service.settings.command(ADMIN, settings_request("console", ["quiz-window", "45m"]))
    ).plain_text()
    assert "quiz-window: no limit → 45m" in reply
    after = await service.quiz.post_question(ANN, pack="mini", difficulty="medium")
    assert after.post.closes_at == clock.now() + timedelta(minutes=45)

    changed = (
        await service.settings.command(ADMIN, settings_request("console", ["points-medium", "25"]))
    ).plain_text()
    assert "points-medium: 20 → 25" in changed
    feedback = (await service.quiz.answer(ANN, after.post.id, "B")).plain_text()
    assert "+25" in feedback
    assert "Points: 25 all time" in (await service.standings.stats(ANN, picture=False)).plain_text()


async def test_bad_values_name_the_setting_and_what_was_expected(service: Services) -> None:
    cases = {
        ("timezone", "Europe/Berlinn"): "did you mean Europe/Berlin",
        ("quiz-window", "10s"): "`quiz-window` must be between 1m and 7d, not 10s",
        ("quiz-window", "soon"): "expected a duration like `45m` or `2h`",
        ("points-easy", "lots"): "`points-easy` takes a whole number of points (0 to 1000)",
        ("points-hard", "5000"): "must be 0 to 1000 points, not 5000",
        ("colour", "blue"): "`colour` is not a setting; the settings are `timezone`",
    }
    for (name, value), expected in cases.items():
        with pytest.raises(BadInput, match=expected.replace("(", r"\(").replace(")", r"\)")):
            await service.settings.command(ADMIN, settings_request("console", [name, value]))
    listing = (await service.settings.command(ANN, settings_request("console", []))).plain_text()
    assert "timezone: UTC" in listing and "points-easy: 10" in listing  # nothing changed
    warned = (
        await service.settings.command(ADMIN, settings_request("console", ["timezone", "EST"]))
    ).plain_text()
    assert "⚠️ EST is a legacy zone name" in warned and "America/New_York" in warned


async def test_changes_are_logged_and_survive_a_restart(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    service = await _service(db, clock, default_timezone="UTC", quiz_window=timedelta(minutes=30))
    assert (
        "No setting has been changed"
        in (
            await service.settings.command(ANN, settings_request("console", ["history"]))
        ).plain_text()
    )
    await service.settings.command(
        ADMIN, settings_request("console", ["timezone", "Europe/Berlin"])
    )
    clock.advance(timedelta(minutes=5))
    await service.settings.command(ADMIN, settings_request("console", ["window", "1h30m"]))
    history = (
        (await service.settings.command(ANN, settings_request("console", ["history"])))
        .plain_text()
        .splitlines()
    )
    assert history[-2:] == [
        "2026-03-04 09:05 UTC · quiz-window: default → 1h30m by root",
        "2026-03-04 09:00 UTC · timezone: UTC → Europe/Berlin by root",
    ]
    # A new process on the same file, started with other defaults: the workspace keeps its own.
    again = await _service(db, clock, default_timezone="America/New_York")
    listing = (await again.settings.command(ANN, settings_request("console", []))).plain_text()
    assert "timezone: Europe/Berlin" in listing and "quiz-window: 1h30m" in listing


async def test_doctor_names_workspaces_that_do_not_follow_the_environment(
    tmp_path: Path, clock: SimulatedClock
) -> None:
    path = tmp_path / "bot.sqlite3"
    db = await open_database(path)
    try:
        service = await _service(db, clock, default_timezone="UTC")
        await service.settings.command(
            ANN, settings_request("console", [])
        )  # the workspace is created in UTC
    finally:
        await db.close()
    assert timezone_checks(path, "UTC") == []
    [check] = timezone_checks(path, "Europe/Berlin")
    assert check.status is Status.WARN
    assert "STUDYBOT_TIMEZONE=Europe/Berlin only applies to new workspaces" in check.detail
    assert (
        "test workspace ws1 uses UTC" in check.detail and "/settings timezone NAME" in check.detail
    )
    with sqlite3.connect(path) as conn:  # read-only: doctor changed nothing
        assert conn.execute("SELECT timezone FROM workspaces").fetchone()[0] == "UTC"


def test_next_local_midnight_across_zones() -> None:
    from zoneinfo import ZoneInfo

    from bot.core.workspace_settings import next_local_midnight

    noon = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)
    berlin = next_local_midnight(noon, ZoneInfo("Europe/Berlin"))
    assert berlin == datetime(2026, 3, 28, 23, 0, tzinfo=UTC)  # CET, the night before DST
    after_dst = next_local_midnight(berlin + timedelta(hours=1), ZoneInfo("Europe/Berlin"))
    assert after_dst == datetime(2026, 3, 29, 22, 0, tzinfo=UTC)  # CEST
