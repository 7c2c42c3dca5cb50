"""``studybot invite-url`` and the operator-facing start-up errors, run as an operator would."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import discord

from bot.adapters.discord.invite import INVITE_PERMISSIONS, invite_url
from tests.conftest import TEST_PACKS
from tests.test_cli import studybot

EXPECTED = discord.Permissions(
    view_channel=True,
    send_messages=True,
    embed_links=True,
    attach_files=True,
    read_message_history=True,
    create_public_threads=True,
    send_messages_in_threads=True,
)


def test_invite_url_has_both_scopes_and_the_minimal_permissions() -> None:
    url = urlsplit(invite_url(1234))
    assert (url.scheme, url.netloc, url.path) == ("https", "discord.com", "/oauth2/authorize")
    query = parse_qs(url.query)
    assert query["client_id"] == ["1234"]
    assert query["scope"] == ["bot applications.commands"]
    assert query["permissions"] == [str(EXPECTED.value)] == ["309237763072"]
    assert INVITE_PERMISSIONS == EXPECTED
    assert not INVITE_PERMISSIONS.administrator and not INVITE_PERMISSIONS.manage_messages
    assert parse_qs(urlsplit(invite_url(1, guild_id=99)).query)["guild_id"] == ["99"]


def test_cli_invite_url_prints_the_url() -> None:
    proc = studybot("invite-url", env={"DISCORD_APPLICATION_ID": "1234"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == invite_url(1234)


def test_cli_invite_url_preselects_the_dev_guild() -> None:
    env = {"DISCORD_APPLICATION_ID": "1234", "DISCORD_DEV_GUILD": "42"}
    proc = studybot("invite-url", "--dev-guild", env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == invite_url(1234, guild_id=42)


def test_cli_invite_url_for_role_rewards_asks_for_manage_roles_too() -> None:
    proc = studybot("invite-url", "--rewards", env={"DISCORD_APPLICATION_ID": "1234"})
    assert proc.returncode == 0, proc.stderr
    asked = discord.Permissions(
        int(parse_qs(urlsplit(proc.stdout.strip()).query)["permissions"][0])
    )
    assert asked.manage_roles
    assert asked == EXPECTED | discord.Permissions(manage_roles=True)
    assert not asked.administrator and not asked.manage_messages
    assert not INVITE_PERMISSIONS.manage_roles  # the plain link stays minimal


def test_cli_invite_url_without_application_id_is_an_error(tmp_path: Path) -> None:
    proc = studybot("invite-url")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "DISCORD_APPLICATION_ID is not set" in proc.stderr


def test_run_discord_without_a_token_is_one_line_and_exit_2(tmp_path: Path) -> None:
    env = {"STUDYBOT_DB": str(tmp_path / "db.sqlite3"), "STUDYBOT_PACKS": str(TEST_PACKS)}
    proc = studybot("run", "--platform", "discord", env=env)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("studybot: DISCORD_TOKEN is not set; ")
