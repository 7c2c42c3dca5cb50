"""The crash-mid-send rule, as a pure verdict: may an unconfirmed scheduled post be re-sent?

A process that died between inserting a scheduled post and hearing back from the platform
leaves a post that may or may not show in its channel. The scheduler re-sends it once, while
that still makes sense, and otherwise closes it quietly (a reveal of a question nobody saw
helps no one). The rule lives here, apart from the I/O that gathers its inputs, so that each
reason is tested on its own (``tests/core/test_resend.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

__all__ = ["Unconfirmed", "why_not_resend"]


@dataclass(frozen=True, slots=True)
class Unconfirmed:
    """What is known about an unconfirmed post when deciding."""

    occurrence: datetime  # when its schedule was due
    resent: bool  # re-sent once already
    schedule_exists: bool
    is_latest: bool  # no newer post of its schedule exists
    closes_at: datetime | None


def why_not_resend(post: Unconfirmed, now: datetime, grace: timedelta) -> str | None:
    """The reason not to re-send ``post`` now, or None when a re-send makes sense."""
    if post.resent:
        return "it was re-sent once already"
    if not post.schedule_exists:
        return "its schedule was removed"
    if not post.is_latest:
        return "a newer question of its schedule exists"
    if now - post.occurrence > grace:
        return f"it is more than the {grace} grace window late"
    if post.closes_at is not None and post.closes_at <= now:
        return "its answer window is over"
    return None
