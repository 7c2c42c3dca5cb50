"""The audit log: every change an admin makes, from chat or from the admin web page.

The services that change things call :meth:`AuditLog.record` after the change succeeded, with
the caller's context, so chat and the page write to one history (``ctx.via`` tells them
apart). It records; it never refuses anything.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from bot.core.clock import Clock
from bot.core.messages import Message
from bot.core.models import ChatContext
from bot.services.places import Places
from bot.storage.audit import AuditEntry, AuditStore
from bot.text import without_pictographs

__all__ = ["AuditLog", "Audited", "audited"]

_DETAIL = 300


def _plain(text: str) -> str:
    """One line without the chat's pictographs (``✅``, ``🗑️``): the log is read as text."""
    return " ".join(without_pictographs(text).split())


def _cut(text: str) -> str:
    """At most :data:`_DETAIL` characters, cut at a word with "…" (never mid-word)."""
    if len(text) <= _DETAIL:
        return text
    head = text[: _DETAIL - 1]
    space = head.rfind(" ")
    return (head[:space] if space > _DETAIL // 2 else head).rstrip(" ,;:") + "…"


class AuditLog:
    def __init__(self, places: Places, store: AuditStore, clock: Clock) -> None:
        self._places = places
        self._store = store
        self._clock = clock

    async def record(self, ctx: ChatContext, action: str, detail: str = "") -> None:
        workspace = await self._places.workspace(ctx)
        entry = AuditEntry(
            self._clock.now(),
            ctx.member,
            ctx.member_name,
            ctx.via,
            action,
            _cut(_plain(detail)),
        )
        await self._store.add(workspace.id, entry)

    async def recent(self, ctx: ChatContext, limit: int = 200) -> list[AuditEntry]:
        """The caller's workspace's newest entries first (the admin page's audit log)."""
        workspace = await self._places.workspace(ctx)
        return await self._store.recent(workspace.id, limit)


class Audited(Protocol):
    """A service whose changes are recorded: ``audit`` is set by :func:`bot.app.build_services`
    (None, as in tests that build the service alone: nothing is recorded)."""

    audit: AuditLog | None


S = TypeVar("S", bound=Audited)
P = ParamSpec("P")
R = TypeVar("R")


def _text(result: object) -> str:
    message = result if isinstance(result, Message) else getattr(result, "message", None)
    return message.plain_text() if isinstance(message, Message) else ""


def audited(
    action: str,
) -> Callable[
    [Callable[Concatenate[S, ChatContext, P], Awaitable[R]]],
    Callable[Concatenate[S, ChatContext, P], Awaitable[R]],
]:
    """Record a successful call of a service method that changes something, as ``action``,
    with the text of what it replied (``🗑️ Schedule #3 in #general removed…``)."""

    def wrap(
        method: Callable[Concatenate[S, ChatContext, P], Awaitable[R]],
    ) -> Callable[Concatenate[S, ChatContext, P], Awaitable[R]]:
        async def recorded(self: S, ctx: ChatContext, /, *args: P.args, **kwargs: P.kwargs) -> R:
            result = await method(self, ctx, *args, **kwargs)
            if self.audit is not None:
                await self.audit.record(ctx, action, _text(result))
            return result

        functools.update_wrapper(recorded, method)
        return recorded

    return wrap
