"""Start-up and shutdown: fail fast with one readable line, Socket Mode and HTTP run until stopped."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.adapters.slack import SlackAdapter, SlackMode
from bot.core.startup import StartupError
from bot.services.bundle import Services
from tests.adapters.slack.conftest import slack_settings
from tests.conftest import TEST_PACKS
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_fixtures import post_signed

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize(
    ("overrides", "http_port", "problem"),
    [
        ({"slack_bot_token": None}, None, "SLACK_BOT_TOKEN is not set"),
        (
            {"slack_app_token": None, "slack_signing_secret": None},
            None,
            "set SLACK_APP_TOKEN (xapp-..., Socket Mode",
        ),
        ({"slack_app_token": None}, None, "SLACK_SIGNING_SECRET is set but --http PORT is not"),
        ({"slack_signing_secret": None}, 3000, "--http needs SLACK_SIGNING_SECRET"),
    ],
)
def test_missing_settings_fail_fast(
    slack_fake: FakeSlack,
    slack_service: Services,
    overrides: dict[str, object],
    http_port: int | None,
    problem: str,
) -> None:
    with pytest.raises(StartupError) as info:
        SlackAdapter(slack_service, slack_settings(slack_fake, **overrides), http_port=http_port)
    assert problem in str(info.value)
    assert slack_fake.calls == []


def test_mode_is_socket_by_default_and_http_with_a_port(
    slack_fake: FakeSlack, slack_service: Services
) -> None:
    assert SlackAdapter(slack_service, slack_settings(slack_fake)).mode is SlackMode.SOCKET
    http = SlackAdapter(slack_service, slack_settings(slack_fake), http_port=8080)
    assert http.mode is SlackMode.HTTP


async def test_bad_bot_token_fails_at_start(slack_fake: FakeSlack, slack_service: Services) -> None:
    settings = slack_settings(slack_fake, slack_bot_token="xoxb-not-the-right-token")
    adapter = SlackAdapter(slack_service, settings)
    with pytest.raises(StartupError) as info:
        await adapter.start()
    assert str(info.value) == "SLACK_BOT_TOKEN was refused by Slack (auth.test: invalid_auth)"
    assert slack_fake.calls_to("apps.connections.open") == []


async def test_bad_app_token_fails_at_start_instead_of_retrying_forever(
    slack_fake: FakeSlack, slack_service: Services
) -> None:
    settings = slack_settings(slack_fake, slack_app_token="xapp-1-wrong")
    adapter = SlackAdapter(slack_service, settings)
    async with asyncio.timeout(5):
        with pytest.raises(StartupError, match=r"apps\.connections\.open: invalid_auth"):
            await adapter.start()
    assert slack_fake.socket_connections == []
    bot_token_as_app_token = slack_settings(slack_fake, slack_app_token=slack_fake.bot_token)
    with pytest.raises(StartupError, match="not_allowed_token_type"):
        await SlackAdapter(slack_service, bot_token_as_app_token).start()


async def test_unreachable_api_fails_at_start(slack_service: Services, tmp_path: Path) -> None:
    async with FakeSlack() as fake:
        settings = slack_settings(fake, slack_api_url="http://127.0.0.1:9/api/")
    with pytest.raises(StartupError, match=r"cannot reach the Slack API at http://127\.0\.0\.1:9"):
        await SlackAdapter(slack_service, settings).start()


async def test_socket_mode_runs_until_stopped(
    slack_fake: FakeSlack, slack_service: Services
) -> None:
    adapter = SlackAdapter(slack_service, slack_settings(slack_fake))
    task = asyncio.create_task(adapter.run())
    await asyncio.wait_for(adapter.ready.wait(), 5)
    assert adapter.team_name  # from auth.test, used as the workspace name
    connection = await slack_fake.wait_for_socket_connection()
    assert [c.method for c in slack_fake.calls][:2] == ["auth.test", "apps.connections.open"]
    assert adapter.is_connected()  # the health check's "gateway"

    handle = await slack_fake.socket_send_request(slack_fake.slash_command(text="quiz slack-mc"))
    ack = await handle.ack(timeout=3)
    assert ack.payload is None and ack.latency < 3
    post = await slack_fake.wait_for_call("chat.postMessage")
    assert post.ok and post.token == slack_fake.bot_token

    await adapter.stop()
    assert not adapter.is_connected()
    await asyncio.wait_for(task, 15)
    assert not connection.open
    assert not adapter.ready.is_set()


async def test_http_mode_serves_slack_events_until_stopped(
    slack_fake: FakeSlack, slack_service: Services
) -> None:
    adapter = SlackAdapter(
        slack_service, slack_settings(slack_fake), http_port=0, http_host="127.0.0.1"
    )
    task = asyncio.create_task(adapter.run())
    await asyncio.wait_for(adapter.ready.wait(), 5)
    assert adapter.http_url is not None and adapter.http_url.endswith("/slack/events")
    assert slack_fake.calls_to("apps.connections.open") == []  # no Socket Mode in HTTP mode

    request = slack_fake.slash_command(text="help")
    status, _, _ = await post_signed(
        adapter.http_url, request, slack_fake.signing_secret, valid=False
    )
    assert status == 401
    status, _, _ = await post_signed(adapter.http_url, request, slack_fake.signing_secret)
    assert status == 200
    await slack_fake.wait_for_response_url_call()

    await adapter.stop()
    await asyncio.wait_for(task, 15)
    assert slack_fake.socket_connections == []


def _cli_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "STUDYBOT_"))}
    env.update(STUDYBOT_DB=str(tmp_path / "cli.sqlite3"), STUDYBOT_PACKS=str(TEST_PACKS))
    env.update(extra)
    return env


def test_cli_missing_token_is_one_readable_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "run", "--platform", "slack"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
        env=_cli_env(tmp_path),
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("studybot: SLACK_BOT_TOKEN is not set: install the app")


async def test_cli_bad_token_is_one_line_without_the_token(
    slack_fake: FakeSlack, tmp_path: Path
) -> None:
    wrong = "xoxb-9999-secret-wrong-token"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "run",
        "--platform",
        "slack",
        cwd=tmp_path,
        env=_cli_env(
            tmp_path,
            SLACK_BOT_TOKEN=wrong,
            SLACK_APP_TOKEN=slack_fake.app_token,
            SLACK_API_URL=slack_fake.api_url,
        ),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    stderr = err.decode()
    assert proc.returncode == 2, stderr
    assert stderr.strip().splitlines()[-1] == (
        "studybot: SLACK_BOT_TOKEN was refused by Slack (auth.test: invalid_auth)"
    )
    assert "Traceback" not in stderr and wrong not in stderr


async def test_socket_mode_reconnects_when_slack_asks(
    slack_fake: FakeSlack, slack_service: Services
) -> None:
    adapter = SlackAdapter(slack_service, slack_settings(slack_fake), ping_interval=1.0)
    task = asyncio.create_task(adapter.run())
    try:
        await asyncio.wait_for(adapter.ready.wait(), 5)
        first = await slack_fake.wait_for_socket_connection()
        await slack_fake.socket_disconnect("refresh_requested")
        second = await slack_fake.wait_for_socket_connection(count=2, timeout=10)
        assert second is not first
        handle = await slack_fake.socket_send_request(slack_fake.slash_command(text="help"))
        await handle.ack(timeout=3)
        await slack_fake.wait_for_response_url_call()
    finally:
        await adapter.stop()
        await asyncio.wait_for(task, 15)
