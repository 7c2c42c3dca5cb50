"""Live rounds: the rules of a timed game of questions in a channel, without I/O.

A round asks ``questions`` questions one at a time; each is open for ``seconds``, then revealed,
then the next follows after ``pause`` seconds. These are the pure parts: what a round may be
asked to be (checked once, where the request comes in), how a correct answer scores, when the
next step is due, and when a round gives up. The service (``bot/services/rounds.py``) keeps the
state and drives the steps from the one timer loop.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.core.errors import BadInput

__all__ = [
    "MAX_QUESTIONS",
    "MAX_SECONDS",
    "MIN_SECONDS",
    "QUIET_LIMIT",
    "ROUND_KINDS",
    "TEAM_NAMES",
    "Phase",
    "RoundSpec",
    "Scoring",
    "check_team_roles",
    "parse_round_spec",
    "pick_team",
    "role_team",
    "round_points",
    "team_names",
]

MIN_QUESTIONS, MAX_QUESTIONS = 1, 50
MIN_SECONDS, MAX_SECONDS = 5, 300
MIN_PAUSE, MAX_PAUSE = 0, 60
MIN_TEAMS, MAX_TEAMS = 2, 8
MIN_TALK, MAX_TALK = 5, 120
TEAM_NAMES = ("🔴 Red", "🔵 Blue", "🟢 Green", "🟡 Yellow", "🟣 Purple", "🟠 Orange", "⚫ Black",
              "⚪ White")  # fmt: skip
QUIET_LIMIT = 3
"""Questions in a row nobody answered, after which a round ends itself with a note."""
ROUND_KINDS = ("multiple_choice", "practice")
"""What a round asks: kinds answered by a click, and (unless ``round-typed off``) typed ones,
which race. Flashcards are self-graded and open prompts are not scored, so neither can."""
TYPED_KIND = "typed"
SPEED_BONUS = 0.5  # a correct answer in the first instant scores +50 %
HINT_SHARE = 0.25  # each hint taken costs a quarter of the question's points


class Phase(enum.StrEnum):
    """What the round's next step is: reveal the open question, or ask the next one."""

    ASK = "ask"
    REVEAL = "reveal"


class Scoring(enum.StrEnum):
    """How a round ranks its players. ``speed``: a right answer scores more the sooner it
    comes (the default, as Kahoot scores). ``accuracy``: every right answer scores its points
    and speed only breaks ties (the time of the right answers, summed), so a member who needs
    the whole window loses nothing but a tie."""

    SPEED = "speed"
    ACCURACY = "accuracy"

    @classmethod
    def named(cls, text: str) -> Scoring:
        try:
            return cls(text.strip().lower())
        except ValueError:
            raise BadInput(f"A round's scoring is `speed` or `accuracy`, not `{text}`.") from None


@dataclass(frozen=True, slots=True)
class RoundSpec:
    """How many questions, how long each is open, the pause between, and the speed bonus."""

    questions: int = 10
    seconds: int = 20
    pause: int = 5
    speed_bonus: bool = True
    typed: bool = True  # typed questions are asked too (the first right answer wins the bonus)
    scoring: Scoring = Scoring.SPEED
    teams: int = 0  # 0: every member for themselves
    talk: int = 0  # seconds of team talk before each question (team rounds only)

    @property
    def speed_counts(self) -> bool:
        """Whether a faster right answer scores more (accuracy first: never)."""
        return self.speed_bonus and self.scoring is Scoring.SPEED

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds of question this round asks."""
        return (*ROUND_KINDS, TYPED_KIND) if self.typed else ROUND_KINDS

    def __post_init__(self) -> None:
        if not MIN_QUESTIONS <= self.questions <= MAX_QUESTIONS:
            raise BadInput(
                f"A round has {MIN_QUESTIONS} to {MAX_QUESTIONS} questions, not {self.questions}."
            )
        if not MIN_SECONDS <= self.seconds <= MAX_SECONDS:
            raise BadInput(
                f"A question stays open {MIN_SECONDS} to {MAX_SECONDS} seconds, not {self.seconds}."
            )
        if not MIN_PAUSE <= self.pause <= MAX_PAUSE:
            raise BadInput(f"The pause is {MIN_PAUSE} to {MAX_PAUSE} seconds, not {self.pause}.")
        if self.teams and not MIN_TEAMS <= self.teams <= MAX_TEAMS:
            raise BadInput(f"A team round has {MIN_TEAMS} to {MAX_TEAMS} teams, not {self.teams}.")
        if self.talk and not self.teams:
            raise BadInput("A team talk is for team rounds: add --teams N.")
        if self.talk and not MIN_TALK <= self.talk <= MAX_TALK:
            raise BadInput(f"A team talk lasts {MIN_TALK} to {MAX_TALK} seconds, not {self.talk}.")

    @property
    def window(self) -> timedelta:
        return timedelta(seconds=self.seconds)

    @property
    def gap(self) -> timedelta:
        return timedelta(seconds=self.pause)

    def longest(self, least_gap: timedelta = timedelta(0), stretch: float = 1.0) -> timedelta:
        """How long the whole round lasts at most (each pause at least ``least_gap``, then the
        last question's window once more): a bot down for longer ends it on start."""
        talk = timedelta(seconds=self.talk)
        window = self.window * max(1.0, stretch)  # ``stretch``: the longest extra time
        return self.questions * (window + max(self.gap, least_gap) + talk) + window


_SPEC = re.compile(r"^(\d{1,4})x(\d{1,4})s?$")


def parse_round_spec(text: str) -> RoundSpec:
    """``10x20s`` (ten questions, twenty seconds each), as ``schedule add --round`` takes it."""
    match = _SPEC.match(text.strip().lower())
    if match is None:
        raise BadInput(f"`{text}` is not a round; write QUESTIONSxSECONDS, e.g. `10x20s`.")
    return RoundSpec(questions=int(match[1]), seconds=int(match[2]))


def check_team_roles(typed: Sequence[str]) -> tuple[str, ...]:
    """The roles ``--teams @Red,@Blue`` names, one team each, in order: 2 to 8 of them, none
    twice (a member holding two listed roles plays for the first)."""
    roles = tuple(t.strip() for t in typed if t.strip())
    if not MIN_TEAMS <= len(roles) <= MAX_TEAMS:
        raise BadInput(
            f"A team round has {MIN_TEAMS} to {MAX_TEAMS} teams, not {len(roles)}: name one "
            "role per team, e.g. `--teams @red,@blue`."
        )
    seen: set[str] = set()
    for role in roles:
        key = role.removeprefix("@").casefold()
        if key in seen:
            shown = role.replace("`", "'")[:60]
            raise BadInput(f"`{shown}` is named twice: each team is a different role.")
        seen.add(key)
    return roles


def team_names(count: int, roles: Sequence[str] = ()) -> tuple[str, ...]:
    """The teams' names as shown: the colours (``🔴 Red``), or each role's name after its
    team's colour (``🔴 @tables-1``) when the teams are roles."""
    if roles:
        return tuple(f"{TEAM_NAMES[n].split()[0]} {name}" for n, name in enumerate(roles))
    return TEAM_NAMES[:count]


def role_team(held: Iterable[str], roles: Sequence[str]) -> int | None:
    """The team of a member holding ``held`` in a round of role teams: the first listed role
    they hold; ``None`` if they hold none of them."""
    have = set(held)
    return next((n for n, role in enumerate(roles) if role in have), None)


def pick_team(sizes: list[int], strengths: list[float]) -> int:
    """The team a joining member is placed on: among the smallest teams (so sizes stay even),
    the weakest (``strengths``: the members' summed mastery while the first question is open,
    the team's mean points after it), the first of equals. Deterministic, so two processes
    agree on the same counts."""
    least = min(sizes)
    return min(
        (team for team, size in enumerate(sizes) if size == least),
        key=lambda team: (strengths[team], team),
    )


def round_points(
    base: int,
    *,
    asked_at: datetime,
    deadline: datetime,
    answered_at: datetime,
    hints: int = 0,
    speed_bonus: bool = True,
) -> int:
    """Points for a correct answer in a round; a wrong or late one scores 0 (not asked here).

    The bonus shrinks linearly from +50 % at the instant the question was asked to nothing at
    its deadline; each hint taken takes a quarter of the points, down to zero.
    """
    window = (deadline - asked_at).total_seconds()
    taken = min(max((answered_at - asked_at).total_seconds(), 0.0), window)
    factor = 1.0
    if speed_bonus and window > 0:
        factor += SPEED_BONUS * (1 - taken / window)
    factor *= max(0.0, 1 - HINT_SHARE * hints)
    return round(base * factor)
