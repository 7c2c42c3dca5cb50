"""Where a pack's right answers sit: a warning when they crowd one position.

Posts draw their own choice order (:mod:`bot.core.choice_order`), so a member who always
answers A scores at chance in chat. The file's order still shows wherever the bot does not
draw one: items with ``shuffle: false``, an Anki export, a printed pack. Authors tend to write
the right answer first, so the linter says so when one position holds far more right answers
than chance would put there (more than three standard deviations above the expected count).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

from bot.questions.loader import PackContents, Problem
from bot.questions.schema import CHOICE_LETTERS, Choice, Item, MultipleChoice, Practice

__all__ = ["crowded_answer_problems", "right_positions"]

_SIGMAS = 3.0
_AT_LEAST = 4  # fewer right answers in one place than this is never worth a warning


def _choices(item: Item) -> tuple[Choice, ...]:
    if isinstance(item, MultipleChoice | Practice) and item.choices:
        return item.choices
    return ()


def right_positions(items: Iterable[Item]) -> list[tuple[int, int]]:
    """``(position of the right choice, number of choices)`` for each item with choices."""
    found = []
    for item in items:
        choices = _choices(item)
        for index, choice in enumerate(choices):
            if choice.correct:
                found.append((index, len(choices)))
    return found


def crowded_answer_problems(files: Iterable[PackContents]) -> Iterator[Problem]:
    """A warning for each pack where one position holds too many of its right answers."""
    for contents in files:
        positions = right_positions(item for item, _ in contents.items)
        if not positions:
            continue
        first_line = min(line for _, line in contents.items)
        for place in range(len(CHOICE_LETTERS)):
            chances = [1 / count for _, count in positions if place < count]
            expected = sum(chances)
            spread = math.sqrt(sum(p * (1 - p) for p in chances))
            seen = sum(1 for index, _ in positions if index == place)
            if seen < _AT_LEAST or seen <= expected + _SIGMAS * spread:
                continue
            yield Problem(
                contents.path,
                first_line,
                contents.pack_name or "",
                f"the right answer is choice {place + 1} in {seen} of {len(positions)} items "
                f"with choices (about {expected:.0f} by chance): where the file's order shows "
                "(shuffle: false, an Anki export), always answering "
                f"{CHOICE_LETTERS[place]} pays; spread the right answers over the positions",
                "warning",
            )
