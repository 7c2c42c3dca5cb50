"""deploy/slack-manifest.yaml declares exactly what the adapter uses: create the app from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from bot.adapters.slack.commands import parse_study
from bot.adapters.slack.manifest import (
    BOT_EVENTS,
    BOT_SCOPES,
    METHOD_SCOPES,
    PACK_SHORTCUT_CALLBACK,
    RUN_SHORTCUT_CALLBACK,
    SLASH_COMMAND,
)

MANIFEST = Path(__file__).parents[3] / "deploy" / "slack-manifest.yaml"


def manifest() -> dict[str, Any]:
    data = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_scopes_are_exactly_the_ones_the_adapter_uses() -> None:
    scopes = manifest()["oauth_config"]["scopes"]["bot"]
    assert sorted(scopes) == sorted(BOT_SCOPES)
    assert len(scopes) == len(set(scopes))
    needed = {scope for scope in METHOD_SCOPES.values() if scope is not None}
    assert needed <= set(scopes)
    # commands: the slash command and the shortcut; chat:write.public: quiz in public channels
    assert set(scopes) - needed == {"commands", "chat:write.public"}


def test_slash_command_shortcut_events_and_modes() -> None:
    data = manifest()
    features, settings = data["features"], data["settings"]
    [command] = features["slash_commands"]
    assert command["command"] == SLASH_COMMAND
    assert command["should_escape"] is True  # mentions arrive as <@U…|name>, parsed to ids
    # Slack shows the hint as members type: every subcommand parse_study knows is in it
    subs = ("quiz", "leaderboard", "stats", "run", "pack list", "schedule list", "help")
    newer = ("review", "history", "question 1", "report x is wrong", "recap", "write", "settings")
    newer += ("round stop",)
    for sub in (*subs, *newer):
        assert sub.split()[0] in command["usage_hint"].split(" ")
        assert parse_study(sub).name == sub.split()[0]
    run, check_pack = features["shortcuts"]
    assert run == run | {"type": "message", "callback_id": RUN_SHORTCUT_CALLBACK}
    assert check_pack == check_pack | {"type": "message", "callback_id": PACK_SHORTCUT_CALLBACK}
    assert all(len(s["description"]) <= 80 and len(s["name"]) <= 24 for s in (run, check_pack))
    assert features["app_home"]["home_tab_enabled"] is True
    assert tuple(settings["event_subscriptions"]["bot_events"]) == BOT_EVENTS
    assert settings["interactivity"]["is_enabled"] is True
    assert settings["socket_mode_enabled"] is True
