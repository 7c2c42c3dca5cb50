"""Turns in the sandbox: members' runs before pack checks, and checks never take every slot.

A member's ``/run`` is someone waiting in a chat; a pack upload's checks are a batch. With one
first-come queue, three uploads of twelve slow code items held every slot and a one-line
``/run`` waited behind them. Here a run waiting for a turn always goes before a waiting
check, and checks together hold at most ``max_background`` of the slots, so a ``/run`` finds a
free slot or waits only for another member's run. Within a class, turns are first come, first
served. (How many slots one uploader's checks use is the chat side's business: it gives a
member's upload one at a time.)
"""

from __future__ import annotations

import asyncio
import collections

__all__ = ["Turns"]


class Turns:
    """``slots`` turns; ``acquire(background=...)`` waits for one, ``release`` gives it back."""

    def __init__(self, slots: int, max_background: int) -> None:
        self.slots = max(1, slots)
        self.max_background = max(1, min(max_background, self.slots))
        self._free = self.slots
        self.background = 0  # background turns held now
        self._waiting: dict[bool, collections.deque[asyncio.Future[None]]] = {
            False: collections.deque(),
            True: collections.deque(),
        }

    @property
    def waiting(self) -> int:
        return sum(1 for q in self._waiting.values() for f in q if not f.done())

    def _may(self, background: bool) -> bool:
        return self._free > 0 and (not background or self.background < self.max_background)

    def _take(self, background: bool) -> None:
        self._free -= 1
        self.background += background

    async def acquire(self, *, background: bool = False) -> None:
        ahead = self._waiting[False] or (background and self._waiting[True])
        if not ahead and self._may(background):
            self._take(background)
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting[background].append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.release(background=background)  # given the turn as the wait was cancelled
            else:
                self._waiting[background].remove(turn)
            raise

    def release(self, *, background: bool = False) -> None:
        self._free += 1
        self.background -= background
        self._hand_out()

    def _hand_out(self) -> None:
        while self._free > 0:
            for background in (False, True):
                queue = self._waiting[background]
                while queue and queue[0].done():
                    queue.popleft()
                if queue and self._may(background):
                    self._take(background)
                    queue.popleft().set_result(None)
                    break
            else:
                return
