"""Frozen value types shared by the core, storage and the adapters.

They are plain dataclasses on purpose: cheap to build in hot paths, hashable, and free of any
database or platform handle, so they can cross every boundary in the program unchanged.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import date, datetime

from bot.core.errors import BadInput
from bot.text import clean_text, id_problem

#: The longest display, channel or workspace name kept.
NAME_CHARS = 100

__all__ = [
    "Answer",
    "ChatContext",
    "Leaderboard",
    "LeaderboardRow",
    "MemberStats",
    "Post",
    "ReviewSummary",
    "Window",
]


@dataclass(frozen=True, slots=True)
class ChatContext:
    """Who is acting, and where: the identity every adapter hands to the service.

    ``workspace`` is a Discord guild id or a Slack team id, ``channel`` and ``member`` are the
    platform's own ids. ``is_admin`` is the adapter's reading of platform permissions
    (Manage Server, Slack admin/owner, a configured admin role); the core decides what it allows.
    ``command_prefix`` is how members type a command here (``/`` in the console, as for
    :func:`bot.core.replies.help_message`); empty, messages name commands bare (``quiz``).
    """

    platform: str
    workspace: str
    channel: str
    member: str
    member_name: str
    is_admin: bool = False
    channel_name: str | None = None
    workspace_name: str | None = None
    command_prefix: str = ""
    via: str = "chat"  # where the change came from, for the audit log: "chat" or "web"

    def __post_init__(self) -> None:
        # Ids are where every adapter's payload enters the core, and are kept as they are (a
        # cleaned id would be another member): one with a control character is refused here,
        # once for every adapter, before any engine sees it (PostgreSQL refuses NUL).
        for field, what in (
            ("workspace", "workspace"),
            ("channel", "channel"),
            ("member", "member"),
        ):
            value = getattr(self, field)
            problem = id_problem(value, f"The {what} id {value!r}")
            if problem is not None:
                raise BadInput(problem)
        # Names are what members typed into their platform profile: normalised here, once,
        # for every adapter and engine (no NUL for PostgreSQL, no lone surrogate for SQLite,
        # no control characters, at most NAME_CHARS).
        for name in ("member_name", "channel_name", "workspace_name"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, clean_text(value, NAME_CHARS))

    def command(self, text: str) -> str:
        """A command (``quiz``, ``pack list``) as a member types it here, in backticks."""
        return f"`{self.command_prefix}{text}`"


class Window(enum.StrEnum):
    """Leaderboard windows: local week (from Monday), local month, or all time."""

    WEEK = "week"
    MONTH = "month"
    ALL = "all"


@dataclass(frozen=True, slots=True)
class Post:
    """A question as posted in one channel."""

    id: int
    channel_id: int
    question_version_id: int
    question_id: str
    posted_at: datetime
    closes_at: datetime | None
    closed_at: datetime | None
    requested_by: int | None
    schedule_id: int | None
    platform_message_id: str | None
    round_id: int | None = None  # a live round's question (see bot.services.rounds)
    choice_seed: int | None = None  # the order its choices show in (bot.core.choice_order)
    # The usual end of an answer window held open past it for members with extra time
    # (``closes_at`` is then theirs); None: not extended.
    window_ends_at: datetime | None = None

    @property
    def is_open(self) -> bool:
        return self.closed_at is None


@dataclass(frozen=True, slots=True)
class Answer:
    """One member's recorded answer to one post (the first one; later clicks are refused)."""

    id: int
    post_id: int
    member_id: int
    choice: str
    correct: bool | None
    answered_at: datetime
    points: int


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    rank: int
    member_id: int
    display_name: str
    points: int
    answers: int


@dataclass(frozen=True, slots=True)
class StreakBoardRow:
    """One member on ``/leaderboard streaks``: the streak as it stands today, with its freezes
    as of today (held, and ever used: :func:`bot.core.scoring.streak_as_of`)."""

    rank: int
    member_id: int
    display_name: str
    days: int
    freezes: int
    freezes_used: int


@dataclass(frozen=True, slots=True)
class Leaderboard:
    window: Window
    since: datetime | None
    rows: tuple[LeaderboardRow, ...]
    caller: LeaderboardRow | None
    channel: str | None = None  # a channel's own board; None: the whole workspace's


@dataclass(frozen=True, slots=True)
class MemberStats:
    member_id: int
    display_name: str
    points_all: int
    points_week: int
    answered: int
    correct: int
    current_streak: int
    best_streak: int
    last_day: date | None
    rank_all: int | None
    freezes: int = 0  # streak freezes held today (each covers one missed day)
    freezes_used: int = 0  # ever used, today's count included


@dataclass(frozen=True, slots=True)
class ReviewSummary:
    """A member's spaced repetition: cards due now, true retention over the last 30 days
    (recalled of reviewed, counting reviews a day or more after the card's previous one), and
    per tag the number of cards and their mean predicted recall a week from now (mastery, 0..1)."""

    cards: int
    due: int
    recalled: int
    reviewed: int
    tags: tuple[tuple[str, int, float], ...]
