"""A local fake of Discord's REST API and gateway for running the real discord.py client in tests.

Quick start (see ``tests/fakes/README.md`` for the whole API)::

    async with FakeDiscord() as fake:
        guild = fake.add_guild("Study", channels=["general"])
        alice = fake.add_member(guild, 1001, "alice")
        with use_discord_endpoints(fake.api_base, fake.gateway_url):
            bot = make_bot()  # a commands.Bot with guild_ready_timeout=0.1
            async with fake.running(bot):
                await bot.tree.sync(guild=discord.Object(guild.id))
                ix = await fake.slash_command(guild, "general", alice, "ping")
                assert (await ix.response()).ephemeral

Everything listens on 127.0.0.1 on an ephemeral port: REST under ``fake.api_base``
(``http://127.0.0.1:PORT/api/v10``) and the gateway at ``fake.gateway_url``
(``ws://127.0.0.1:PORT/gateway``, also what ``GET /gateway/bot`` returns).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import secrets
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from aiohttp import web

from tests.fakes.discord_gateway import FakeGateway, GatewaySession
from tests.fakes.discord_models import (
    DEFAULT_BOT_PERMISSIONS,
    DEFAULT_EVERYONE_PERMISSIONS,
    Call,
    FakeChannel,
    FakeGuild,
    FakeMember,
    FakeMessage,
    FakeRole,
    FakeUser,
    SnowflakeFactory,
    UploadedFile,
    path_matcher,
    permission_value,
)
from tests.fakes.discord_rest import Failure, FakeRest
from tests.fakes.discord_state import (
    DEFAULT_TIMEOUT,
    CallbackResponse,
    FakeInteraction,
    FakeState,
)

if TYPE_CHECKING:
    import discord

__all__ = [
    "Call",
    "CallbackResponse",
    "FakeChannel",
    "FakeDiscord",
    "FakeGuild",
    "FakeInteraction",
    "FakeMember",
    "FakeMessage",
    "FakeRole",
    "FakeUser",
    "UploadedFile",
    "assert_discord_quiet",
    "point_discord_py",
    "restore_discord_endpoints",
    "use_discord_endpoints",
]

UserRef = FakeMember | FakeUser | int | str
ChannelRef = FakeChannel | int | str
GuildRef = FakeGuild | int

# Application command option types.
_SUB_COMMAND, _SUB_COMMAND_GROUP = 1, 2
_STRING, _INTEGER, _BOOLEAN, _USER, _CHANNEL, _ROLE, _MENTIONABLE, _NUMBER, _ATTACHMENT = range(
    3, 12
)

# Component types whose interaction carries ``values``.
_SELECT_TYPES = {3, 5, 6, 7, 8}


# --- pointing discord.py at an endpoint ----------------------------------------------------------


def point_discord_py(api_base: str, gateway_url: str | None) -> None:
    """Make discord.py 2.7.1 use ``api_base`` for REST and ``gateway_url`` for the gateway.

    This is the code the adapter runs from ``DISCORD_API_BASE`` / ``DISCORD_GATEWAY_URL``.
    Both knobs are class attributes, so they apply to every client in the process:

    * ``discord.http.Route.BASE``: every REST route *and* the webhook/interaction routes
      (``discord.webhook.async_`` builds its URLs with the same ``Route``);
    * ``discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY``: a non-sharded ``Client`` never asks
      ``GET /gateway/bot``; it connects straight to this URL, then to READY's
      ``resume_gateway_url`` when resuming, and back to this one after INVALID_SESSION.
    """
    import yarl
    from discord.gateway import DiscordWebSocket
    from discord.http import Route

    Route.BASE = api_base.rstrip("/")
    if gateway_url:
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)


@contextlib.contextmanager
def restore_discord_endpoints() -> Iterator[None]:
    """Snapshot ``Route.BASE`` and ``DEFAULT_GATEWAY``; put them back on exit.

    Use it around a test whose code under test calls :func:`point_discord_py` itself (the
    adapter does, from its settings), so the next test starts from discord.py's defaults.
    """
    from discord.gateway import DiscordWebSocket
    from discord.http import Route

    base, gateway = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    try:
        yield
    finally:
        Route.BASE = base
        DiscordWebSocket.DEFAULT_GATEWAY = gateway


@contextlib.contextmanager
def use_discord_endpoints(api_base: str, gateway_url: str | None) -> Iterator[None]:
    """:func:`point_discord_py` for the duration of a ``with`` block."""
    with restore_discord_endpoints():
        point_discord_py(api_base, gateway_url)
        yield


def assert_discord_quiet(fake: FakeDiscord, records: Iterable[logging.LogRecord]) -> None:
    """What every Discord test checks at teardown: discord.py logged no error, and the bot used
    no route the fake lacks.

    discord.py only *logs* an exception raised in a handler, so without this a broken handler
    would pass as long as the test's own assertions did not notice.
    """
    errors = [r for r in records if r.name.startswith("discord") and r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]
    assert fake.unknown_calls == []


# --- the fake ------------------------------------------------------------------------------------


class FakeDiscord:
    """Discord's REST API and gateway on 127.0.0.1, plus a test-side API to drive a bot.

    Set up guilds, channels, roles and members *before* the client connects (they go out in
    GUILD_CREATE). Then drive the bot with :meth:`slash_command`, :meth:`click`,
    :meth:`submit_modal` and :meth:`autocomplete`, and inspect :attr:`calls`.
    """

    def __init__(
        self,
        *,
        token: str = "fake-discord-bot-token",
        bot_name: str = "StudyBot",
        application_id: int | None = None,
        application_flags: int = 0,
        heartbeat_interval_ms: int = 5_000,
        attachment_size_limit: int = 10 * 1024 * 1024,
        shard_count: int = 1,
    ) -> None:
        ids = SnowflakeFactory()
        bot_id = application_id or ids()
        self.state = FakeState(
            token=token,
            bot=FakeUser(bot_id, bot_name, bot=True),
            application_id=bot_id,
            application_name=bot_name,
            application_flags=application_flags,
            ids=ids,
            shard_count=shard_count,
        )
        self.attachment_size_limit = attachment_size_limit
        self.gateway = FakeGateway(self.state, heartbeat_interval_ms=heartbeat_interval_ms)
        self.rest = FakeRest(
            self.state, gateway_url=lambda: self.gateway_url, dispatch=self.gateway.dispatch
        )
        self._runner: web.AppRunner | None = None
        self._port = 0

    # -- lifecycle --------------------------------------------------------------------------------

    async def __aenter__(self) -> FakeDiscord:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def start(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)  # over Discord's, to see ours
        self.rest.install(app)
        self.gateway.install(app)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        assert host == "127.0.0.1"
        self._port = int(port)
        self.state.http_base = f"http://127.0.0.1:{self._port}"
        self.gateway.url = self.gateway_url

    async def stop(self) -> None:
        if self._runner is None:
            return
        await self.gateway.close_all()
        await self._runner.cleanup()
        self._runner = None

    @property
    def port(self) -> int:
        return self._port

    @property
    def api_base(self) -> str:
        """The value for ``DISCORD_API_BASE``."""
        return f"http://127.0.0.1:{self._port}/api/v10"

    @property
    def gateway_url(self) -> str:
        """The value for ``DISCORD_GATEWAY_URL`` (also returned by ``GET /gateway/bot``)."""
        return f"ws://127.0.0.1:{self._port}/gateway"

    @property
    def token(self) -> str:
        """The bot token the fake accepts (REST ``Authorization: Bot ...`` and IDENTIFY)."""
        return self.state.token

    @property
    def bot_user(self) -> FakeUser:
        return self.state.bot

    @property
    def application_id(self) -> int:
        return self.state.application_id

    @contextlib.asynccontextmanager
    async def running(
        self,
        client: discord.Client,
        *,
        timeout: float = 10.0,  # noqa: ASYNC109
    ) -> AsyncIterator[discord.Client]:
        """Start ``client`` against the fake, wait until it is ready, close it on exit.

        Ready means: discord.py fired ``on_ready`` *and* every guild the fake knows is cached
        (for a sharded client, every guild on its shards).
        A client that fails to start (bad token, not pointed at the fake) raises here instead of
        hanging. discord.py must already be pointed at the fake (:func:`use_discord_endpoints`,
        or the adapter's own settings).
        """
        task = asyncio.create_task(client.start(self.token), name="fake-discord-client")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        try:
            while not (
                client.is_ready() and all(client.get_guild(g) for g in self.guilds_of(client))
            ):
                if task.done():
                    self._raise_start_failure(task)
                if loop.time() > deadline:
                    raise TimeoutError(
                        f"client not ready within {timeout}s; gateway connections: "
                        f"{len(self.gateway.history)}; REST calls: "
                        f"{[str(c) for c in self.state.calls[-5:]]}"
                    )
                await asyncio.sleep(0.01)
            yield client
        finally:
            await client.close()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, 5.0)

    def guilds_of(self, client: discord.Client) -> list[int]:
        """The guild ids ``client``'s shards hold (all of them when it is not sharded)."""
        count = client.shard_count
        shard_ids = getattr(client, "shard_ids", None)
        if shard_ids is None and client.shard_id is not None:
            shard_ids = [client.shard_id]
        if not count or shard_ids is None:
            return list(self.state.guilds)
        return [g for g in self.state.guilds if (g >> 22) % count in shard_ids]

    def _raise_start_failure(self, task: asyncio.Task[None]) -> None:
        from discord.http import Route

        exc = task.exception()
        if self.api_base != Route.BASE:
            raise RuntimeError(
                f"discord.py is not pointed at the fake (Route.BASE={Route.BASE!r}, expected "
                f"{self.api_base!r}); wrap the test in use_discord_endpoints(fake.api_base, "
                "fake.gateway_url) or pass the fake's URLs to the adapter's settings"
            ) from exc
        if exc is not None:
            raise exc
        raise RuntimeError("client.start() returned before the client became ready")

    # -- guild setup ------------------------------------------------------------------------------

    @property
    def guilds(self) -> dict[int, FakeGuild]:
        return self.state.guilds

    def add_guild(
        self,
        name: str = "Test Guild",
        *,
        guild_id: int | None = None,
        owner_id: int | None = None,
        channels: Iterable[str] = ("general",),
        everyone_permissions: object = DEFAULT_EVERYONE_PERMISSIONS,
        bot_permissions: object = DEFAULT_BOT_PERMISSIONS,
        locale: str = "en-US",
        shard: tuple[int, int] | None = None,
    ) -> FakeGuild:
        """A guild with text channels, an ``@everyone`` role and the bot as a member.

        The bot gets a managed role named after it with ``bot_permissions``; ``owner_id`` (default:
        a fresh "owner" member) has every permission. Add guilds before the client connects.
        ``shard=(shard_id, shard_count)`` picks a guild id that shard holds.
        """
        state = self.state
        if guild_id is None and shard is not None:
            guild_id = state.ids.on_shard(*shard)
        gid = guild_id or state.ids()
        owner = owner_id or state.ids()
        guild = FakeGuild(gid, name, owner, locale=locale)
        guild.roles[gid] = FakeRole(gid, gid, "@everyone", permission_value(everyone_permissions))
        for index, channel_name in enumerate(channels):
            channel = FakeChannel(state.ids(), channel_name, gid, position=index)
            guild.channels[channel.id] = channel
        bot_role = FakeRole(
            state.ids(), gid, state.bot.name, permission_value(bot_permissions), 1, managed=True
        )
        guild.roles[bot_role.id] = bot_role
        guild.members[state.bot.id] = FakeMember(state.bot, gid, roles=[bot_role.id])
        if owner not in guild.members:
            guild.members[owner] = FakeMember(FakeUser(owner, "owner"), gid)
        state.guilds[gid] = guild
        return guild

    def _guild(self, ref: GuildRef) -> FakeGuild:
        gid = ref.id if isinstance(ref, FakeGuild) else ref
        try:
            return self.state.guilds[gid]
        except KeyError:
            raise KeyError(f"the fake has no guild {gid}; add it with fake.add_guild()") from None

    def add_channel(self, guild: GuildRef, name: str, *, type: int = 0) -> FakeChannel:
        g = self._guild(guild)
        channel = FakeChannel(self.state.ids(), name, g.id, type=type, position=len(g.channels))
        g.channels[channel.id] = channel
        return channel

    def add_role(
        self,
        guild: GuildRef,
        name: str,
        *,
        permissions: object = 0,
        role_id: int | None = None,
        position: int | None = None,
    ) -> FakeRole:
        """A role; ``permissions`` is an int or a ``discord.Permissions``. ``position`` (the
        hierarchy: higher is above) defaults to the top, above the bot's own role."""
        g = self._guild(guild)
        role = FakeRole(
            role_id or self.state.ids(),
            g.id,
            name,
            permission_value(permissions),
            len(g.roles) if position is None else position,
        )
        g.roles[role.id] = role
        return role

    def add_member(
        self,
        guild: GuildRef,
        user_id: int,
        name: str,
        *,
        roles: Iterable[FakeRole | int | str] = (),
        permissions: object | None = None,
        nick: str | None = None,
        bot: bool = False,
    ) -> FakeMember:
        """A guild member. ``roles`` are roles, role ids or role names.

        ``permissions`` (int or ``discord.Permissions``) overrides what the member's roles would
        give: it is what interactions report as ``member.permissions`` (and so what
        ``interaction.permissions`` / ``app_commands.checks.has_permissions`` see).
        """
        g = self._guild(guild)
        role_ids = [g.role(r.id if isinstance(r, FakeRole) else r).id for r in roles]
        member = FakeMember(
            FakeUser(user_id, name, bot=bot),
            g.id,
            roles=role_ids,
            nick=nick,
            permissions_override=None if permissions is None else permission_value(permissions),
        )
        g.members[user_id] = member
        return member

    # -- recorded REST calls ----------------------------------------------------------------------

    @property
    def calls(self) -> list[Call]:
        """Every REST request so far, in order (``method``, ``path``, ``json``, ``files``...)."""
        return self.state.calls

    @property
    def attachment_downloads(self) -> list[str]:
        """Ids of attachments whose bytes were fetched (``Attachment.read()``), in order."""
        return self.state.downloads

    @property
    def unknown_calls(self) -> list[Call]:
        """Requests to routes the fake does not implement (they were answered 404)."""
        return [c for c in self.state.calls if not c.known]

    def calls_to(self, method: str | None, path_pattern: str) -> list[Call]:
        """Calls whose method matches (``None``/``"*"``: any) and path matches ``path_pattern``.

        ``{anything}`` in the pattern matches one path segment:
        ``fake.calls_to("POST", "/channels/{id}/messages")``.
        """
        return self.state.calls_to(method, path_pattern)

    async def wait_for_call(
        self,
        method: str | None,
        path_pattern: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109
        count: int = 1,
    ) -> Call:
        """Wait until at least ``count`` matching calls were made; return the ``count``-th."""

        def check() -> Call | None:
            found = self.calls_to(method, path_pattern)
            return found[count - 1] if len(found) >= count else None

        def describe() -> str:
            recent = "\n  ".join(str(c) for c in self.state.calls[-10:]) or "(none)"
            return (
                f"no {method or '*'} {path_pattern} call #{count} within {timeout}s.\n"
                f"Last REST calls:\n  {recent}"
            )

        return await self.state.changes.until(check, timeout=timeout, describe=describe)

    def fail_next(
        self,
        method: str | None,
        path_pattern: str,
        *,
        status: int = 403,
        code: int = 50013,
        message: str = "Missing Permissions",
        times: int = 1,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Answer the next ``times`` matching requests with an error instead of handling them.

        Defaults to Discord's 403 *Missing Permissions*. Avoid 500/502/504: discord.py retries
        those with sleeps of 1, 3, 5... seconds. A 429 needs ``headers={"Via": "1.1 google"}`` and
        ``body={"retry_after": 0.01, "global": False, "message": "..."}`` to be retried.
        """
        self.rest.failures.append(
            Failure(
                method=method.upper() if method else None,
                matcher=path_matcher(path_pattern),
                status=status,
                body={"message": message, "code": code} if body is None else body,
                headers=dict(headers or {}),
                times=times,
            )
        )

    # -- messages ---------------------------------------------------------------------------------

    def message(self, message_id: int) -> FakeMessage:
        try:
            return self.state.messages[message_id]
        except KeyError:
            raise KeyError(f"the fake stores no message {message_id}") from None

    def messages_in(self, channel: FakeChannel | int) -> list[FakeMessage]:
        """Messages in a channel (ephemeral ones included), oldest first."""
        cid = channel.id if isinstance(channel, FakeChannel) else channel
        return sorted(
            (m for m in self.state.messages.values() if m.channel_id == cid), key=lambda m: m.id
        )

    async def wait_for_message(
        self,
        channel: FakeChannel | int | None = None,
        predicate: Callable[[FakeMessage], bool] | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109
    ) -> FakeMessage:
        """Wait for a stored message (optionally in ``channel``, matching ``predicate``)."""
        cid = channel.id if isinstance(channel, FakeChannel) else channel
        seen = set(self.state.messages)

        def check() -> FakeMessage | None:
            for message in self.state.messages.values():
                if message.id in seen or (cid is not None and message.channel_id != cid):
                    continue
                if predicate is None or predicate(message):
                    return message
            return None

        return await self.state.changes.until(
            check,
            timeout=timeout,
            describe=lambda: f"no new message in {cid or 'any channel'} within {timeout}s",
        )

    # -- gateway ----------------------------------------------------------------------------------

    @property
    def sessions(self) -> list[GatewaySession]:
        """Currently connected gateway sessions; ``.identify`` holds each IDENTIFY payload."""
        return self.gateway.sessions

    async def wait_until_connected(self, timeout: float = 10.0) -> GatewaySession:  # noqa: ASYNC109
        """Wait until a client has IDENTIFYed (for code that starts the client itself).

        discord.py fires ``on_ready`` ``guild_ready_timeout`` seconds after the last GUILD_CREATE,
        so follow with ``await client.wait_until_ready()`` if the test needs the guild cache.
        """
        return await self.gateway.wait_for_session(timeout)

    async def dispatch(self, event: str, data: dict[str, Any]) -> int:
        """Send any gateway DISPATCH (e.g. ``"GUILD_MEMBER_ADD"``) to the connected client(s)."""
        return await self.gateway.dispatch(event, data)

    async def join_guild(self, guild: GuildRef) -> int:
        """Announce a guild added after the client connected (GUILD_CREATE, like a bot invite).

        Sent without ``unavailable``: discord.py reads ``unavailable: false`` as an outage ending
        (``on_guild_available``) and its absence as a join (``on_guild_join``).
        """
        payload = self._guild(guild).to_payload(with_state=True)
        del payload["unavailable"]
        return await self.gateway.dispatch("GUILD_CREATE", payload)

    async def edit_role(
        self, guild: GuildRef, role: FakeRole | int | str, *, permissions: object
    ) -> int:
        """A server admin changes a role's permissions after the client connected: the role is
        updated and GUILD_ROLE_UPDATE is sent (``{guild_id, role}``), as Discord does, so the
        client's cache sees the new permissions."""
        g = self._guild(guild)
        found = g.role(role.id if isinstance(role, FakeRole) else role)
        found.permissions = permission_value(permissions)
        return await self.gateway.dispatch(
            "GUILD_ROLE_UPDATE", {"guild_id": str(g.id), "role": found.to_payload()}
        )

    async def request_reconnect(self) -> None:
        """Gateway op 7: discord.py reconnects and RESUMEs (on_ready does not fire again)."""
        await self.gateway.request_reconnect()

    async def invalidate_session(self, *, resumable: bool = False) -> None:
        """Gateway op 9: the client identifies again (READY and on_ready again)."""
        await self.gateway.invalidate_sessions(resumable=resumable)

    async def _send_interaction(
        self,
        payload: dict[str, Any],
        description: str,
        timeout: float,  # noqa: ASYNC109
    ) -> FakeInteraction:
        await self.gateway.wait_for_session(timeout)
        interaction = FakeInteraction(self.state, payload, description=description)
        self.state.interactions[interaction.id] = interaction
        self.state.interactions_by_token[interaction.token] = interaction
        return interaction

    async def _deliver(self, interaction: FakeInteraction) -> FakeInteraction:
        sent = await self.gateway.dispatch("INTERACTION_CREATE", interaction.payload)
        if not sent:
            raise RuntimeError(
                "no client is connected to the fake gateway (or none runs the shard of "
                f"guild {interaction.payload.get('guild_id')})"
            )
        return interaction

    # -- interactions -----------------------------------------------------------------------------

    async def slash_command(
        self,
        guild: GuildRef | None,
        channel: ChannelRef | None,
        user: UserRef,
        name: str,
        options: Mapping[str, Any] | None = None,
        *,
        subcommand: str | None = None,
        locale: str = "en-US",
        timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109
    ) -> FakeInteraction:
        """Invoke ``/name [subcommand] option=value...`` as ``user`` in ``channel``.

        ``subcommand`` is ``"sub"`` or ``"group sub"``. Option values are plain Python values;
        members, users, channels and roles (fake objects) become ids plus ``resolved`` data, and an
        attachment option takes ``(filename, bytes)``. The option types come from the synced
        command (``tree.sync()``); for a command that was never synced they are guessed.
        With ``guild=None`` the command runs in a DM with ``user``.
        """
        return await self._command(
            2, guild, channel, user, name, options, subcommand, None, locale, timeout
        )

    async def autocomplete(
        self,
        guild: GuildRef | None,
        channel: ChannelRef | None,
        user: UserRef,
        name: str,
        options: Mapping[str, Any],
        *,
        focused: str,
        subcommand: str | None = None,
        locale: str = "en-US",
        timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109
    ) -> FakeInteraction:
        """An autocomplete request (type 4) while ``user`` types option ``focused``.

        ``(await ix.response()).choices`` is what the bot suggested.
        """
        return await self._command(
            4, guild, channel, user, name, options, subcommand, focused, locale, timeout
        )

    async def _command(
        self,
        kind: int,
        guild_ref: GuildRef | None,
        channel_ref: ChannelRef | None,
        user_ref: UserRef,
        name: str,
        options: Mapping[str, Any] | None,
        subcommand: str | None,
        focused: str | None,
        locale: str,
        timeout: float,  # noqa: ASYNC109
    ) -> FakeInteraction:
        guild, channel, actor = self._context(guild_ref, channel_ref, user_ref)
        command = self._synced_command(name, guild)
        resolved: dict[str, dict[str, Any]] = {}
        schema: list[dict[str, Any]] | None = command.get("options") if command else None
        path = subcommand.split() if subcommand else []
        for part in path:
            found = _option(schema, part) if schema is not None else None
            if schema is not None and (found is None or found["type"] not in (1, 2)):
                raise KeyError(f"/{name} has no subcommand {part!r}")
            schema = (found.get("options") or []) if found else None
        leaf = self._build_options(
            name, schema, dict(options or {}), guild, resolved, focused, check=kind == 2
        )
        nested: list[dict[str, Any]] = leaf
        for depth, part in reversed(list(enumerate(path))):
            kind_of_part = _SUB_COMMAND if depth == len(path) - 1 else _SUB_COMMAND_GROUP
            nested = [{"name": part, "type": kind_of_part, "options": nested}]
        data: dict[str, Any] = {
            "id": command["id"] if command else str(self.state.ids()),
            "name": name,
            "type": 1,
            "options": nested,
        }
        if command and command.get("guild_id"):
            data["guild_id"] = command["guild_id"]
        if resolved:
            data["resolved"] = resolved
        payload = self._interaction_payload(kind, guild, channel, actor, data, locale=locale)
        label = f"/{name}{' ' + subcommand if subcommand else ''}"
        label = f"autocomplete {label} ({focused})" if kind == 4 else label
        interaction = await self._send_interaction(payload, label, timeout)
        return await self._deliver(interaction)

    async def click(
        self,
        target: FakeMessage | int | str,
        user: UserRef,
        *,
        custom_id: str | None = None,
        label: str | None = None,
        values: Iterable[str] | None = None,
        locale: str = "en-US",
        timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109
    ) -> FakeInteraction:
        """Click a button (or choose ``values`` in a select) on a message the bot sent.

        ``target`` is a :class:`FakeMessage`, a message id, or a ``custom_id`` (then the newest
        message carrying it is used). Pick the component with ``custom_id=`` or ``label=`` when
        the message has several. The interaction carries the full stored message, which is what
        lets a ``DynamicItem`` rebuild itself after a restart.
        """
        if isinstance(target, str):
            custom_id = target
            message = self._message_with(target)
        elif isinstance(target, int):
            message = self.message(target)
        else:
            message = target
        if message.deleted:
            raise LookupError(f"message {message.id} was deleted")
        if custom_id is None and label is None:
            interactive = message.interactive
            if len(interactive) != 1:
                raise LookupError(
                    f"message {message.id} has {len(interactive)} components; pass custom_id= or "
                    f"label= (custom_ids: {message.custom_ids})"
                )
            component = interactive[0]
        else:
            component = message.component(custom_id=custom_id, label=label)
        if component.get("disabled"):
            raise AssertionError(f"component {component.get('custom_id')!r} is disabled")
        channel = self.state.channel(message.channel_id)
        if channel is None:
            raise KeyError(f"message {message.id} is in a channel the fake does not know")
        guild = self.state.guild_of(channel)
        _, _, actor = self._context(guild, channel, user)
        data: dict[str, Any] = {
            "custom_id": component["custom_id"],
            "component_type": component["type"],
        }
        if isinstance(component.get("id"), int):
            data["id"] = component["id"]
        if component["type"] in _SELECT_TYPES:
            data["values"] = list(values or [])
        elif values is not None:
            raise ValueError("values= is only for select menus")
        payload = self._interaction_payload(3, guild, channel, actor, data, locale=locale)
        payload["message"] = copy.deepcopy(message.payload)
        interaction = await self._send_interaction(
            payload, f"click {component['custom_id']!r}", timeout
        )
        interaction.source_message = message
        return await self._deliver(interaction)

    async def submit_modal(
        self,
        custom_id: str,
        user: UserRef,
        fields: Mapping[str, str],
        *,
        guild: GuildRef | None = None,
        channel: ChannelRef | None = None,
        locale: str = "en-US",
        timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109
    ) -> FakeInteraction:
        """Submit the modal ``custom_id`` that the bot opened (callback type 9) with ``fields``.

        ``fields`` maps a text input's ``custom_id`` *or its label* to the typed value; inputs not
        named are submitted empty. Guild and channel default to where the modal was opened.
        """
        opener = self.state.modals.get(custom_id)
        if opener is None or opener.callback is None:
            raise LookupError(
                f"the bot never opened a modal {custom_id!r} (opened: {sorted(self.state.modals)})"
            )
        modal = opener.callback
        if channel is None:
            channel = self.state.channel(opener.channel_id)
            if guild is None and opener.guild_id is not None:
                guild = opener.guild_id
        resolved_guild, resolved_channel, actor = self._context(guild, channel, user)
        components = _modal_submission(modal, dict(fields))
        data = {"custom_id": custom_id, "components": components}
        payload = self._interaction_payload(
            5, resolved_guild, resolved_channel, actor, data, locale=locale
        )
        if opener.source_message is not None:
            payload["message"] = copy.deepcopy(opener.source_message.payload)
        interaction = await self._send_interaction(payload, f"modal submit {custom_id!r}", timeout)
        interaction.source_message = opener.source_message
        return await self._deliver(interaction)

    # -- payload building -------------------------------------------------------------------------

    def _message_with(self, custom_id: str) -> FakeMessage:
        for message in sorted(self.state.messages.values(), key=lambda m: m.id, reverse=True):
            if custom_id in message.custom_ids:
                return message
        raise LookupError(f"no stored message has a component with custom_id {custom_id!r}")

    def _context(
        self, guild_ref: GuildRef | None, channel_ref: ChannelRef | None, user_ref: UserRef
    ) -> tuple[FakeGuild | None, FakeChannel, FakeMember | FakeUser]:
        if guild_ref is None and isinstance(channel_ref, FakeChannel) and channel_ref.guild_id:
            guild_ref = channel_ref.guild_id
        if guild_ref is None:
            user = self._dm_user(user_ref)
            if isinstance(channel_ref, FakeChannel):
                return None, channel_ref, user
            return None, self._dm_channel(user), user
        guild = self._guild(guild_ref)
        if isinstance(channel_ref, FakeChannel):
            channel = channel_ref
        elif channel_ref is None:
            channel = next(c for c in guild.channels.values() if not c.is_thread)
        else:
            channel = guild.channel(channel_ref)
        if isinstance(user_ref, FakeMember | FakeUser):
            member = guild.member(user_ref.id)
        else:
            member = guild.member(user_ref)
        return guild, channel, member

    def _dm_user(self, ref: UserRef) -> FakeUser:
        if isinstance(ref, FakeMember):
            return ref.user
        if isinstance(ref, FakeUser):
            return ref
        if isinstance(ref, int):
            user = self.state.known_user(ref)
            if user is None:
                raise KeyError(f"no member of any guild has id {ref}; add one with add_member()")
            return user
        raise TypeError("in a DM, pass the user as a FakeMember, FakeUser or user id")

    def _dm_channel(self, user: FakeUser) -> FakeChannel:
        for channel in self.state.dm_channels.values():
            if channel.recipients and channel.recipients[0].id == user.id:
                return channel
        channel = FakeChannel(self.state.ids(), "", None, type=1, recipients=[user])
        self.state.dm_channels[channel.id] = channel
        return channel

    def _synced_command(self, name: str, guild: FakeGuild | None) -> dict[str, Any] | None:
        stores = [self.state.guild_commands.get(guild.id, {})] if guild else []
        stores.append(self.state.global_commands)
        for store in stores:
            for command in store.values():
                if command["name"] == name and command.get("type", 1) == 1:
                    return command
        return None

    def _interaction_payload(
        self,
        kind: int,
        guild: FakeGuild | None,
        channel: FakeChannel,
        actor: FakeMember | FakeUser,
        data: dict[str, Any],
        *,
        locale: str,
    ) -> dict[str, Any]:
        """Everything discord.py 2.7.1 reads from an interaction (``attachment_size_limit`` is
        required: ``Interaction._from_data`` indexes it)."""
        state = self.state
        interaction_id = state.ids()
        payload: dict[str, Any] = {
            "id": str(interaction_id),
            "application_id": str(state.application_id),
            "type": kind,
            "data": data,
            "token": f"fake-interaction-{interaction_id}-{secrets.token_hex(8)}",
            "version": 1,
            "channel_id": str(channel.id),
            "channel": channel.to_payload(),
            "locale": locale,
            "entitlements": [],
            "entitlement_sku_ids": [],
            "attachment_size_limit": self.attachment_size_limit,
        }
        if guild is not None:
            assert isinstance(actor, FakeMember)
            bot_member = guild.members[state.bot.id]
            payload.update(
                guild_id=str(guild.id),
                guild={"id": str(guild.id), "locale": guild.locale, "features": []},
                guild_locale=guild.locale,
                member=actor.to_payload(permissions=guild.permissions_of(actor)),
                app_permissions=str(guild.permissions_of(bot_member)),
                authorizing_integration_owners={"0": str(guild.id)},
                context=0,
            )
        else:
            user = actor.user if isinstance(actor, FakeMember) else actor
            payload.update(
                user=user.to_payload(),
                app_permissions=str(DEFAULT_BOT_PERMISSIONS),
                authorizing_integration_owners={"0": "0", "1": str(user.id)},
                context=1,
            )
        return payload

    def _build_options(
        self,
        command: str,
        schema: list[dict[str, Any]] | None,
        values: dict[str, Any],
        guild: FakeGuild | None,
        resolved: dict[str, dict[str, Any]],
        focused: str | None,
        *,
        check: bool,
    ) -> list[dict[str, Any]]:
        built: list[dict[str, Any]] = []
        if schema is not None and check:
            missing = [o["name"] for o in schema if o.get("required") and o["name"] not in values]
            if missing:
                raise ValueError(f"/{command}: missing required option(s) {missing}")
        for name, value in values.items():
            spec = _option(schema, name) if schema is not None else None
            if schema is not None and spec is None:
                known = [o["name"] for o in schema]
                raise KeyError(f"/{command} has no option {name!r} (options: {known})")
            kind = int(spec["type"]) if spec else _guess_option_type(value)
            option: dict[str, Any] = {"name": name, "type": kind}
            if name == focused:
                option.update(value=str(value), focused=True)  # the partial text being typed
            else:
                option["value"] = self._option_value(kind, value, guild, resolved)
                choices = (spec or {}).get("choices")
                if check and choices and option["value"] not in [c["value"] for c in choices]:
                    raise ValueError(f"/{command} {name}={value!r} is not one of its choices")
            built.append(option)
        return built

    def _option_value(
        self,
        kind: int,
        value: Any,
        guild: FakeGuild | None,
        resolved: dict[str, dict[str, Any]],
    ) -> Any:
        if kind == _STRING:
            return str(value)
        if kind == _INTEGER:
            return int(value)
        if kind == _NUMBER:
            return float(value)
        if kind == _BOOLEAN:
            return bool(value)
        if kind in (_USER, _MENTIONABLE) and isinstance(value, FakeMember | FakeUser | int):
            user = value.user if isinstance(value, FakeMember) else value
            if isinstance(user, int):
                found = self.state.known_user(user)
                if found is None:
                    raise KeyError(f"no known user {user}")
                user = found
            resolved.setdefault("users", {})[str(user.id)] = user.to_payload()
            member = guild.members.get(user.id) if guild else None
            if guild is not None and member is not None:
                data = member.to_payload(permissions=guild.permissions_of(member))
                del data["user"]  # resolved members come without user; it is in resolved.users
                resolved.setdefault("members", {})[str(user.id)] = data
            return str(user.id)
        if kind in (_ROLE, _MENTIONABLE) and isinstance(value, FakeRole):
            resolved.setdefault("roles", {})[str(value.id)] = value.to_payload()
            return str(value.id)
        if kind == _CHANNEL:
            channel = value if isinstance(value, FakeChannel) else None
            if channel is None and guild is not None:
                channel = guild.channel(value)
            if channel is None:
                raise TypeError("a channel option takes a FakeChannel, id or name")
            data = channel.to_payload()
            data["permissions"] = str(DEFAULT_BOT_PERMISSIONS)
            resolved.setdefault("channels", {})[str(channel.id)] = data
            return str(channel.id)
        if kind == _ATTACHMENT:
            filename, content = value
            attachment_id = self.state.ids()
            raw = content.encode() if isinstance(content, str) else bytes(content)
            url = self.state.attachment_url(0, attachment_id, filename)
            resolved.setdefault("attachments", {})[str(attachment_id)] = {
                "id": str(attachment_id),
                "filename": filename,
                "size": len(raw),
                "url": url,
                "proxy_url": url,
                "content_type": "application/octet-stream",
            }
            self.state.uploads[str(attachment_id)] = UploadedFile("option", filename, "", raw)
            return str(attachment_id)
        raise TypeError(f"cannot send {value!r} as an option of type {kind}")


def _option(schema: list[dict[str, Any]] | None, name: str) -> dict[str, Any] | None:
    for option in schema or []:
        if option.get("name") == name:
            return option
    return None


def _guess_option_type(value: object) -> int:
    if isinstance(value, bool):
        return _BOOLEAN
    if isinstance(value, int):
        return _INTEGER
    if isinstance(value, float):
        return _NUMBER
    if isinstance(value, FakeMember | FakeUser):
        return _USER
    if isinstance(value, FakeChannel):
        return _CHANNEL
    if isinstance(value, FakeRole):
        return _ROLE
    if isinstance(value, tuple):
        return _ATTACHMENT
    return _STRING


def _modal_submission(modal: CallbackResponse, fields: dict[str, str]) -> list[dict[str, Any]]:
    """Mirror the modal's layout the way Discord submits it: action rows and labels kept."""
    unused = dict(fields)

    def value_for(component: dict[str, Any], label: str | None) -> str:
        for key in (component.get("custom_id"), label, component.get("label")):
            if key is not None and key in unused:
                return unused.pop(key)
        return ""

    def submit(component: dict[str, Any], label: str | None) -> dict[str, Any]:
        kind = component.get("type")
        if kind == 18:  # Label: one child
            inner = submit(component["component"], component.get("label"))
            return {"type": 18, "id": component.get("id"), "component": inner}
        if kind == 1:
            return {
                "type": 1,
                "id": component.get("id"),
                "components": [submit(c, label) for c in component.get("components") or []],
            }
        submitted: dict[str, Any] = {
            "type": kind,
            "id": component.get("id"),
            "custom_id": component.get("custom_id"),
        }
        if kind == 4:
            submitted["value"] = value_for(component, label)
        elif kind in _SELECT_TYPES:
            raw = value_for(component, label)
            submitted["values"] = [raw] if raw else []
        return submitted

    components = [submit(c, None) for c in modal.components]
    if unused:
        labels = [t.get("label") or t.get("custom_id") for t in modal.text_inputs]
        raise KeyError(f"modal {modal.custom_id!r} has no input(s) {sorted(unused)}; has {labels}")
    return components
