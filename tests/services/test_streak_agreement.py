"""One streak number: ``scores export --csv`` and ``/stats`` agree, also once a streak lapsed.

The export used to print the stored ``streak_days`` (the streak as of the last answer), so a
member who stopped answering kept ``current_streak`` 1 there while ``/stats`` said 0.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

from bot.core.clock import SimulatedClock
from bot.core.scoring import replay_streak
from bot.services.bundle import Services
from bot.storage.database import Database
from bot.storage.scores import ScoreStore
from tests.conftest import TEST_PACKS
from tests.helpers import member

ANN = member("ann")
ADMIN = member("root", admin=True)
CURRENT_STREAK = 8  # the column of an export row (EXPORT_HEADER in bot/cli.py)


async def _both(service: Services, db: Database, clock: SimulatedClock) -> tuple[int, int]:
    report = await service.standings.member_report(ANN)
    rows = await ScoreStore(db).export_rows(now=clock.now())
    (row,) = [r for r in rows if r[4] == "ann"]
    return report.stats.current_streak, int(str(row[CURRENT_STREAK]))


async def test_export_and_stats_agree_before_and_after_a_lapse(
    service: Services, db: Database, clock: SimulatedClock
) -> None:
    post = await service.quiz.post_question(ADMIN, pack="mini", difficulty="medium")  # B is right
    await service.quiz.answer(ANN, post.post.id, "B")
    assert await _both(service, db, clock) == (1, 1)
    clock.advance(timedelta(days=1))  # yesterday's answer still carries the streak
    assert await _both(service, db, clock) == (1, 1)
    clock.advance(timedelta(days=1))  # a whole day without an answer: lapsed
    assert await _both(service, db, clock) == (0, 0)


def test_the_csv_export_says_0_for_a_streak_that_lapsed_long_ago(tmp_path: Path) -> None:
    """The real commands: one answer on a simulated day in January, exported months later."""
    root = Path(__file__).resolve().parents[2]
    db = tmp_path / "s.sqlite3"
    console = [sys.executable, "-m", "bot", "console", "--db", str(db), "--packs", str(TEST_PACKS)]
    subprocess.run(
        [*console, "--clock", "2026-01-05T09:00:00+00:00"],
        input="/quiz mini --difficulty medium\n/answer B\n/quit\n",
        capture_output=True, text=True, cwd=root, timeout=120, check=True,
    )  # fmt: skip
    export = subprocess.run(
        [sys.executable, "-m", "bot", "scores", "export", "--csv", "--db", str(db)],
        capture_output=True, text=True, cwd=root, timeout=60, check=True,
    )  # fmt: skip
    header, row = export.stdout.splitlines()[:2]
    fields = dict(zip(header.split(","), row.split(","), strict=True))
    assert (fields["current_streak"], fields["best_streak"]) == ("0", "1"), export.stdout


async def test_export_and_stats_agree_across_a_frozen_day(
    service: Services, db: Database, clock: SimulatedClock
) -> None:
    """Seven days in a row earn a freeze; the missed eighth day is covered by it, so both
    say 7 (a frozen day does not add to the streak); a ninth answer makes it 8."""
    for _ in range(7):
        post = await service.quiz.post_question(ADMIN, pack="mini", difficulty="medium")
        await service.quiz.answer(ANN, post.post.id, "A")
        clock.advance(timedelta(days=1))
    assert await _both(service, db, clock) == (7, 7)
    clock.advance(timedelta(days=1))  # the day just over had no answer: frozen
    assert await _both(service, db, clock) == (7, 7)
    report = await service.standings.member_report(ANN)
    assert (report.stats.freezes, report.stats.freezes_used) == (0, 1)
    rows = await ScoreStore(db).export_rows(now=clock.now())
    (row,) = [r for r in rows if r[4] == "ann"]
    assert row[-2:] == (0, 1)  # freezes_held, freezes_used
    post = await service.quiz.post_question(ADMIN, pack="mini", difficulty="medium")
    await service.quiz.answer(ANN, post.post.id, "A")
    assert await _both(service, db, clock) == (8, 8)
    # Deterministic: replaying the stored answer days gives the stored state, freezes included.
    rows = await db.fetchall(
        "SELECT a.local_day FROM answers a JOIN members m ON m.id = a.member_id"
        " WHERE m.display_name = 'ann' AND a.correct IS NOT NULL ORDER BY a.id"
    )
    replayed = replay_streak(date.fromisoformat(str(r[0])) for r in rows)
    stored = await ScoreStore(db).member_totals(report.stats.member_id, "all")
    assert stored is not None and stored.streak == replayed
    assert (replayed.days, replayed.freezes, replayed.freezes_used) == (8, 0, 1)
    clock.advance(timedelta(days=2))  # one missed day and no freeze left: lapsed
    assert await _both(service, db, clock) == (0, 0)
