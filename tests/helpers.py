"""Small helpers for tests (fixtures live in conftest.py)."""

from __future__ import annotations

from bot.core.models import ChatContext


def member(
    name: str, *, admin: bool = False, channel: str = "general", workspace: str = "ws1"
) -> ChatContext:
    """Who is acting: a member of a test workspace, in a channel."""
    return ChatContext(
        platform="test",
        workspace=workspace,
        channel=channel,
        member=f"id-{name}",
        member_name=name,
        is_admin=admin,
        channel_name=channel,
    )
