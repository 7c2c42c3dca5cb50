"""The gateway half of the Discord fake: one aiohttp websocket endpoint speaking gateway v10.

HELLO (op 10) on connect; IDENTIFY (op 2) is answered with READY then one GUILD_CREATE per
guild; RESUME (op 6) with RESUMED, or INVALID_SESSION when the session is unknown; heartbeats
(op 1) with HEARTBEAT_ACK (op 11).

Sharding as Discord does it: an IDENTIFY with ``shard: [id, count]`` gets, in READY and as
GUILD_CREATE, only the guilds with ``(guild_id >> 22) % count == id``, and later dispatches
only for those guilds (events outside any guild, DMs, go to shard 0); an impossible shard is
closed with 4010. A session without ``shard`` gets every guild and every event, as before. Every frame is a **text** frame of plain JSON: discord.py asks
for ``compress=zlib-stream`` (or ``zstd-stream``) in the query string, but it only decompresses
*binary* frames, so uncompressed text frames are always understood.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.discord_state import FakeState

__all__ = ["FakeGateway", "GatewaySession"]

DISPATCH = 0
HEARTBEAT = 1
IDENTIFY = 2
PRESENCE_UPDATE = 3
RESUME = 6
RECONNECT = 7
REQUEST_GUILD_MEMBERS = 8
INVALID_SESSION = 9
HELLO = 10
HEARTBEAT_ACK = 11
INVALID_SHARD = 4010  # close code

# Events whose guild is their ``id`` (every other guild event carries ``guild_id``).
_GUILD_EVENTS = {"GUILD_CREATE", "GUILD_UPDATE", "GUILD_DELETE"}


def event_guild(event: str, data: Any) -> int | None:
    """The guild a dispatch belongs to, or ``None`` (a DM, a user update...)."""
    if not isinstance(data, dict):
        return None
    raw = data.get("id") if event in _GUILD_EVENTS else data.get("guild_id")
    return int(raw) if raw is not None else None


@dataclass
class GatewaySession:
    """One websocket connection from a client."""

    ws: web.WebSocketResponse
    query: dict[str, str]
    session_id: str | None = None
    seq: int = 0
    identify: dict[str, Any] | None = None
    resumed: bool = False
    ready: bool = False
    presence: dict[str, Any] | None = None
    #: ``(shard_id, shard_count)`` from IDENTIFY (kept across RESUME); ``None``: unsharded.
    shard: tuple[int, int] | None = None
    received: list[dict[str, Any]] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)  # every frame, in order
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def send(self, op: int, d: Any = None, t: str | None = None) -> None:
        async with self._lock:
            frame: dict[str, Any] = {"op": op, "d": d, "s": None, "t": t}
            if op == DISPATCH:
                self.seq += 1
                frame["s"] = self.seq
            self.sent.append(frame)
            if not self.ws.closed:
                await self.ws.send_str(json.dumps(frame))

    def receives(self, guild_id: int | None) -> bool:
        """Whether Discord would send this session an event of ``guild_id`` (``None``: no
        guild, which only shard 0 receives)."""
        if self.shard is None:
            return True
        shard_id, count = self.shard
        if guild_id is None:
            return shard_id == 0
        return (guild_id >> 22) % count == shard_id


class FakeGateway:
    def __init__(self, state: FakeState, *, url: str = "", heartbeat_interval_ms: int = 45_000):
        self.state = state
        self.url = url
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.sessions: list[GatewaySession] = []  # currently connected
        self.history: list[GatewaySession] = []  # every connection ever made
        self._resumable: dict[str, GatewaySession] = {}  # session_id -> its latest connection

    def install(self, app: web.Application) -> None:
        app.router.add_get("/gateway", self._handle)
        app.router.add_get("/gateway/", self._handle)

    # -- test-facing ------------------------------------------------------------------------------

    @property
    def ready_sessions(self) -> list[GatewaySession]:
        return [s for s in self.sessions if s.ready and not s.ws.closed]

    async def dispatch(self, event: str, data: dict[str, Any]) -> int:
        """Send a DISPATCH to every ready session whose shard holds the event's guild (every
        unsharded session); returns how many received it."""
        guild_id = event_guild(event, data)
        sessions = [s for s in self.ready_sessions if s.receives(guild_id)]
        for session in sessions:
            await session.send(DISPATCH, data, event)
        return len(sessions)

    async def wait_for_session(
        self,
        timeout: float,  # noqa: ASYNC109
        *,
        where: Callable[[GatewaySession], bool] | None = None,
    ) -> GatewaySession:
        """The newest ready session (optionally the newest one for which ``where`` holds)."""

        def check() -> GatewaySession | None:
            ready = [s for s in self.ready_sessions if where is None or where(s)]
            return ready[-1] if ready else None

        return await self.state.changes.until(
            check,
            timeout=timeout,
            describe=lambda: (
                f"no client finished IDENTIFY on the fake gateway within {timeout}s "
                f"(connections so far: {len(self.history)}); start the client with "
                "`async with fake.running(bot)` and point discord.py at the fake first"
            ),
        )

    async def request_reconnect(self) -> None:
        """Send op 7 RECONNECT: discord.py closes the socket and RESUMEs on a new one."""
        for session in list(self.sessions):
            await session.send(RECONNECT)

    async def invalidate_sessions(self, *, resumable: bool = False) -> None:
        """Send op 9 INVALID_SESSION: the client re-IDENTIFYs (or RESUMEs when resumable)."""
        for session in list(self.sessions):
            if not resumable and session.session_id:
                self._resumable.pop(session.session_id, None)
            await session.send(INVALID_SESSION, resumable)

    async def close_all(self, code: int = 1001) -> None:
        for session in list(self.sessions):
            await session.ws.close(code=code)

    # -- protocol ---------------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(max_msg_size=0)
        await ws.prepare(request)
        session = GatewaySession(ws=ws, query=dict(request.query))
        self.sessions.append(session)
        self.history.append(session)
        self.state.changes.notify()
        try:
            await session.send(HELLO, {"heartbeat_interval": self.heartbeat_interval_ms})
            async for message in ws:
                if message.type == WSMsgType.TEXT:
                    frame = json.loads(message.data)
                    session.received.append(frame)
                    await self._on_frame(session, frame)
                elif message.type == WSMsgType.ERROR:
                    break
        finally:
            self.sessions.remove(session)
            self.state.changes.notify()
        return ws

    async def _on_frame(self, session: GatewaySession, frame: dict[str, Any]) -> None:
        op = frame.get("op")
        data = frame.get("d")
        if op == HEARTBEAT:
            await session.send(HEARTBEAT_ACK)
        elif op == IDENTIFY:
            await self._identify(session, data or {})
        elif op == RESUME:
            await self._resume(session, data or {})
        elif op == PRESENCE_UPDATE:
            session.presence = data
        elif op == REQUEST_GUILD_MEMBERS:
            await self._members_chunk(session, data or {})
        self.state.changes.notify()

    async def _identify(self, session: GatewaySession, data: dict[str, Any]) -> None:
        if data.get("token") != self.state.token:
            await session.ws.close(code=4004, message=b"Authentication failed.")
            return
        if session.identify is not None:
            await session.ws.close(code=4005, message=b"Already authenticated.")
            return
        if "shard" in data:
            shard = _shard(data["shard"])
            if shard is None:
                await session.ws.close(code=INVALID_SHARD, message=b"Invalid shard.")
                return
            session.shard = shard
        session.identify = data
        session.session_id = uuid.uuid4().hex
        self._resumable[session.session_id] = session
        state = self.state
        guilds = [g for g in state.guilds.values() if session.receives(g.id)]
        ready: dict[str, Any] = {
            "v": 10,
            "user": state.bot.to_payload(),
            "guilds": [{"id": str(g.id), "unavailable": True} for g in guilds],
            "session_id": session.session_id,
            "session_type": "normal",
            "resume_gateway_url": self.url,
            "application": {"id": str(state.application_id), "flags": state.application_flags},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": [],
            "user_settings": {},
            "auth": {},
            "_trace": ['["fake-discord-gateway",{"micros":0}]'],
        }
        if "shard" in data:
            ready["shard"] = data["shard"]
        await session.send(DISPATCH, ready, "READY")
        for guild in guilds:
            await session.send(DISPATCH, guild.to_payload(with_state=True), "GUILD_CREATE")
        session.ready = True

    async def _resume(self, session: GatewaySession, data: dict[str, Any]) -> None:
        session_id = str(data.get("session_id"))
        previous = self._resumable.get(session_id)
        if data.get("token") != self.state.token or previous is None:
            await session.send(INVALID_SESSION, False)
            return
        session.session_id = session_id
        session.seq = previous.seq
        session.shard = previous.shard
        self._resumable[session_id] = session
        session.identify = {"resumed_from": session_id}
        session.resumed = True
        await session.send(DISPATCH, {}, "RESUMED")
        session.ready = True

    async def _members_chunk(self, session: GatewaySession, data: dict[str, Any]) -> None:
        guild = self.state.guilds.get(int(data.get("guild_id", 0)))
        if guild is None:
            return
        wanted = {int(u) for u in data.get("user_ids") or []}
        query = str(data.get("query") or "")
        members = [
            m.to_payload()
            for m in guild.members.values()
            if (not wanted or m.id in wanted) and m.name.startswith(query)
        ]
        chunk: dict[str, Any] = {
            "guild_id": str(guild.id),
            "members": members,
            "chunk_index": 0,
            "chunk_count": 1,
        }
        if data.get("nonce"):
            chunk["nonce"] = data["nonce"]
        await session.send(DISPATCH, chunk, "GUILD_MEMBERS_CHUNK")


def _shard(value: Any) -> tuple[int, int] | None:
    """IDENTIFY's ``shard: [shard_id, shard_count]`` if Discord would accept it."""
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    shard_id, count = value
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None
    return (shard_id, count) if 0 <= shard_id < count else None
