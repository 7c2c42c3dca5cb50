"""`studybot doctor`, run as an operator would before starting the bot."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.conftest import TEST_PACKS
from tests.questions.test_loader import BAD
from tests.test_cli import studybot

pytestmark = pytest.mark.slow
GOOD_DISCORD = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.abcdefghijklmnopqrstuvwxyz0123456789AB"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "STUDYBOT_DB": str(tmp_path / "bot.sqlite3"),
        "STUDYBOT_PACKS": str(TEST_PACKS),
        **extra,
    }


def test_a_ready_machine_passes(tmp_path: Path) -> None:
    proc = studybot("doctor", env=_env(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "[  ok] settings: platform console"
    assert lines[1].startswith("[warn] database:") and "created at start" in lines[1]
    assert lines[2] == f"[  ok] packs: 1 pack(s), 6 item(s) in {TEST_PACKS}"
    assert lines[3].startswith("[  ok] time: ") and "UTC is" in lines[3]
    assert lines[4].startswith("[  ok] sandbox: isolation works")
    assert lines[-1] == "all checks passed"


def test_token_shapes_are_checked_without_printing_them(tmp_path: Path) -> None:
    bad = studybot(
        "doctor",
        "--platform",
        "discord",
        env=_env(tmp_path, DISCORD_TOKEN="not-a-token-value", SANDBOX_ENABLED="false"),
    )
    assert bad.returncode == 1
    assert "[FAIL] DISCORD_TOKEN: set, but does not look like a bot token" in bad.stdout
    assert "not-a-token-value" not in bad.stdout + bad.stderr
    good = studybot(
        "doctor",
        "--platform",
        "discord",
        env=_env(tmp_path, DISCORD_TOKEN=GOOD_DISCORD, SANDBOX_ENABLED="false"),
    )
    assert f"[  ok] DISCORD_TOKEN: set ({len(GOOD_DISCORD)} characters)" in good.stdout
    assert GOOD_DISCORD not in good.stdout + good.stderr
    slack = studybot(
        "doctor",
        "--platform",
        "slack",
        "--http",
        env=_env(tmp_path, SLACK_BOT_TOKEN="xoxp-user-token", SANDBOX_ENABLED="false"),
    )
    assert (
        "[FAIL] SLACK_BOT_TOKEN: set, but does not look like a bot token (xoxb-...)" in slack.stdout
    )
    assert "[FAIL] SLACK_SIGNING_SECRET: not set" in slack.stdout


def test_broken_packs_and_databases_fail_with_the_reason(tmp_path: Path) -> None:
    packs = tmp_path / "packs"
    packs.mkdir()
    (packs / "bad.yaml").write_text(BAD)
    db = tmp_path / "bot.sqlite3"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 99")
    proc = studybot(
        "doctor", env={**_env(tmp_path, SANDBOX_ENABLED="false"), "STUDYBOT_PACKS": str(packs)}
    )
    assert proc.returncode == 1
    assert f"[FAIL] packs: {packs / 'bad.yaml'}:9: Bad Id.id: ids are" in proc.stdout
    assert "(and 8 more); see `studybot questions lint" in proc.stdout
    assert f"[FAIL] database: {db}: schema 99 is newer than this studybot" in proc.stdout
    assert "[warn] sandbox: turned off (SANDBOX_ENABLED=false); /run disabled" in proc.stdout
    assert proc.stderr.strip().endswith("2 check(s) failed")


async def test_doctor_checks_the_postgresql_database_without_showing_its_password(
    tmp_path: Path,
) -> None:
    import asyncio

    from bot.storage.database import open_database
    from bot.storage.migrate import available_migrations
    from tests.conftest import fresh_schema

    async with fresh_schema() as url:
        empty = await asyncio.to_thread(studybot, "doctor", env=_env(tmp_path, DATABASE_URL=url))
        assert "[warn] database: " in empty.stdout and "created at start" in empty.stdout
        async with await open_database(url):  # a bot started once: migrated
            pass
        ready = await asyncio.to_thread(studybot, "doctor", env=_env(tmp_path, DATABASE_URL=url))
        assert ready.returncode == 0, ready.stdout + ready.stderr
        latest = available_migrations("postgresql")[-1].version
        assert "[  ok] database: postgresql://" in ready.stdout
        assert f"schema {latest}" in ready.stdout
    secret = "postgresql://studybot:hunter2@127.0.0.1:1/none"
    down = await asyncio.to_thread(studybot, "doctor", env=_env(tmp_path, DATABASE_URL=secret))
    assert down.returncode == 1
    assert "[FAIL] database: postgresql://studybot:***@127.0.0.1:1/none: cannot connect" in (
        down.stdout
    )
    assert "hunter2" not in down.stdout + down.stderr
