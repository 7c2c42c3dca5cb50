"""What a page handler gets once a request passed the checks (shared by the page modules)."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.datastructures import FormData

from bot.services.web_access import AdminSession, WorkspacePlace

__all__ = ["Seen"]


@dataclass(frozen=True, slots=True)
class Seen:
    """A request that passed the checks: its session and (on workspace pages) its workspace."""

    session: AdminSession
    place: WorkspacePlace | None
    form: FormData | None
