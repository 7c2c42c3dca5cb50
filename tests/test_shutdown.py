"""SIGTERM handling in `studybot run`: what stops first, and that a signal is a clean exit."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from bot.app import run_until_stopped

pytestmark = pytest.mark.timeout(20)


class RecordingAdapter:
    """A platform connection that runs until stopped and notes the order of events."""

    def __init__(self, events: list[str]) -> None:
        self.events = events
        self.running = asyncio.Event()
        self._stopped = asyncio.Event()

    async def run(self) -> None:
        self.events.append("running")
        self.running.set()
        await self._stopped.wait()
        self.events.append("adapter returned")

    async def stop(self) -> None:
        self.events.append("adapter stop")
        self._stopped.set()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_stops_the_scheduler_before_the_adapter(sig: signal.Signals) -> None:
    events: list[str] = []
    adapter = RecordingAdapter(events)

    async def scheduler_stop() -> None:
        # a send in flight: it still needs a live adapter to finish
        await asyncio.sleep(0.05)
        events.append(
            "scheduler stopped" + (" (adapter stopped!)" if "adapter stop" in events else "")
        )

    async def signal_soon() -> None:
        await adapter.running.wait()
        os.kill(os.getpid(), sig)

    sender = asyncio.create_task(signal_soon())
    await run_until_stopped(adapter, before_stop=scheduler_stop)  # type: ignore[arg-type]
    await sender
    assert events == ["running", "scheduler stopped", "adapter stop", "adapter returned"]
