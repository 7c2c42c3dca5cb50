"""`studybot review optimize|retention` and `studybot db check` replaying the review log."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.app import build_services
from bot.core.clock import SimulatedClock
from bot.core.srs import Grade, SrsSettings, review
from bot.questions.loader import load_packs
from bot.storage.database import open_database
from bot.storage.reviews import ReviewItem, ReviewStore
from tests.conftest import TEST_PACKS
from tests.test_cli import studybot

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


async def _simulated_log(path: Path, members: int, days: int, seed: int = 3) -> int:
    """Members who forget faster than FSRS's defaults assume, reviewing whenever a card is
    due (looking once a day) for ``days`` days. Returns how many reviews were written."""
    rng = random.Random(seed)
    clock = SimulatedClock(T0)
    async with await open_database(path) as db:
        built = build_services(db, clock)
        service = built.services
        await service.packs.sync(load_packs(TEST_PACKS).packs)
        workspace = await built.timed.directory.workspace("console", "console", "console", T0)
        questions = [int(r[0]) for r in await db.fetchall("SELECT id FROM questions")]
        settings = SrsSettings()
        items: list[ReviewItem] = []
        for m in range(members):
            row = await built.timed.directory.member(workspace, f"m{m}", f"m{m}", T0)
            for q in questions:
                card = None
                at = T0 + timedelta(hours=rng.randrange(0, 12))
                while at < T0 + timedelta(days=days):
                    if card is None:
                        recalled = rng.random() < 0.5
                    else:
                        elapsed = (at - card.last_review).total_seconds() / 86400
                        true_stability = 0.35 * (card.stability or 1.0)
                        recalled = rng.random() < 0.9 ** (elapsed / true_stability)
                    grade = Grade.GOOD if recalled else Grade.AGAIN
                    card, _ = review(card, grade, at, settings)
                    items.append(ReviewItem(workspace.id, row.id, q, grade, at))
                    # The member looks once a day, at 09:00 or later.
                    at = max(card.due, at + timedelta(minutes=1))
                    if card.due - card.last_review >= timedelta(hours=20):
                        at = at.replace(hour=9) + timedelta(days=1 if at.hour >= 9 else 0)
        async with db.write() as conn:
            await ReviewStore(db).record_in(conn, items)
        return len(items)


def test_db_check_replays_the_review_log(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    written = asyncio.run(_simulated_log(db, members=3, days=30))
    assert written > 30
    check = studybot("db", "check", "--db", str(db))
    assert check.returncode == 0, check.stderr
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE cards SET due = '2030-01-01T00:00:00.000000Z' WHERE (member_id, question_id) "
            "= (SELECT member_id, question_id FROM cards ORDER BY 1, 2 LIMIT 1)"
        )
        conn.execute("DELETE FROM cards WHERE question_id = (SELECT max(question_id) FROM cards)")
    check = studybot("db", "check", "--db", str(db))
    assert check.returncode == 1
    lines = check.stderr.strip().splitlines()
    assert any("replays to" in line for line in lines), lines
    assert sum("but no state" in line for line in lines) == 3, lines


def test_retention_is_set_per_workspace_and_reschedules(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    asyncio.run(_simulated_log(db, members=2, days=10))
    proc = studybot("review", "retention", "console", "0.8", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "desired retention 0.80; 12 card(s) rescheduled"
    assert studybot("db", "check", "--db", str(db)).returncode == 0
    bad = studybot("review", "retention", "console", "0.99", "--db", str(db))
    assert bad.returncode == 2 and "less than or equal to 0.97" in bad.stderr
    missing = studybot("review", "retention", "nowhere", "0.9", "--db", str(db))
    assert missing.returncode == 1 and "no workspace 'nowhere'" in missing.stderr


def test_optimize_with_too_little_to_fit(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    asyncio.run(_simulated_log(db, members=1, days=3))
    proc = studybot("review", "optimize", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    assert "not better, kept the current parameters" in proc.stdout or "nothing to fit" in (
        proc.stdout
    )


@pytest.mark.slow
def test_optimize_fits_the_log_and_stores_only_an_improvement(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    # The smallest log FSRS's optimizer fits: it returns its defaults unfitted below 512
    # reviews a day or more after the card's previous one (its mini-batch). 12 members over
    # 30 days write ~1,400 reviews, ~630 of them counted; each fit of the log replays every
    # review through torch five times, so a bigger log only makes the test slower (40 members
    # over 120 days wrote 33,000 reviews and took 40 s a fit).
    written = asyncio.run(_simulated_log(db, members=12, days=30))
    assert written < 2_000
    proc = studybot("review", "optimize", "--workspace", "console", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    print(proc.stdout)
    assert "improved, stored (cards rescheduled)" in proc.stdout
    with sqlite3.connect(db) as conn:
        params, loss = conn.execute("SELECT parameters, log_loss FROM review_settings").fetchone()
    assert params.startswith("[") and loss > 0
    assert studybot("db", "check", "--db", str(db)).returncode == 0
    # Fitting again from the fitted parameters finds nothing better to store, or a little.
    again = studybot("review", "optimize", "--db", str(db))
    assert again.returncode == 0 and "log-loss" in again.stdout
