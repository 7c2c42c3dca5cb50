"""The wake-up signal: whoever changes what is due tells the timer loop, which re-plans at once.

A plain list of callbacks rather than a reference to the loop, so that services never import
the loop above them, and the loop never imports a service: it is only an event, so it lives in
the core. The loop (``bot/scheduler.py``) and the due sources that plan from schedules listen
while the loop runs.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["ScheduleListener", "Wakeup"]

ScheduleListener = Callable[[int | None], None]
"""Called with a schedule id when that schedule changed, or None when only timing changed
(a post with an answer window was created): the scheduler re-reads and re-plans."""


class Wakeup:
    """Listeners told of every change to what is due."""

    def __init__(self) -> None:
        self._listeners: list[ScheduleListener] = []
        self._timing: list[Callable[[], None]] = []

    def listen(self, listener: ScheduleListener) -> None:
        self._listeners.append(listener)

    def unlisten(self, listener: ScheduleListener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    @property
    def listened(self) -> bool:
        return bool(self._listeners)

    def changed(self, schedule_id: int | None) -> None:
        """Tell the scheduler (if one runs) to re-read a schedule, or just to re-plan."""
        for listener in list(self._listeners):
            listener(schedule_id)

    def listen_timing(self, listener: Callable[[], None]) -> None:
        self._timing.append(listener)

    def unlisten_timing(self, listener: Callable[[], None]) -> None:
        if listener in self._timing:
            self._timing.remove(listener)

    def timing_changed(self) -> None:
        """Tell the scheduler that a due source's plan changed (a recap or a reminder set or
        turned off): it asks every source again, at once."""
        for listener in list(self._timing):
            listener()
