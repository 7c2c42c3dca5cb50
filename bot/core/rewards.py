"""Role rewards, the rule: who should hold which reward, and what changes to get there.

An admin maps a threshold to a role (a Discord role, a Slack user group): ``points 500`` (all
time), ``streak 7`` (the current streak, in days) or ``reviews 100`` (reviews done). A member
at or above the threshold should hold the reward; below it (a streak that lapsed), not. The
rule compares that with who holds each reward now and returns the grants and removals, so
the service only applies them and a dry run (``/rewards preview``) shows the same list.

A reward must never hand out power: a role that lets its holders run the server (Administrator,
Manage Roles, Ban Members...) or run the bot (its admin role) would make anyone who answers a
question a moderator. Which powers those are, and how a refusal reads, is decided here, once
(:class:`Power`, :func:`power_problem`); each platform's adapter only reads which of them a
role carries.

Pure: no platform, no storage. The numbers are computed by the caller as members see them
(the streak as it stands today, :func:`bot.core.scoring.current_streak`).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.core.errors import BadInput

__all__ = [
    "MAX_REWARDS",
    "MAX_THRESHOLD",
    "Metric",
    "Power",
    "Reward",
    "RewardChange",
    "Standing",
    "parse_threshold",
    "power_problem",
    "reward_changes",
]

MAX_REWARDS = 25
"""Rewards one workspace may have: each is a role the bot manages."""
MAX_THRESHOLD = 1_000_000


class Metric(enum.StrEnum):
    """What a reward's threshold counts."""

    POINTS = "points"  # all-time points
    STREAK = "streak"  # the current streak, in days
    REVIEWS = "reviews"  # reviews done (answers graded as reviews, and /review cards)

    def amount(self, n: int) -> str:
        """``1 streak day``, ``30 points``: ``n`` of what this counts."""
        noun = {"points": "point", "streak": "streak day", "reviews": "review"}[self.value]
        return f"{n} {noun}{'' if n == 1 else 's'}"

    @classmethod
    def named(cls, typed: str) -> Metric:
        try:
            return cls(typed.strip().lower())
        except ValueError:
            names = ", ".join(f"`{m.value}`" for m in cls)
            raise BadInput(f"`{typed}` is not something a reward counts; use {names}.") from None


class Power(enum.StrEnum):
    """What a reward's role may never carry: power over the server or over the bot.

    The values are the names members see in their platform's settings (Discord's permission
    names), so a refusal names exactly what to switch off. ``BOT_ADMIN`` is a role that the
    bot's own settings make an admin role (``DISCORD_ADMIN_ROLE``, ``SLACK_ADMIN_USERGROUP``).
    """

    ADMINISTRATOR = "Administrator"
    MANAGE_SERVER = "Manage Server"
    MANAGE_ROLES = "Manage Roles"
    MANAGE_CHANNELS = "Manage Channels"
    MANAGE_WEBHOOKS = "Manage Webhooks"
    MANAGE_MESSAGES = "Manage Messages"
    KICK_MEMBERS = "Kick Members"
    BAN_MEMBERS = "Ban Members"
    MODERATE_MEMBERS = "Moderate Members"
    MENTION_EVERYONE = "Mention Everyone"
    BOT_ADMIN = "the bot's admin rights"


def power_problem(role_name: str, powers: Iterable[Power]) -> str | None:
    """Why a role carrying ``powers`` may not be a reward, in words for an admin; ``None``
    when it carries none. Asked when a reward is added or previewed and before every grant."""
    held = set(powers)
    if not held:
        return None
    permissions = [p.value for p in Power if p in held and p is not Power.BOT_ADMIN]
    parts = []
    if permissions:
        parts.append(f"has {_listed(permissions)}")
    if Power.BOT_ADMIN in held:
        parts.append("is an admin role of this bot")
    return (
        f"the role {role_name} {' and '.join(parts)}: a reward may not hand out power over the "
        "server or the bot (anyone who answers enough questions would get it)"
    )


def _listed(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


@dataclass(frozen=True, slots=True)
class Reward:
    id: int
    metric: Metric
    threshold: int
    role: str  # the platform's id of the role or user group (the console: its name)
    role_name: str
    channel: str = ""  # where it was added: channel notices go there
    suspended: str | None = None  # why it is neither given nor taken (a role that gained power)

    def describe(self) -> str:
        """``streak ≥ 7 days`` as a member reads it."""
        return f"{self.metric.value} ≥ {self.threshold}"


@dataclass(frozen=True, slots=True)
class Standing:
    """A member's numbers as they stand now."""

    member_id: int
    member: str  # platform id
    name: str
    points: int
    streak: int
    reviews: int

    def value(self, metric: Metric) -> int:
        return {Metric.POINTS: self.points, Metric.STREAK: self.streak}.get(metric, self.reviews)


@dataclass(frozen=True, slots=True)
class RewardChange:
    """One member gains (``gain``) or loses a reward."""

    standing: Standing
    reward: Reward
    gain: bool

    @property
    def value(self) -> int:
        return self.standing.value(self.reward.metric)


def parse_threshold(typed: str) -> int:
    """A reward's threshold: a whole number from 1 to :data:`MAX_THRESHOLD`."""
    text = typed.strip()
    if not text.isdigit() or not 1 <= int(text) <= MAX_THRESHOLD:
        raise BadInput(
            f"A reward's threshold is a whole number from 1 to {MAX_THRESHOLD:,}, not `{text}`."
        )
    return int(text)


def reward_changes(
    rewards: Sequence[Reward],
    standings: Iterable[Standing],
    held: Iterable[tuple[int, int]],
) -> list[RewardChange]:
    """What to grant and take back so that exactly the members at or above a reward's
    threshold hold it.

    ``held`` is every ``(reward id, member id)`` held now; only the members in ``standings``
    are judged (a member not looked at keeps what they hold). Removals come first, then
    grants, each in the order of ``rewards`` and then ``standings``.
    """
    holding = set(held)
    people = list(standings)
    losses: list[RewardChange] = []
    gains: list[RewardChange] = []
    for reward in rewards:
        for standing in people:
            should = standing.value(reward.metric) >= reward.threshold
            has = (reward.id, standing.member_id) in holding
            if should and not has:
                gains.append(RewardChange(standing, reward, gain=True))
            elif has and not should:
                losses.append(RewardChange(standing, reward, gain=False))
    return losses + gains
