"""deploy/compose.yaml puts the admin web page behind Caddy (HTTPS), never on a public port of
its own."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_the_page_is_reached_only_through_the_reverse_proxy() -> None:
    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
    bot, caddy = compose["services"]["studybot"], compose["services"]["caddy"]
    assert caddy["profiles"] == ["web"]  # opt-in: `--profile web`
    assert not any("8765" in str(p) for p in bot.get("ports", []))
    assert bot["environment"]["WEB_HOST"] == "0.0.0.0"
    assert "./Caddyfile:/etc/caddy/Caddyfile:ro" in caddy["volumes"]
    caddyfile = (ROOT / "deploy" / "Caddyfile").read_text()
    assert "{$WEB_PUBLIC_URL}" in caddyfile
    assert "reverse_proxy studybot:{$WEB_PORT:8765}" in caddyfile
    assert "env_file" not in caddy  # the bot's tokens stay out of the proxy
