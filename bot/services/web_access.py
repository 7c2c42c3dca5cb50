"""Who may use the admin web page: one-time sign-in links, sessions, and the workspaces each
person administers.

The secrets (a link's token, a session's token) are random, shown once, and stored only as
SHA-256 hashes. A link is used at most once and expires; a session is checked against the
database on every request (so it can be revoked, and several web processes can share it) and
expires. The workspaces a person administers are fixed when the link is made, by whoever made
it (``studybot web`` for the console's workspaces) or at an OAuth sign-in (from the platform's
own permissions, see :mod:`bot.web.oauth`); every page checks them before it reads or changes
anything, and every write checks again with the platform.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from bot.core.clock import Clock
from bot.core.models import ChatContext
from bot.services.places import Places
from bot.storage.directory import ChannelRow, WorkspaceRow
from bot.storage.web_sessions import SessionRow, WebSessionStore

__all__ = [
    "LINK_LIFETIME",
    "SESSION_LIFETIME",
    "AdminSession",
    "ChannelRow",
    "Person",
    "WebAccess",
    "WorkspacePlace",
]

LINK_LIFETIME = timedelta(minutes=15)
SESSION_LIFETIME = timedelta(hours=12)


@dataclass(frozen=True, slots=True)
class Person:
    """Someone who may sign in: a member id on a platform, and the name shown for them."""

    platform: str
    member: str
    name: str


@dataclass(frozen=True, slots=True)
class AdminSession:
    """A signed-in person, the workspaces they administer, and the session's form token."""

    person: Person
    workspaces: frozenset[int]
    csrf: str

    def administers(self, workspace_id: int) -> bool:
        return workspace_id in self.workspaces


@dataclass(frozen=True, slots=True)
class WorkspacePlace:
    """A workspace as the admin page names it, with its channels."""

    id: int
    platform: str
    external_id: str
    timezone: str
    channels: tuple[ChannelRow, ...]
    name: str | None = None

    @property
    def label(self) -> str:
        """How a person knows the workspace: its name and platform ("Study Group · Discord"),
        the id where no name was seen, and the terminal chat as "Console chat"."""
        if self.platform == "console":
            return "Console chat"
        platform = {"discord": "Discord", "slack": "Slack"}.get(self.platform, self.platform)
        return f"{self.name} · {platform}" if self.name else f"{platform} {self.external_id}"

    def channel(self, typed: object) -> ChannelRow | None:
        """The channel a form or link names by its row id (as typed: text), if it is one of
        this workspace's; None for anything else."""
        return next((c for c in self.channels if str(c.id) == typed), None)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class WebAccess:
    """Sign-in links and sessions (see the module docstring)."""

    def __init__(self, *, store: WebSessionStore, places: Places, clock: Clock) -> None:
        self._store = store
        self._places = places
        self._clock = clock

    async def make_link_token(
        self, person: Person, workspaces: Sequence[int], lifetime: timedelta = LINK_LIFETIME
    ) -> str:
        """A new single-use sign-in token for ``person``, administering ``workspaces``."""
        token = secrets.token_urlsafe(32)
        now = self._clock.now()
        row = SessionRow(person.platform, person.member, person.name, (), now + lifetime)
        await self._store.add_signin(_hash(token), row, workspaces, now)
        return token

    async def link_state(self, link_token: str) -> str:
        """What a sign-in link's page should offer: ``usable`` (a Sign in button), or why it
        cannot (``used``, ``expired``, ``unknown``), so a used link says so before a click."""
        return await self._store.signin_state(_hash(link_token), self._clock.now())

    async def redeem(
        self, link_token: str, lifetime: timedelta = SESSION_LIFETIME
    ) -> tuple[str, AdminSession] | None:
        """Use a sign-in token: a new session's token and the session; None if the link is
        unknown, used or expired."""
        now = self._clock.now()
        who = await self._store.use_signin(_hash(link_token), now)
        if who is None:
            return None
        token = secrets.token_urlsafe(32)
        csrf = secrets.token_urlsafe(32)
        session = SessionRow(
            who.platform, who.member, who.member_name, who.workspaces, now + lifetime, csrf
        )
        await self._store.add_session(_hash(token), session, now)
        return token, _admin(session)

    async def open_session(
        self, person: Person, workspaces: Sequence[int], lifetime: timedelta = SESSION_LIFETIME
    ) -> tuple[str, AdminSession]:
        """A new session for ``person`` straight away (an OAuth sign-in, whose provider vouched
        for them): its token and the session."""
        now = self._clock.now()
        token = secrets.token_urlsafe(32)
        session = SessionRow(
            person.platform,
            person.member,
            person.name,
            tuple(sorted(set(workspaces))),
            now + lifetime,
            secrets.token_urlsafe(32),
        )
        await self._store.add_session(_hash(token), session, now)
        return token, _admin(session)

    async def workspaces_on(self, platform: str, external_ids: Sequence[str]) -> dict[str, int]:
        """The workspaces of ``platform`` this database knows among ``external_ids`` (a
        Discord server's id, a Slack team's id), by external id; none is made."""
        wanted = set(external_ids)
        found: dict[str, int] = {}
        for workspace_id in await self._places.workspace_ids(platform):
            workspace = await self._places.workspace_by_id(workspace_id)
            if workspace.external_id in wanted:
                found[workspace.external_id] = workspace.id
        return found

    async def session(self, session_token: str) -> AdminSession | None:
        """The live session for a token (None: unknown, revoked or expired)."""
        row = await self._store.session(_hash(session_token), self._clock.now())
        return None if row is None else _admin(row)

    async def sign_out(self, session_token: str) -> bool:
        return await self._store.revoke(_hash(session_token), self._clock.now())

    async def sign_out_everywhere(self, person: Person) -> int:
        return await self._store.revoke_member(person.platform, person.member, self._clock.now())

    # --- the workspaces and channels a session may see ----------------------------------------

    async def console_workspaces(self, *, channel: str = "general") -> list[int]:
        """Every console workspace of this database, the console's own made if none exists
        yet (with its first channel), so the page works straight after installing."""
        ids = await self._places.workspace_ids("console")
        if not ids:
            ctx = ChatContext(
                platform="console",
                workspace="console",
                channel=channel,
                member="me",
                member_name="me",
                channel_name=channel,
                workspace_name="console",
            )
            workspace, _ = await self._places.channel(ctx)
            ids = [workspace.id]
        return ids

    async def place(self, session: AdminSession, workspace_id: int) -> WorkspacePlace | None:
        """A workspace the session administers, with its channels; None for any other (the
        caller answers 404: another workspace's existence is not told either)."""
        if not session.administers(workspace_id):
            return None
        workspace = await self._places.workspace_by_id(workspace_id)
        if workspace.platform != session.person.platform:
            return None
        channels = await self._places.channels_of(workspace)
        return _place(workspace, channels)

    async def places(self, session: AdminSession) -> list[WorkspacePlace]:
        found = [await self.place(session, i) for i in sorted(session.workspaces)]
        return [p for p in found if p is not None]

    @staticmethod
    def context(
        session: AdminSession, place: WorkspacePlace, channel: ChannelRow | None = None
    ) -> ChatContext:
        """The identity the page acts as: the signed-in person, as an admin of ``place``
        (checked by :meth:`place`), in ``channel`` (or in no channel, for workspace-wide
        pages)."""
        assert session.administers(place.id)
        return ChatContext(
            platform=place.platform,
            workspace=place.external_id,
            channel=channel.external_id if channel else "",
            member=session.person.member,
            member_name=session.person.name,
            is_admin=True,
            channel_name=(channel.name or channel.external_id) if channel else None,
            command_prefix="/",
            via="web",
        )


def _place(workspace: WorkspaceRow, channels: Sequence[ChannelRow]) -> WorkspacePlace:
    return WorkspacePlace(
        workspace.id,
        workspace.platform,
        workspace.external_id,
        workspace.settings.timezone,
        tuple(channels),
        workspace.name,
    )


def _admin(row: SessionRow) -> AdminSession:
    return AdminSession(
        Person(row.platform, row.member, row.member_name), frozenset(row.workspaces), row.csrf
    )
