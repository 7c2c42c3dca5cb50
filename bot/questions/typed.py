"""Grading a typed answer: forgiving of typos in words, strict about names, digits and values.

(Below the core, beside the pack schema, so that ``questions lint`` judges an item's key with
exactly the rules a member's answer meets.)

Red's trivia users asked for punctuation-blind, whole-answer matching; KMQ accepts a
Damerau-Levenshtein distance of 2. Taken alone, a distance lets ``float64`` pass for
``float32`` and ``y.grad`` for ``x.grad``, which for a pack about autograd are the very
mistakes worth catching. So an answer is compared word by word, after normalising case,
spacing, punctuation and backticks:

- a word of up to 3 characters, and every run of digits, must be exactly right (and a
  trailing underscore, PyTorch's in-place mark, is a word of its own: ``detach_`` is not
  ``detach``);
- a longer word may hold one typo (a swap counts as one), a word of 8 or more two, but
  never in its first letter (``AddBackward0`` is not a slip for ``MulBackward0``);
- and the whole answer must still score the item's ``threshold`` with rapidfuzz's ratio.

One typo more than that in a word of 6 or more letters, with everything strict still right,
is *close* (``retain_grad`` is not almost ``retain_graph``): the member is told
"almost" and may try again. Numbers are parsed, not spelled: ``0.1``, ``1e-1`` and ``.1`` are
one answer, judged against the key's tolerance.
"""

from __future__ import annotations

import enum
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz
from rapidfuzz.distance import DamerauLevenshtein

__all__ = [
    "DEFAULT_THRESHOLD",
    "MAX_ANSWER",
    "Mark",
    "NumberRule",
    "TextRule",
    "TypedVerdict",
    "answer_problem",
    "grade_number",
    "grade_text",
    "normalise",
    "parse_number",
]

#: The whole-answer similarity (rapidfuzz ratio, 0-100) an answer needs by default.
DEFAULT_THRESHOLD = 75
#: The longest answer read; a longer one is refused before any grading.
MAX_ANSWER = 200

# A decimal number is one word (`0.5` is not `05`); otherwise letters and digits, split by
# `_`, `.`, `()` and the rest.
_WORD = re.compile(r"\d+\.\d+|[^\W_]+", re.UNICODE)
_DIGITS = re.compile(r"\d+")
# Letters meeting digits (`float32`, `MulBackward0`): two words, so `float 32` is the same.
_LETTERS_DIGITS = re.compile(r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])")
# A trailing underscore is PyTorch's in-place mark (``add_`` is not ``add``): kept as a word.
_IN_PLACE = re.compile(r"(?<=[^\W_])_(?![^\W_])")


class Mark(enum.StrEnum):
    RIGHT = "right"
    CLOSE = "close"  # almost: a typo too many, the member may try again
    WRONG = "wrong"
    UNREADABLE = "unreadable"  # not a number where a number is asked: costs nothing


@dataclass(frozen=True, slots=True)
class TypedVerdict:
    """How an answer fared, and what is stored for it: the key's own answer when right (so
    the group's right answers count as one), else the answer as normalised (so the reveal can
    show the most common wrong answers without markup, mentions or who typed them)."""

    mark: Mark
    stored: str


@dataclass(frozen=True, slots=True)
class TextRule:
    """Accepted answers (the first is shown), more synonyms, and the whole-answer threshold."""

    accept: tuple[str, ...]
    threshold: int = DEFAULT_THRESHOLD


@dataclass(frozen=True, slots=True)
class NumberRule:
    """A value, and how far an answer may be from it: ``tolerance`` absolute, ``relative``
    as a fraction of the value; either one is enough."""

    value: float
    tolerance: float = 0.0
    relative: float = 0.0

    @property
    def shown(self) -> str:
        return _number_text(self.value)


def answer_problem(text: str) -> str | None:
    """Why a typed text is refused before grading (it costs the member nothing), or None."""
    if len(text) > MAX_ANSWER:
        return f"That answer is {len(text):,} characters long; answers are at most {MAX_ANSWER}."
    if any(unicodedata.category(c) == "Cc" and c not in "\t\n\r" for c in text):
        return "That answer has control characters in it; type it as plain text."
    if not normalise(text) and not text.strip():
        return "Type an answer after the command."
    return None


def normalise(text: str) -> str:
    """Lowercase words separated by single spaces: no backticks, quotes or punctuation."""
    folded = _IN_PLACE.sub(" _inplace ", unicodedata.normalize("NFKC", text).casefold())
    folded = folded.replace("_inplace", "inplace")
    return " ".join(_LETTERS_DIGITS.sub(" ", word) for word in _WORD.findall(folded))


_BETWEEN_LETTERS = re.compile(r"(?<=[^\W\d_]) (?=[^\W\d_])")


def _glued(normalised: str) -> str:
    """Words of letters run together (spacing between them is a style, not an answer)."""
    return _BETWEEN_LETTERS.sub("", normalised)


def _allowed(word: str) -> int:
    if word.isdigit() or len(word) <= 3:
        return 0
    return 1 if len(word) < 8 else 2


def _word_mark(typed: Sequence[str], key: Sequence[str]) -> Mark:
    """Word by word: RIGHT within each word's typo budget, CLOSE within one more edit in one
    long word, else WRONG. Digits and short words never bend."""
    if len(typed) != len(key):
        return Mark.WRONG
    if _DIGITS.findall(" ".join(typed)) != _DIGITS.findall(" ".join(key)):
        return Mark.WRONG
    spare = 1  # one extra edit, in one word, makes "almost"
    for got, want in zip(typed, key, strict=True):
        budget = _allowed(want)
        if budget == 0:
            if got != want:
                return Mark.WRONG
            continue
        if got[:1] != want[:1]:  # slips are rarely in the first letter: `add` is not `mul`
            return Mark.WRONG
        extra = spare if len(want) >= 6 else 0  # `grad` is not almost `graph`
        distance = DamerauLevenshtein.distance(got, want, score_cutoff=budget + extra)
        if distance > budget + extra:
            return Mark.WRONG
        if distance > budget:
            spare = 0
    return Mark.RIGHT if spare else Mark.CLOSE


def grade_text(rule: TextRule, text: str) -> TypedVerdict:
    """Grade a typed text against every accepted answer; the best mark wins."""
    typed = normalise(text)
    best = Mark.WRONG
    if typed:
        for accepted in rule.accept:
            key = normalise(accepted)
            # `requires grad` and `requiresgrad` are one answer, but `1 0` and `10` are not.
            if typed == key or _glued(typed) == _glued(key):
                return TypedVerdict(Mark.RIGHT, rule.accept[0])
            mark = _word_mark(typed.split(), key.split())
            if mark is Mark.RIGHT and fuzz.ratio(typed, key) < rule.threshold:
                mark = Mark.CLOSE
            if mark is Mark.RIGHT:
                return TypedVerdict(Mark.RIGHT, rule.accept[0])
            if mark is Mark.CLOSE:
                best = Mark.CLOSE
    return TypedVerdict(best, typed[:80])


_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$")


def parse_number(text: str) -> float | None:
    """A typed number: ``0.1``, ``1e-1``, ``.1``, ``-3``, ``1_000``, a fraction ``1/3``,
    ``inf``/``nan``; in backticks or ``tensor(0.5000)`` too. None if it is not one."""
    raw = unicodedata.normalize("NFKC", text).strip().strip("`").strip().lower()
    raw = raw.replace("\u2212", "-").replace("_", "").replace(" ", "")
    for wrapper in ("torch.tensor(", "tensor(", "float("):
        if raw.startswith(wrapper) and raw.endswith(")"):
            raw = raw[len(wrapper) : -1].strip()
    if raw in ("inf", "+inf", "-inf", "nan"):
        return float(raw)
    if "/" in raw:
        top, _, bottom = raw.partition("/")
        a, b = parse_number(top), parse_number(bottom)
        return None if a is None or b is None or b == 0 else a / b
    if not _NUMBER.match(raw):
        return None
    return float(raw)


def _number_text(value: float) -> str:
    return repr(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def grade_number(rule: NumberRule, text: str) -> TypedVerdict:
    """Grade a typed number: within the tolerance is right; no number at all is unreadable
    (the member may type again), never wrong."""
    value = parse_number(text)
    if value is None:
        return TypedVerdict(Mark.UNREADABLE, "")
    want = rule.value
    if math.isnan(want) or math.isnan(value):
        right = math.isnan(want) and math.isnan(value)
    elif math.isinf(want) or math.isinf(value):
        right = want == value
    else:
        right = abs(value - want) <= max(rule.tolerance, rule.relative * abs(want))
    stored = rule.shown if right else _number_text(value)
    return TypedVerdict(Mark.RIGHT if right else Mark.WRONG, stored)
