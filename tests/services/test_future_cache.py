"""FutureCache: one run per key shared while pending, a failed run retried, size bounded."""

from __future__ import annotations

import asyncio

import pytest

from bot.services.future_cache import FutureCache


class _Runs:
    """Counts the runs started; each waits for ``release`` and returns its key's value."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.release = asyncio.Event()
        self.fail = False

    def run(self, key: str) -> asyncio.Future[str]:
        async def go() -> str:
            self.started.append(key)
            await self.release.wait()
            if self.fail:
                raise RuntimeError("sandbox busy")
            return key.upper()

        return asyncio.ensure_future(go())


async def test_a_pending_run_is_shared() -> None:
    runs, cache = _Runs(), FutureCache[str, str](4)
    first = cache.get("a", lambda: runs.run("a"))
    second = cache.get("a", lambda: runs.run("a"))
    assert first is second
    runs.release.set()
    assert await asyncio.gather(first, second) == ["A", "A"]
    assert cache.get("a", lambda: runs.run("a")) is first
    assert runs.started == ["a"]


async def test_a_failed_run_is_retried() -> None:
    runs, cache = _Runs(), FutureCache[str, str](4)
    runs.fail = True
    runs.release.set()
    with pytest.raises(RuntimeError):
        await cache.get("a", lambda: runs.run("a"))
    runs.fail = False
    assert await cache.get("a", lambda: runs.run("a")) == "A"
    assert runs.started == ["a", "a"]


async def test_a_cancelled_run_is_started_again() -> None:
    """A member who gives up while the shared run is pending may cancel it: the next member
    must get a fresh run, not a CancelledError for ever."""
    runs, cache = _Runs(), FutureCache[str, str](4)
    first = cache.get("a", lambda: runs.run("a"))
    await asyncio.sleep(0)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    runs.release.set()
    assert await cache.get("a", lambda: runs.run("a")) == "A"
    assert runs.started == ["a", "a"]


async def test_the_least_recently_used_key_is_evicted() -> None:
    runs, cache = _Runs(), FutureCache[str, str](2)
    runs.release.set()
    for key in ("a", "b"):
        await cache.get(key, lambda key=key: runs.run(key))
    await cache.get("a", lambda: runs.run("a"))  # a used again: b is now the oldest
    await cache.get("c", lambda: runs.run("c"))
    assert len(cache) == 2
    assert "a" in cache
    assert "b" not in cache
    assert "c" in cache
    assert await cache.get("b", lambda: runs.run("b")) == "B"  # started again
    assert runs.started == ["a", "b", "c", "b"]


def test_a_size_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        FutureCache[str, str](0)
