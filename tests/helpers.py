"""Small helpers for tests (fixtures live in conftest.py)."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from pathlib import Path

from bot.adapters.text_commands import run_schedule_command
from bot.core.models import ChatContext
from bot.services.bundle import Services
from bot.services.schedule_book import ScheduleReply


def free_port() -> int:
    """A loopback port that was free a moment ago, for a server a test starts."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


#: A one-question pack that no test pack has, for uploads and installs.
FRESH = (Path(__file__).parent / "data" / "uploads" / "fresh.yaml").read_text()


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


async def schedule_command(
    service: Services, ctx: ChatContext, verb: str, args: Sequence[str]
) -> ScheduleReply:
    """``schedule VERB ARGS...`` as typed in the console or Slack (the shared text grammar)."""
    return await run_schedule_command(service.schedules, ctx, verb, args)
