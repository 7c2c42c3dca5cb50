"""`studybot doctor` on the admin web page: its port, its public URL (https unless loopback;
a base URL the redirect URIs are built on), and the sign-in settings that go together."""

from __future__ import annotations

import socket

import pytest

from bot.doctor import Status, web_checks
from bot.settings import Settings


def by_name(settings: Settings) -> dict[str, tuple[Status, str]]:
    return {c.name: (c.status, c.detail) for c in web_checks(settings)}


def test_nothing_is_said_when_the_page_is_not_configured() -> None:
    assert web_checks(Settings(_env_file=None)) == []


def test_the_public_url_must_be_https_unless_loopback() -> None:
    base = {"discord_client_id": "1", "discord_client_secret": "s", "discord_token": "t"}
    ok = by_name(Settings(_env_file=None, web_public_url="https://admin.example.org", **base))
    assert ok["WEB_PUBLIC_URL"][0] is Status.OK
    assert "https://admin.example.org/signin/discord/callback" in ok["WEB_PUBLIC_URL"][1]
    loop = by_name(Settings(_env_file=None, web_public_url="http://127.0.0.1:8765/", **base))
    assert loop["WEB_PUBLIC_URL"][0] is Status.OK
    for bad in (
        "http://admin.example.org",
        "https://admin.example.org/admin",
        "https://admin.example.org/?x=1",
        "ftp://admin.example.org",
    ):
        status, _ = by_name(Settings(_env_file=None, web_public_url=bad, **base))["WEB_PUBLIC_URL"]
        assert status is Status.FAIL, bad
    missing = by_name(Settings(_env_file=None, **base))
    assert missing["WEB_PUBLIC_URL"][0] is Status.FAIL


def test_half_a_client_and_a_missing_bot_token_are_told(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DISCORD_TOKEN", "SLACK_BOT_TOKEN"):  # settings read the environment too
        monkeypatch.delenv(name, raising=False)
    found = by_name(
        Settings(
            _env_file=None,
            web_public_url="https://a.example",
            slack_client_id="1",
            discord_client_id="2",
            discord_client_secret="x",
        )
    )
    assert found["Slack sign-in"][0] is Status.FAIL
    assert "SLACK_CLIENT_SECRET" in found["Slack sign-in"][1]
    assert found["Discord sign-in"][0] is Status.WARN  # no DISCORD_TOKEN: writes refused


def test_the_port_is_checked() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status, detail = by_name(Settings(_env_file=None, web_port=port))["WEB_PORT"]
        assert status is Status.WARN and "taken" in detail
    status, _ = by_name(Settings(_env_file=None, web_port=port))["WEB_PORT"]
    assert status is Status.OK
