"""How timed work reaches many channels at once: up to ``concurrency`` channels in parallel,
each channel's steps in order, and nothing new once the loop is stopping.

The timer loop (``bot/scheduler.py``) owns one :class:`Lanes` and hands it to the due sources
that send a lot at one instant (at 09:00 thousands of channels may be due together). The
console uses one lane, so a scripted session prints the same lines every time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from bot.log import get_logger

__all__ = ["Lanes", "Step", "call"]

log = get_logger(__name__)
T = TypeVar("T")

Step = Callable[[], Awaitable[None]]
"""One send or reveal for one channel; a channel's steps run in order."""


class Lanes:
    """The loop's fan-out: how many channels are served at once, and whether to stop."""

    def __init__(self, concurrency: int = 16) -> None:
        self.concurrency = max(1, concurrency)
        self._stopping = False

    def stop(self) -> None:
        """Start nothing new; what is in flight finishes (the loop is shutting down)."""
        self._stopping = True

    def is_stopping(self) -> bool:
        return self._stopping

    async def per_channel(
        self, groups: Sequence[Sequence[T]], work: Callable[[T], Awaitable[None]]
    ) -> None:
        """Run ``work`` over each channel's items in order, up to ``concurrency`` channels at
        once; once stopping, nothing new starts but items in flight finish."""
        queue = list(reversed(groups))

        async def worker() -> None:
            while queue and not self.is_stopping():
                for item in queue.pop():
                    if self.is_stopping():
                        return
                    try:
                        await work(item)
                    except Exception:  # one channel's failure must not stop the others
                        log.exception("a scheduled send or reveal failed")

        workers = min(self.concurrency, len(groups))
        if workers == 1:
            await worker()
            return
        await asyncio.gather(*(worker() for _ in range(workers)))


async def call(step: Step) -> None:
    """``work`` for :meth:`Lanes.per_channel` when the items are steps already."""
    await step()
