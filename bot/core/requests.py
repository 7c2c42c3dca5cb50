"""Typed requests: what a member asked for, parsed and checked once, at the front door.

The command table (:mod:`bot.adapters.commands`) turns typed words into these on the console
and Slack; Discord builds them from its app-command options. Services take them and never see
a list of words, so a new front door (a web form) builds the same request and gets the same
answer. Values are already valid for their type (a weekday is 0-6, a time is a time); what only
a service can judge (whether a timezone exists for this workspace's rules) it still judges.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import time

from bot.core.errors import BadInput
from bot.core.rewards import Metric
from bot.core.workspace_settings import Setting

__all__ = [
    "MAX_REASON",
    "MAX_TYPED",
    "AccommodationClear",
    "AccommodationRequest",
    "AccommodationSet",
    "AccommodationShow",
    "ExamClear",
    "ExamRequest",
    "ExamSet",
    "ExamShow",
    "RecapNow",
    "RecapOff",
    "RecapOn",
    "RecapRequest",
    "RecapShow",
    "Remind",
    "RemindOff",
    "RemindRequest",
    "RemindShow",
    "RewardAdd",
    "RewardRemove",
    "RewardsList",
    "RewardsPreview",
    "RewardsRequest",
    "RoundRequest",
    "RoundSkip",
    "RoundStart",
    "RoundStop",
    "SettingChange",
    "SettingShow",
    "SettingsHistory",
    "SettingsRequest",
    "SuggestionApprove",
    "SuggestionReject",
    "SuggestionsList",
    "SuggestionsRequest",
    "check_reason_length",
]

#: A reason a member or admin writes (a report's, a suggestion's rejection): at most this many
#: characters. Discord's option says so too, so its client stops a longer one.
MAX_REASON = 500
#: The longest typed answer read (``bot.questions.typed.MAX_ANSWER``; a test holds them equal).
MAX_TYPED = 200


def check_reason_length(reason: str) -> None:
    """Refuse a reason longer than :data:`MAX_REASON`, saying how long it is."""
    if len(reason) > MAX_REASON:
        raise BadInput(f"Keep the reason under {MAX_REASON} characters ({len(reason)} now).")


@dataclass(frozen=True, slots=True)
class RecapShow:
    """``recap``: what is set in this channel."""


@dataclass(frozen=True, slots=True)
class RecapOn:
    """``recap on DAY HH:MM``: post the weekly recap on this weekday (0 = Monday), local time."""

    weekday: int
    at: time


@dataclass(frozen=True, slots=True)
class RecapOff:
    """``recap off``."""


@dataclass(frozen=True, slots=True)
class RecapNow:
    """``recap now``: this week's recap, here, now."""


RecapRequest = RecapShow | RecapOn | RecapOff | RecapNow


@dataclass(frozen=True, slots=True)
class SettingShow:
    """``settings [NAME]``: every setting, or one."""

    setting: Setting | None = None


@dataclass(frozen=True, slots=True)
class SettingChange:
    """``settings NAME VALUE`` (admins): the value is checked by the setting's own rule."""

    setting: Setting
    value: str


@dataclass(frozen=True, slots=True)
class SettingsHistory:
    """``settings history``: who changed what, and when."""


SettingsRequest = SettingShow | SettingChange | SettingsHistory


@dataclass(frozen=True, slots=True)
class RemindShow:
    """``review remind`` alone: what is set."""


@dataclass(frozen=True, slots=True)
class Remind:
    """``review remind HH:MM [TZ]``: a daily DM at this local time (default: the workspace's
    timezone) on days when cards are due."""

    at: time
    timezone: str | None = None


@dataclass(frozen=True, slots=True)
class RemindOff:
    """``review remind off``."""


RemindRequest = RemindShow | Remind | RemindOff


@dataclass(frozen=True, slots=True)
class RoundStart:
    """``round start [PACK] [--questions N] [--seconds S] [--difficulty D] [--tag T]
    [--scoring speed|accuracy]``; None:
    the workspace's default (10 questions, 20 seconds)."""

    pack: str | None = None
    questions: int | None = None
    seconds: int | None = None
    difficulty: str | None = None
    tags: tuple[str, ...] = ()
    scoring: str | None = None  # ``speed`` or ``accuracy``; None: ``settings round-scoring``
    teams: int | None = None  # how many teams (2 to 8); None: every member for themselves
    talk: int | None = None  # seconds of team talk before each question (team rounds)
    # ``--teams @Red,@Blue``: one team per role, as typed; each adapter's gateway finds them.
    team_roles: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RoundStop:
    """``round stop``: the starter or an admin ends the round and gets the board so far."""


@dataclass(frozen=True, slots=True)
class RoundSkip:
    """``round skip``: a player votes to skip the open question (more than half of the
    members who answered the previous question skip it: revealed, and it scores nothing)."""


RoundRequest = RoundStart | RoundStop | RoundSkip


@dataclass(frozen=True, slots=True)
class ExamShow:
    """``exam``: the exam date here, its countdown and the caller's readiness."""


@dataclass(frozen=True, slots=True)
class ExamSet:
    """``exam set DATE [--tag T]... [--channel]`` (admins): the exam day (YYYY-MM-DD), the
    tags it covers (none: the whole course), for this channel only or the workspace."""

    date: str
    tags: tuple[str, ...] = ()
    channel: bool = False


@dataclass(frozen=True, slots=True)
class ExamClear:
    """``exam clear [--channel]`` (admins): no exam date any more."""

    channel: bool = False


@dataclass(frozen=True, slots=True)
class ExamPrep:
    """``exam prep on|off``: a member's own reviews aimed at the exam day."""

    on: bool


ExamRequest = ExamShow | ExamSet | ExamClear | ExamPrep


@dataclass(frozen=True, slots=True)
class AccommodationShow:
    """``accommodation``: an admin's list of them all; a member's own."""


@dataclass(frozen=True, slots=True)
class AccommodationSet:
    """``accommodation set MEMBER [--time FACTOR] [--fewer-choices]`` (admins)."""

    member: str
    time: str | None = None
    fewer_choices: bool = False


@dataclass(frozen=True, slots=True)
class AccommodationClear:
    """``accommodation clear MEMBER`` (admins)."""

    member: str


AccommodationRequest = AccommodationShow | AccommodationSet | AccommodationClear


@dataclass(frozen=True, slots=True)
class SuggestionsList:
    """``suggestions`` (admins): the members' questions waiting for a decision."""


@dataclass(frozen=True, slots=True)
class SuggestionApprove:
    """``suggestions approve ID`` (admins): add it to the ``community`` pack, credited."""

    id: int


@dataclass(frozen=True, slots=True)
class SuggestionReject:
    """``suggestions reject ID REASON`` (admins): the author is told the reason."""

    id: int
    reason: str


SuggestionsRequest = SuggestionsList | SuggestionApprove | SuggestionReject


@dataclass(frozen=True, slots=True)
class RewardsList:
    """``rewards`` or ``rewards list``: the workspace's role rewards."""


@dataclass(frozen=True, slots=True)
class RewardAdd:
    """``rewards add points|streak|reviews N ROLE`` (admins). ``role`` is the platform's id for
    the role or user group, read by the adapter from what was typed; ``role_name`` its name."""

    metric: Metric
    threshold: int
    role: str
    role_name: str


@dataclass(frozen=True, slots=True)
class RewardRemove:
    """``rewards remove ID`` (admins): the reward goes, and its role is taken back."""

    id: int


@dataclass(frozen=True, slots=True)
class RewardsPreview:
    """``rewards preview`` (admins): who would gain or lose what, changing nothing."""


RewardsRequest = RewardsList | RewardAdd | RewardRemove | RewardsPreview
