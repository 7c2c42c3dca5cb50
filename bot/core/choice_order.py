"""The order a post (or a review card) shows an item's choices in.

A pack's file order teaches nothing but often leaks the answer (authors put the right one
first), and a member who always answers A would score far above chance. So each post draws
a seed when its row is inserted (:func:`draw_seed`), stored with the post, and every reader
of that post (the post itself, a restart's edit, the reveal, ``/history``, ``/question``, the
Try it labels, the answer breakdown, exports) arranges the item with it (:func:`arranged`):
all of them agree because the order is a pure function of the stored seed and the item.
A review card, which has no post, takes its seed from the card's own state
(:func:`review_seed`), so the card shown and the grade that answers it agree as well.

The permutation is computed here, by hashing, and not by :mod:`random`, whose shuffle may
change between Python versions: a post's order must not change when the bot is upgraded.
An item with ``shuffle: false`` keeps its file order ("all of the above", ordered steps).
"""

from __future__ import annotations

import hashlib
import random
import secrets

from bot.questions.schema import Item, MultipleChoice, Practice

__all__ = ["arranged", "choice_order", "draw_seed", "fewer", "review_seed"]

#: Seeds fit a signed 64-bit column on every engine.
_SEED_BITS = 62


def draw_seed() -> int:
    """A fresh, unpredictable seed for one post."""
    return secrets.randbits(_SEED_BITS)


def review_seed(member_id: int, question_key: int, reviews: int) -> int:
    """A review card's seed: the same for the card shown and its grade, new at each review."""
    digest = hashlib.sha256(f"review:{member_id}:{question_key}:{reviews}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - _SEED_BITS)


def choice_order(seed: int, count: int) -> tuple[int, ...]:
    """The file positions (0-based) of the choices as shown: ``order[0]`` is shown as A."""
    keys = [hashlib.sha256(f"{seed}:{index}".encode()).digest() for index in range(count)]
    return tuple(sorted(range(count), key=keys.__getitem__))


def arranged(item: Item, seed: int | None) -> Item:
    """``item`` with its choices in the order shown for ``seed`` (unchanged without a seed,
    without choices, or with ``shuffle: false``)."""
    if seed is None or not isinstance(item, MultipleChoice | Practice) or not item.shuffle:
        return item
    choices = item.choices
    if choices is None or len(choices) < 2:
        return item
    order = choice_order(seed, len(choices))
    return item.model_copy(update={"choices": tuple(choices[i] for i in order)})


def fewer(item: Item, seed: int) -> Item:
    """``item`` with one wrong choice removed (an accommodation, as Canvas's "reduce
    choices"): which one is drawn from ``seed``, so the card shows and grades the same. Kept
    whole when it has fewer than three choices (two must remain) or no choices."""
    if not isinstance(item, MultipleChoice | Practice) or item.choices is None:
        return item
    choices = item.choices
    wrong = [i for i, choice in enumerate(choices) if not choice.correct]
    if len(choices) < 3 or not wrong:
        return item
    dropped = wrong[random.Random(seed).randrange(len(wrong))]
    return item.model_copy(
        update={"choices": tuple(c for i, c in enumerate(choices) if i != dropped)}
    )
