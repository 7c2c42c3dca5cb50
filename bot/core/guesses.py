"""How often a member may guess at a typed question: never a way to learn the answer fast.

A typed answer that is right or wrong is final (the answer store keeps only the first), so
what could leak the key is the free tries: "almost" after a near miss, and a number that could
not be read. Each (question, member) gets :data:`FREE_TRIES` of those; after that a near miss
counts as the answer it is, and an unreadable number is refused without the "almost" game.
Counting tries, not seconds, keeps it the same on a simulated clock and in a scripted console.

In memory, per process: a restart gives a member their free tries again, which costs nothing
but a few more "almost"s. The table forgets the oldest questions beyond :data:`KEPT`.
"""

from __future__ import annotations

from collections import OrderedDict

__all__ = ["FREE_TRIES", "KEPT", "GuessLimit"]

FREE_TRIES = 3
KEPT = 10_000


class GuessLimit:
    """The free tries left to each member on each typed question."""

    def __init__(self) -> None:
        self._spent: OrderedDict[tuple[int, str], int] = OrderedDict()

    def free_try(self, post_id: int, member: str) -> bool:
        """Spend a free try (a near miss, an unreadable number); False once none are left."""
        key = (post_id, member)
        spent = self._spent.get(key, 0)
        if spent >= FREE_TRIES:
            return False
        self._spent[key] = spent + 1
        self._spent.move_to_end(key)
        while len(self._spent) > KEPT:
            self._spent.popitem(last=False)
        return True
