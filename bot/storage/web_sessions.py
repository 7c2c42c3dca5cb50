"""The admin web page's one-time sign-in links and sessions, by the hash of their secret.

A link is used at most once (the ``UPDATE ... WHERE used_at IS NULL`` decides, so two browsers
racing for one link cannot both win); a session is checked on every request, and ends when it
expires or is revoked.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.storage.database import Database
from bot.storage.timefmt import from_db, to_db

__all__ = ["SessionRow", "WebSessionStore"]


@dataclass(frozen=True, slots=True)
class SessionRow:
    """Who a link or session is for, and which workspaces they administer."""

    platform: str
    member: str
    member_name: str
    workspaces: tuple[int, ...]
    expires_at: datetime
    csrf: str = ""


def _ids(text: object) -> tuple[int, ...]:
    return tuple(int(i) for i in json.loads(str(text)))


class WebSessionStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add_signin(
        self, token_hash: str, who: SessionRow, workspaces: Sequence[int], now: datetime
    ) -> None:
        async with self._db.write() as conn:
            await conn.execute(
                "INSERT INTO web_signins (token_hash, platform, member, member_name, workspaces, "
                "created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    token_hash,
                    who.platform,
                    who.member,
                    who.member_name,
                    json.dumps(sorted(set(workspaces))),
                    to_db(now),
                    to_db(who.expires_at),
                ),
            )

    async def signin_state(self, token_hash: str, now: datetime) -> str:
        """``usable``, ``used``, ``expired`` or ``unknown``: what a link's page should say,
        read without using the link."""
        row = await self._db.fetchone(
            "SELECT used_at, expires_at FROM web_signins WHERE token_hash = ?", (token_hash,)
        )
        if row is None:
            return "unknown"
        if row[0] is not None:
            return "used"
        return "expired" if from_db(str(row[1])) <= now else "usable"

    async def use_signin(self, token_hash: str, now: datetime) -> SessionRow | None:
        """Mark a link used and return whom it was for; None if unknown, used or expired."""
        async with self._db.write() as conn:
            changed = await conn.execute(
                "UPDATE web_signins SET used_at = ? WHERE token_hash = ? AND used_at IS NULL "
                "AND expires_at > ?",
                (to_db(now), token_hash, to_db(now)),
            )
            if not changed:
                return None
            row = await conn.fetchone(
                "SELECT platform, member, member_name, workspaces, expires_at FROM web_signins "
                "WHERE token_hash = ?",
                (token_hash,),
            )
        assert row is not None
        return SessionRow(str(row[0]), str(row[1]), str(row[2]), _ids(row[3]), from_db(str(row[4])))

    async def add_session(self, token_hash: str, session: SessionRow, now: datetime) -> None:
        async with self._db.write() as conn:
            await conn.execute(
                "INSERT INTO web_sessions (token_hash, csrf, platform, member, member_name, "
                "workspaces, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    token_hash,
                    session.csrf,
                    session.platform,
                    session.member,
                    session.member_name,
                    json.dumps(list(session.workspaces)),
                    to_db(now),
                    to_db(session.expires_at),
                ),
            )

    async def session(self, token_hash: str, now: datetime) -> SessionRow | None:
        """The live session with this hash: not revoked, not expired."""
        row = await self._db.fetchone(
            "SELECT platform, member, member_name, workspaces, expires_at, csrf "
            "FROM web_sessions WHERE token_hash = ? AND revoked_at IS NULL AND expires_at > ?",
            (token_hash, to_db(now)),
        )
        if row is None:
            return None
        return SessionRow(
            str(row[0]), str(row[1]), str(row[2]), _ids(row[3]), from_db(row[4]), str(row[5])
        )

    async def revoke(self, token_hash: str, now: datetime) -> bool:
        async with self._db.write() as conn:
            changed = await conn.execute(
                "UPDATE web_sessions SET revoked_at = ? WHERE token_hash = ? "
                "AND revoked_at IS NULL",
                (to_db(now), token_hash),
            )
        return bool(changed)

    async def revoke_member(self, platform: str, member: str, now: datetime) -> int:
        """End every session of one person (an operator's "sign out everywhere")."""
        async with self._db.write() as conn:
            changed = await conn.execute(
                "UPDATE web_sessions SET revoked_at = ? WHERE platform = ? AND member = ? "
                "AND revoked_at IS NULL",
                (to_db(now), platform, member),
            )
        return int(changed)
