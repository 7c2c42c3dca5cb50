"""The admin page inside the bot's process (`studybot run --web-port`), over the bot's own
services; and where `studybot web` may listen."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from bot.app import Wiring
from bot.cli import app as cli
from bot.core.models import ChatContext
from bot.core.startup import StartupError
from bot.services.web_access import Person
from bot.settings import Settings


def settings_for(tmp_path: Path, **more: object) -> Settings:
    return Settings(
        _env_file=None,
        db_path=tmp_path / "bot.sqlite3",
        packs_dir=tmp_path / "packs",
        sandbox_enabled=False,
        **more,
    )


async def test_run_serves_the_page_over_its_own_services(tmp_path: Path) -> None:
    wiring = Wiring()
    settings = settings_for(tmp_path)
    async with wiring.runtime(settings, sandbox_on=False) as runtime:
        ctx = ChatContext(
            platform="console",
            workspace="console",
            channel="general",
            member="me",
            member_name="me",
            is_admin=True,
            channel_name="general",
        )
        await runtime.services.places.channel(ctx)
        async with wiring.embedded_web(runtime, "127.0.0.1", 0) as port:
            assert port is not None
            web = runtime.services.web
            workspaces = await web.console_workspaces()
            token = await web.make_link_token(Person("console", "me", "me"), workspaces)
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
                for _ in range(100):  # until uvicorn listens on the bound socket
                    try:
                        page = await client.get(f"/signin?token={token}")
                        break
                    except httpx.ConnectError:
                        await asyncio.sleep(0.05)
                assert page.status_code == 200
        assert all(t.get_name() != "admin-web-page" for t in asyncio.all_tasks())


async def test_beyond_loopback_only_with_oauth_sign_in(tmp_path: Path) -> None:
    wiring = Wiring()
    async with wiring.runtime(settings_for(tmp_path), sandbox_on=False) as runtime:
        with pytest.raises(StartupError, match="loopback only"):
            wiring.web_server(runtime, host="0.0.0.0", port=0)
        _server, sock = wiring.web_server(runtime, host="127.0.0.1", port=0)
        sock.close()
    configured = settings_for(
        tmp_path,
        web_public_url="https://admin.example.org",
        discord_client_id="1",
        discord_client_secret="secret",
    )
    async with wiring.runtime(configured, sandbox_on=False) as runtime:
        _server, sock = wiring.web_server(runtime, host="0.0.0.0", port=0)
        sock.close()


def test_the_options_are_documented() -> None:
    runner = CliRunner()
    run_help = runner.invoke(cli, ["run", "--help"], obj=Wiring(), terminal_width=200)
    assert "--web-port" in run_help.output and "--web-host" in run_help.output
    web_help = runner.invoke(cli, ["web", "--help"], obj=Wiring(), terminal_width=200)
    assert "--host" in web_help.output
