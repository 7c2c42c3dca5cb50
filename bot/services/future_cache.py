"""A bounded cache of asyncio futures, one per key: the shared result of a run started once.

Why: a reference run (an exercise's solution, a typed question's own value) is the same for
every member answering that question version, so it is started once and every member awaits
the one future, even while it is still running. A run that failed, or was cancelled with a
caller that went away, is not kept: the next caller starts it again (the sandbox may have
been busy or restarting). The cache is bounded,
dropping the least recently used key, so memory stays flat however many versions are posted.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["FutureCache"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class FutureCache(Generic[K, V]):
    """At most ``size`` futures by key; a failed one is replaced on the next :meth:`get`."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("a FutureCache holds at least one future")
        self._size = size
        self._futures: OrderedDict[K, asyncio.Future[V]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._futures)

    def __contains__(self, key: object) -> bool:
        return key in self._futures

    def get(self, key: K, make: Callable[[], Awaitable[V]]) -> asyncio.Future[V]:
        """The key's future: the one already started (pending or done well), else a new one
        from ``make()``, started now. Must be called with an event loop running."""
        found = self._futures.get(key)
        if found is not None and not (
            found.done() and (found.cancelled() or found.exception() is not None)
        ):
            self._futures.move_to_end(key)
            return found
        future = asyncio.ensure_future(make())
        # Mark the exception retrieved: a run nobody awaited (evicted, or the caller gone)
        # must not log "exception was never retrieved".
        future.add_done_callback(lambda f: None if f.cancelled() else f.exception())
        self._futures[key] = future
        while len(self._futures) > self._size:
            self._futures.popitem(last=False)
        return future
