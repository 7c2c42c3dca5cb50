"""`studybot doctor`, run as an operator would before starting the bot."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.conftest import TEST_PACKS
from tests.questions.test_loader import BAD
from tests.test_cli import ROOT, studybot

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
    assert lines[0].startswith("[warn] settings: platform console (STUDYBOT_PLATFORM is not")
    assert lines[1].startswith("[warn] database:") and "created at start" in lines[1]
    # The packs folder is named from where the command runs (the checkout), not from /.
    assert lines[2] == "[  ok] packs: 1 pack(s), 6 item(s) in tests/data/packs"
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

    # The sandbox's check is test_a_ready_machine_passes's (each run starts a real jail and
    # imports torch in it: seconds a call); here, as in the tests below, it is turned off.
    off = {"SANDBOX_ENABLED": "false"}
    async with fresh_schema() as url:
        empty = await asyncio.to_thread(
            studybot, "doctor", env=_env(tmp_path, DATABASE_URL=url, **off)
        )
        assert "[warn] database: " in empty.stdout and "created at start" in empty.stdout
        async with await open_database(url):  # a bot started once: migrated
            pass
        ready = await asyncio.to_thread(
            studybot, "doctor", env=_env(tmp_path, DATABASE_URL=url, **off)
        )
        assert ready.returncode == 0, ready.stdout + ready.stderr
        latest = available_migrations("postgresql")[-1].version
        assert "[  ok] database: postgresql://" in ready.stdout
        assert f"schema {latest}" in ready.stdout
    secret = "postgresql://studybot:hunter2@127.0.0.1:1/none"
    down = await asyncio.to_thread(
        studybot, "doctor", env=_env(tmp_path, DATABASE_URL=secret, **off)
    )
    assert down.returncode == 1
    assert "[FAIL] database: postgresql://studybot:***@127.0.0.1:1/none: cannot connect" in (
        down.stdout
    )
    assert "hunter2" not in down.stdout + down.stderr


def test_doctor_checks_the_platform_is_set_for_a_server(tmp_path: Path) -> None:
    """Unset (console by default) or console with no terminal: `run` would refuse, so say
    what to set; a server platform that is set is fine."""
    off = {"SANDBOX_ENABLED": "false"}
    unset = studybot("doctor", env=_env(tmp_path, **off)).stdout.splitlines()[0]
    assert unset == (
        "[warn] settings: platform console (STUDYBOT_PLATFORM is not set): `studybot run` "
        "chats in a terminal and refuses without one; a server sets "
        "STUDYBOT_PLATFORM=discord or STUDYBOT_PLATFORM=slack"
    )
    console = studybot("doctor", env=_env(tmp_path, STUDYBOT_PLATFORM="console", **off))
    assert console.stdout.splitlines()[0].startswith(
        "[warn] settings: platform console (STUDYBOT_PLATFORM=console): no terminal here, "
    ), console.stdout
    discord = studybot(
        "doctor", env=_env(tmp_path, STUDYBOT_PLATFORM="discord", DISCORD_TOKEN=GOOD_DISCORD, **off)
    )
    assert discord.stdout.splitlines()[0] == "[  ok] settings: platform discord"


def test_doctor_counts_uploaded_packs_and_names_a_workspace_once(tmp_path: Path) -> None:
    """The packs uploaded or written in chat (beside the database) are counted too; a
    workspace with its own timezone reads "the console workspace", not "console console"."""
    db = tmp_path / "bot.sqlite3"
    env = _env(tmp_path, SANDBOX_ENABLED="false")
    assert studybot("console", stdin="/stats\n", env=env).returncode == 0
    uploads = tmp_path / "bot-packs"
    (uploads / "mine.yaml").write_text(
        (TEST_PACKS / "mini.yaml").read_text().replace("pack: mini", "pack: mine", 1)
    )
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE workspaces SET timezone = 'Europe/Berlin'")
    proc = studybot("doctor", env=env)
    assert (
        "[  ok] packs: 2 pack(s), 12 item(s): 1 in tests/data/packs, 1 uploaded or written in "
        f"chat in {uploads}"
    ) in proc.stdout, proc.stdout
    assert "the console workspace uses Europe/Berlin" in proc.stdout, proc.stdout
    assert "console console" not in proc.stdout


def test_the_quick_start_leaves_nothing_untracked_in_the_clone() -> None:
    """The default database and everything kept beside it (the packs uploaded in chat, the
    files the console saves) are ignored by git: the Quick start runs in the clone."""
    import shutil
    import subprocess

    from bot.settings import Settings

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    settings = Settings.model_validate({})
    beside_db = [settings.db_path, settings.uploads_dir / "x.yaml", settings.files_dir / "x.png"]
    for path in beside_db:
        proc = subprocess.run(
            ["git", "check-ignore", "-q", str(path)], cwd=ROOT, check=False, timeout=30
        )
        assert proc.returncode == 0, f"{path} is not ignored by .gitignore"


def test_a_pack_warning_is_named_not_just_counted(tmp_path: Path) -> None:
    """doctor used to say "1 warning(s)" and leave the operator to guess which."""
    packs = tmp_path / "packs"
    packs.mkdir()
    (packs / "mini.yaml").write_text((TEST_PACKS / "mini.yaml").read_text())
    # The same card under another id, in another pack: a near-duplicate, which is a warning.
    (packs / "again.yaml").write_text(
        "pack: again\ntitle: Again\nitems:\n  - id: again-1\n    kind: flashcard\n"
        "    difficulty: easy\n    prompt: What does requires_grad=True do?\n"
        "    answer: It makes autograd record operations on the tensor.\n"
    )
    proc = studybot(
        "doctor", env={**_env(tmp_path, SANDBOX_ENABLED="false"), "STUDYBOT_PACKS": str(packs)}
    )
    line = next(x for x in proc.stdout.splitlines() if x.startswith("[warn] packs: "))
    assert "warning(s)" not in line
    assert f"; {packs / 'mini.yaml'}:" in line and ": warning: " in line
    assert line.endswith(f"; see `studybot questions lint {packs}`")
