"""Which option does a piece of prose talk about? Fuzzy matching for answers that are not marked.

Cheat sheets often give multiple-choice blocks with an explanation but no marked answer; the
explanation restates the right option in other words ("built during runtime" for "Build the
graph during runtime"). Comparing content words (stop words removed, crude suffix stemming so
"varying" meets "vary") with rapidfuzz's ``token_set_ratio`` finds that option reliably, and
the gap to the runner-up says whether the match is clear enough to trust. When it is not, the
caller reports the item instead of guessing silently.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

__all__ = ["OptionMatch", "content_words", "match_option"]

# A clear match scores at least MIN_SCORE and beats the runner-up by at least MIN_MARGIN.
MIN_SCORE = 50.0
MIN_MARGIN = 15.0

_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "to",
        "of",
        "in",
        "on",
        "for",
        "and",
        "or",
        "with",
        "by",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "they",
        "them",
        "their",
        "there",
        "can",
        "could",
        "do",
        "does",
        "did",
        "not",
        "no",
        "only",
        "when",
        "which",
        "what",
        "how",
        "why",
        "as",
        "at",
        "from",
        "into",
        "than",
        "then",
        "so",
        "such",
        "you",
        "your",
        "we",
        "our",
        "will",
        "would",
        "should",
        "may",
        "might",
    ]
)
_WORD = re.compile(r"[a-z0-9]+")
_SUFFIXES = ("ing", "ed", "es", "s", "ly")


@dataclass(frozen=True, slots=True)
class OptionMatch:
    """The best option for a text, its score (0-100), the runner-up's, and every score."""

    index: int
    score: float
    runner_up: float
    scores: tuple[float, ...]

    @property
    def confident(self) -> bool:
        return self.score >= MIN_SCORE and self.score - self.runner_up >= MIN_MARGIN


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> str:
    """Lowercased content words, stemmed, in order: the text the matcher compares."""
    return " ".join(_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP_WORDS)


def match_option(text: str, options: Sequence[str]) -> OptionMatch | None:
    """The option ``text`` is most about; ``None`` when there are no options.

    Words every option shares ("torch" in ``torch.no_grad()`` / ``torch.inference_mode()``)
    say nothing about which one is meant, so they are left out before comparing; otherwise
    an explanation naming two options could still favour one by accident.
    """
    if not options:
        return None
    target = content_words(text)
    words = [content_words(option).split() for option in options]
    shared = set(words[0]).intersection(*words[1:]) if len(words) > 1 else set()
    keys = [" ".join(w for w in option if w not in shared) or " ".join(option) for option in words]
    scores = [fuzz.token_set_ratio(target, key) for key in keys]
    ranked = sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)
    best = ranked[0]
    runner_up = scores[ranked[1]] if len(ranked) > 1 else 0.0
    return OptionMatch(best, float(scores[best]), float(runner_up), tuple(float(x) for x in scores))
