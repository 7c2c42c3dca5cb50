"""Small helpers for tests (fixtures live in conftest.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bot.adapters.text_commands import run_schedule_command
from bot.core.models import ChatContext
from bot.services.schedule_book import ScheduleReply
from bot.services.study import StudyService

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
    service: StudyService, ctx: ChatContext, verb: str, args: Sequence[str]
) -> ScheduleReply:
    """``schedule VERB ARGS...`` as typed in the console or Slack (the shared text grammar)."""
    return await run_schedule_command(service.schedules, ctx, verb, args)
