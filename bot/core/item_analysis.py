"""Item analysis: which questions are too easy, too hard, or do not separate strong members
from weak ones, and which look broken.

The figures are those of Moodle's quiz statistics and Canvas's item analysis, computed from
sums the store reads set-based (:mod:`bot.storage.item_stats`):

facility
    the share of scored answers that were right;
discrimination
    the point-biserial correlation between being right on this question and the member's
    share right on every *other* question (the rest score, so an item does not correlate
    with itself), and the upper-minus-lower 27 % difference;
choices
    each choice's share, split by the upper and lower group, in the file's order whatever
    order each post showed them in.

A flag (:class:`Rule`) says why a question deserves an admin's look, with the evidence. A
key that strong members keep "getting wrong" is most often a wrong key; the bot knows the
item's checks, so the evidence says whether a check backs the key, or the choice that pulls.

This module is pure: the store's sums and the items in, statistics and flags out.
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from bot.core import privacy
from bot.core.choice_order import choice_order
from bot.questions.schema import Item, MultipleChoice, Practice, TypedAnswer
from bot.questions.typed import Mark

__all__ = [
    "MIN_ANSWERS",
    "MIN_GROUP",
    "ChoiceCount",
    "ChoiceShare",
    "ExerciseTotals",
    "Flag",
    "ItemStats",
    "ItemTotals",
    "QuestionRow",
    "Rule",
    "analyse",
    "point_biserial",
]

#: Facility and discrimination flags need this many scored answers: fewer prove nothing.
MIN_ANSWERS = 20
#: A breakdown over fewer members is withheld (bot.core.privacy), and a group's pick needs
#: this many of its members to count as evidence.
MIN_GROUP = privacy.MIN_GROUP
#: Too hard below this facility, too easy above the other.
HARD_BELOW = 0.10
EASY_ABOVE = 0.95
#: Discrimination at or below this (point-biserial) is negative beyond chance wobble.
NEGATIVE = -0.10
#: Open reports that flag a question on their own.
MANY_REPORTS = 3

LETTERS = "ABCDEFGHIJ"


class Rule(enum.StrEnum):
    """Why a question is flagged; stored by value, so the names are kept."""

    NEGATIVE_DISCRIMINATION = "negative-discrimination"
    WRONG_CHOICE_PULLS = "wrong-choice-pulls-strong-members"
    TOO_HARD = "too-hard"
    TOO_EASY = "too-easy"
    MANY_REPORTS = "many-reports"

    @property
    def heading(self) -> str:
        return {
            Rule.NEGATIVE_DISCRIMINATION: "Weak members do better than strong ones",
            Rule.WRONG_CHOICE_PULLS: "Strong members pick a wrong answer over the key",
            Rule.TOO_HARD: "Almost nobody gets it right",
            Rule.TOO_EASY: "Almost everybody gets it right",
            Rule.MANY_REPORTS: "Many open reports",
        }[self]


@dataclass(frozen=True, slots=True)
class QuestionRow:
    """A live question of the workspace's packs, as the Questions table lists it."""

    question_id: int
    item_id: str
    pack: str
    kind: str
    difficulty: str
    tags: tuple[str, ...]
    version_id: int | None


@dataclass(frozen=True, slots=True)
class ItemTotals:
    """One question's sums over a scope (``x``: right or not; ``y``: the member's rest score,
    their share right on every other scored answer)."""

    question_id: int
    answers: int
    scored: int
    right: int
    members: int
    hinted: int = 0
    pb_n: int = 0
    pb_x: float = 0.0
    pb_y: float = 0.0
    pb_xy: float = 0.0
    pb_yy: float = 0.0
    upper: int = 0
    upper_right: int = 0
    lower: int = 0
    lower_right: int = 0
    median_seconds: float | None = None
    reports: int = 0


@dataclass(frozen=True, slots=True)
class ChoiceCount:
    """How often one stored answer was given to one question version shown with one seed,
    by the upper (``U``), middle (``M``) or lower (``L``) group."""

    question_id: int
    version_id: int
    seed: int | None
    choice: str
    group: str
    count: int


@dataclass(frozen=True, slots=True)
class ExerciseTotals:
    question_id: int
    attempts: int
    tried: int
    solved: int
    failed: dict[str, int] = field(default_factory=dict)  # check label -> failing attempts

    @property
    def solve_rate(self) -> float | None:
        """Members who solved it among those who tried."""
        return self.solved / self.tried if self.tried else None

    def most_failed(self, count: int = 3) -> list[tuple[str, int]]:
        return sorted(self.failed.items(), key=lambda pair: (-pair[1], pair[0]))[:count]


@dataclass(frozen=True, slots=True)
class ChoiceShare:
    """One answer's count: a choice (``label`` is its letter in the file's order) or a typed
    text (``label`` is the text)."""

    label: str
    text: str
    key: bool
    count: int
    upper: int
    lower: int
    close: bool = False  # a typed near miss


@dataclass(frozen=True, slots=True)
class Flag:
    rule: Rule
    evidence: str


@dataclass(frozen=True, slots=True)
class ItemStats:
    question: QuestionRow
    answers: int = 0
    scored: int = 0
    right: int = 0
    members: int = 0
    facility: float | None = None
    discrimination: float | None = None  # point-biserial, rest score
    upper_facility: float | None = None  # the upper 27 % group's facility
    lower_facility: float | None = None
    median_seconds: float | None = None
    hint_share: float | None = None
    close_share: float | None = None  # typed answers: near misses among scored answers
    choices: tuple[ChoiceShare, ...] = ()
    withheld: bool = False  # fewer than MIN_GROUP members: no breakdown
    exercise: ExerciseTotals | None = None
    reports: int = 0
    flags: tuple[Flag, ...] = ()


def point_biserial(totals: ItemTotals) -> float | None:
    """Pearson's r between right (0/1) and the rest score, from the sums; ``None`` when either
    does not vary (everyone right, or every member's rest score the same)."""
    n, sx, sy, sxy, syy = totals.pb_n, totals.pb_x, totals.pb_y, totals.pb_xy, totals.pb_yy
    if n < 2:
        return None
    vx = n * sx - sx * sx  # x * x == x for a 0/1 variable
    vy = n * syy - sy * sy
    if vx <= 1e-12 or vy <= 1e-12:
        return None
    return max(-1.0, min(1.0, (n * sxy - sx * sy) / math.sqrt(vx * vy)))


def analyse(
    question: QuestionRow,
    totals: ItemTotals | None,
    counts: Iterable[ChoiceCount],
    items: Mapping[int, Item],
    exercise: ExerciseTotals | None = None,
    reports: int = 0,
) -> ItemStats:
    """One question's statistics and flags; ``items`` are its versions by id (the current one
    names the choices), ``counts`` its answers by version, seed, answer and group."""
    current = items.get(question.version_id) if question.version_id is not None else None
    reports = totals.reports if totals is not None else reports
    if totals is None:
        flags = _report_flag(reports)
        return ItemStats(question, exercise=exercise, reports=reports, flags=flags)
    facility = totals.right / totals.scored if totals.scored else None
    upper = totals.upper_right / totals.upper if totals.upper else None
    lower = totals.lower_right / totals.lower if totals.lower else None
    withheld = totals.members < MIN_GROUP
    choices = () if withheld else _choices(current, counts, items)
    close = sum(c.count for c in choices if c.close)
    stats = ItemStats(
        question=question,
        answers=totals.answers,
        scored=totals.scored,
        right=totals.right,
        members=totals.members,
        facility=facility,
        discrimination=point_biserial(totals),
        upper_facility=upper,
        lower_facility=lower,
        median_seconds=totals.median_seconds,
        hint_share=totals.hinted / totals.answers if totals.answers else None,
        close_share=close / totals.scored
        if isinstance(current, TypedAnswer) and totals.scored and not withheld
        else None,
        choices=choices,
        withheld=withheld,
        exercise=exercise,
        reports=reports,
    )
    return _with_flags(stats, current)


# --- choices --------------------------------------------------------------------------------


def _choices(
    current: Item | None, counts: Iterable[ChoiceCount], items: Mapping[int, Item]
) -> tuple[ChoiceShare, ...]:
    """The answers given, in the current version's terms: a choice by its text (a version
    that reworded a choice counts apart), a typed answer by its stored text."""
    if isinstance(current, MultipleChoice | Practice) and current.choices:
        return _picked_choices(current, counts, items)
    if isinstance(current, TypedAnswer):
        return _typed_answers(current, counts)
    return ()


def _picked_choices(
    current: MultipleChoice | Practice, counts: Iterable[ChoiceCount], items: Mapping[int, Item]
) -> tuple[ChoiceShare, ...]:
    assert current.choices is not None
    tally: dict[str, list[int]] = {c.text: [0, 0, 0] for c in current.choices}
    for row in counts:
        item = items.get(row.version_id)
        choices = getattr(item, "choices", None)
        if not choices or len(row.choice) != 1 or row.choice not in LETTERS[: len(choices)]:
            continue
        shown = LETTERS.index(row.choice)
        order = (
            _order(row.seed, len(choices))
            if row.seed is not None and getattr(item, "shuffle", True) and len(choices) > 1
            else tuple(range(len(choices)))
        )
        text = choices[order[shown]].text
        counted = tally.setdefault(text, [0, 0, 0])
        counted[0] += row.count
        counted[1] += row.count if row.group == "U" else 0
        counted[2] += row.count if row.group == "L" else 0
    shares = []
    for index, choice in enumerate(current.choices):
        count, upper, lower = tally.pop(choice.text)
        shares.append(ChoiceShare(LETTERS[index], choice.text, choice.correct, count, upper, lower))
    # Answers to an older wording that the current version no longer has.
    for text, (count, upper, lower) in sorted(tally.items()):
        if count:
            shares.append(ChoiceShare("old", text, False, count, upper, lower))
    return tuple(shares)


@functools.lru_cache(maxsize=8192)
def _order(seed: int, count: int) -> tuple[int, ...]:
    """A post's choice order: each post's rows come in up to a dozen (choice x group)."""
    return choice_order(seed, count)


def _typed_answers(item: TypedAnswer, counts: Iterable[ChoiceCount]) -> tuple[ChoiceShare, ...]:
    key = item.shown_answer
    tally: dict[str, list[int]] = {key: [0, 0, 0]}
    for row in counts:
        counted = tally.setdefault(row.choice, [0, 0, 0])
        counted[0] += row.count
        counted[1] += row.count if row.group == "U" else 0
        counted[2] += row.count if row.group == "L" else 0
    shares = []
    for text, (count, upper, lower) in tally.items():
        right = text == key
        close = not right and bool(item.accept) and item.grade(text).mark is Mark.CLOSE
        shares.append(ChoiceShare(text, text, right, count, upper, lower, close))
    shares.sort(key=lambda s: (not s.key, -s.count, s.text))
    return tuple(shares)


# --- flags ----------------------------------------------------------------------------------


def _report_flag(reports: int) -> tuple[Flag, ...]:
    if reports >= MANY_REPORTS:
        return (Flag(Rule.MANY_REPORTS, f"{reports} members reported it as wrong."),)
    return ()


def _with_flags(stats: ItemStats, item: Item | None) -> ItemStats:
    flags: list[Flag] = []
    enough = stats.scored >= MIN_ANSWERS and stats.members >= MIN_GROUP
    key = next((c for c in stats.choices if c.key), None)
    if enough and stats.discrimination is not None and stats.discrimination <= NEGATIVE:
        spread = (
            f" The upper 27 % got it right {_pct(stats.upper_facility)} of the time, the lower "
            f"27 % {_pct(stats.lower_facility)}."
            if stats.upper_facility is not None and stats.lower_facility is not None
            else ""
        )
        flags.append(
            Flag(
                Rule.NEGATIVE_DISCRIMINATION,
                f"Discrimination {stats.discrimination:+.2f} over {stats.scored} answers: "
                f"members who do well elsewhere do worse here.{spread} " + _backing(item, key),
            )
        )
    pulling = _pulling_choice(stats.choices, key)
    if pulling is not None and key is not None:
        flags.append(
            Flag(
                Rule.WRONG_CHOICE_PULLS,
                f"The upper 27 % chose {_named(pulling)} {pulling.upper} times and the key "
                f"{_named(key)} {key.upper} times. Is the key right? "
                + _backing(item, key)
                + " "
                + _backing(item, pulling, wrong=True),
            )
        )
    if enough and stats.facility is not None and stats.facility < HARD_BELOW:
        flags.append(
            Flag(
                Rule.TOO_HARD,
                f"Facility {_pct(stats.facility)}: {stats.right} of {stats.scored} answers "
                "were right. Check the key, or make the question clearer.",
            )
        )
    if enough and stats.facility is not None and stats.facility > EASY_ABOVE:
        flags.append(
            Flag(
                Rule.TOO_EASY,
                f"Facility {_pct(stats.facility)}: {stats.right} of {stats.scored} answers "
                "were right. It teaches little; make the wrong choices more tempting.",
            )
        )
    flags.extend(_report_flag(stats.reports))
    return replace(stats, flags=tuple(flags))


def _pulling_choice(choices: Sequence[ChoiceShare], key: ChoiceShare | None) -> ChoiceShare | None:
    """The wrong answer most of the upper group gave, if more of them gave it than the key."""
    if key is None:
        return None
    wrong = [c for c in choices if not c.key and c.upper >= MIN_GROUP and c.upper > key.upper]
    return max(wrong, key=lambda c: (c.upper, c.count), default=None)


def _named(choice: ChoiceShare) -> str:
    if choice.label == choice.text:
        return f"`{choice.text}`"
    return f"{choice.label} ({choice.text})"


def _backing(item: Item | None, choice: ChoiceShare | None, *, wrong: bool = False) -> str:
    """What the item's checks say of ``choice``: the bot knows the code behind a claim."""
    if item is None or choice is None or len(choice.label) != 1:
        return ""
    checks = getattr(item, "checks", ())
    ref = f"choice {LETTERS.index(choice.label) + 1}"
    backed = [str(n) for n, check in enumerate(checks, 1) if ref in check.backs]
    which = "this choice" if wrong else "the key"
    if backed:
        return f"Check {', '.join(backed)} backs {which} ({choice.label}) against real torch."
    if item.code is not None:
        return f"No check backs {which} ({choice.label}); the question's code is checked."
    return f"No check backs {which} ({choice.label})."


def _pct(share: float | None) -> str:
    return "n/a" if share is None else f"{share:.0%}"
