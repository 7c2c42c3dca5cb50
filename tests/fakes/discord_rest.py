"""The REST half of the Discord fake: aiohttp handlers under ``/api/v10``, each request recorded.

Every request becomes a :class:`~tests.fakes.discord_models.Call` in ``state.calls``, including
unknown routes (answered ``404`` with a Discord-shaped JSON error so the client raises
``discord.NotFound`` and the test notices). Every JSON answer carries
``Content-Type: application/json`` exactly: discord.py 2.7.1 compares the header with ``==`` and
treats anything else (``application/json; charset=utf-8``, aiohttp's default) as plain text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import BodyPartReader, web

from tests.fakes.discord_limits import message_problems, modal_problems
from tests.fakes.discord_models import (
    EPHEMERAL,
    LOADING,
    Call,
    FakeChannel,
    FakeMessage,
    UploadedFile,
)
from tests.fakes.discord_state import (
    AUTOCOMPLETE_RESULT,
    CHANNEL_MESSAGE,
    DEFERRED_CHANNEL_MESSAGE,
    DEFERRED_UPDATE_MESSAGE,
    MODAL,
    PONG,
    UPDATE_MESSAGE,
    CallbackResponse,
    FakeInteraction,
    FakeState,
)

__all__ = ["DiscordError", "Failure", "FakeRest", "json_response"]

Dispatch = Callable[[str, dict[str, Any]], Awaitable[int]]

# Which callback types Discord accepts for which interaction type.
_ALLOWED_CALLBACKS: dict[int, set[int]] = {
    2: {CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, MODAL},
    3: {CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, DEFERRED_UPDATE_MESSAGE, UPDATE_MESSAGE, MODAL},
    4: {AUTOCOMPLETE_RESULT},
    5: {CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, DEFERRED_UPDATE_MESSAGE, UPDATE_MESSAGE},
}
_COMMAND_NAME = re.compile(r"^[-_\w]{1,32}$")


class DiscordError(Exception):
    """Raised inside a handler; becomes ``{"message": ..., "code": ...}`` with ``status``."""

    def __init__(
        self, status: int, code: int, message: str, errors: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.errors = errors

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"message": self.message, "code": self.code}
        if self.errors:
            body["errors"] = self.errors
        return body


def _unknown(what: str, code: int) -> DiscordError:
    return DiscordError(404, code, f"Unknown {what}")


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Failure:
    """An injected failure: the next ``times`` matching requests get this answer."""

    method: str | None
    matcher: re.Pattern[str]
    status: int
    body: Any
    headers: dict[str, str]
    times: int

    def matches(self, method: str, path: str) -> bool:
        return (self.method in (None, "*", method)) and bool(self.matcher.fullmatch(path))


Handler = Callable[[Call], Awaitable[Reply]]


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> web.Response:
    if status == 204 or body is None:
        return web.Response(status=204 if status < 300 else status, headers=headers)
    # NOT web.json_response: it sends "application/json; charset=utf-8", which discord.py
    # 2.7.1 does not recognise as JSON (json_or_text compares the header exactly).
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    return web.Response(status=status, body=json.dumps(body).encode(), headers=all_headers)


class FakeRest:
    def __init__(self, state: FakeState, *, gateway_url: Callable[[], str], dispatch: Dispatch):
        self.state = state
        self._gateway_url = gateway_url
        self._dispatch = dispatch
        self.failures: list[Failure] = []
        self._routes: list[tuple[str, str, re.Pattern[str], Handler, bool]] = []
        self._register()

    # -- plumbing ---------------------------------------------------------------------------------

    def install(self, app: web.Application) -> None:
        app.router.add_get("/attachments/{channel_id}/{attachment_id}/{filename}", self._cdn)
        app.router.add_route("*", r"/api/v{version:\d+}{tail:(/.*)?}", self._handle)

    def route(self, method: str, template: str, handler: Handler, *, auth: bool = True) -> None:
        parts = re.split(r"\{(\w+)\}", template)  # literal, name, literal, name, ...
        regex = "".join(
            f"(?P<{part}>[^/]+)" if index % 2 else re.escape(part)
            for index, part in enumerate(parts)
        )
        self._routes.append((method, template, re.compile(regex), handler, auth))

    def _match(self, method: str, path: str) -> tuple[str, dict[str, str], Handler, bool] | None:
        for route_method, template, regex, handler, auth in self._routes:
            if route_method != method:
                continue
            found = regex.fullmatch(path)
            if found:
                return template, found.groupdict(), handler, auth
        return None

    async def _handle(self, request: web.Request) -> web.Response:
        path = request.match_info.get("tail") or "/"
        call = await self._record(request, path)
        matched = self._match(request.method, path)
        if matched is not None:
            call.route, call.params = matched[0], matched[1]
        reply = await self._answer(call, matched)
        call.status = reply.status
        call.response = reply.body
        self.state.calls.append(call)
        self.state.changes.notify()
        return json_response(reply.status, reply.body, reply.headers)

    async def _answer(
        self, call: Call, matched: tuple[str, dict[str, str], Handler, bool] | None
    ) -> Reply:
        for failure in self.failures:
            if failure.times > 0 and failure.matches(call.method, call.path):
                failure.times -= 1
                return Reply(failure.status, failure.body, dict(failure.headers))
        if matched is None:
            return Reply(404, {"message": "404: Not Found", "code": 0})
        _, _, handler, auth = matched
        if auth and not call.authorized:
            return Reply(401, {"message": "401: Unauthorized", "code": 0})
        try:
            _check_upload_limits(call)
            _check_message_limits(call)
            return await handler(call)
        except DiscordError as exc:
            return Reply(exc.status, exc.body())

    async def _record(self, request: web.Request, path: str) -> Call:
        headers = {k: v for k, v in request.headers.items() if k.lower() != "authorization"}
        authorized = request.headers.get("Authorization") == f"Bot {self.state.token}"
        body: Any = None
        files: list[UploadedFile] = []
        form: dict[str, str] = {}
        if request.content_type.startswith("multipart/"):
            reader = await request.multipart()
            while True:
                part = await reader.next()
                if part is None:
                    break
                if not isinstance(part, BodyPartReader):
                    continue  # discord.py never nests multiparts
                data = await part.read(decode=False)
                name = part.name or ""
                filename = part.filename
                if filename is not None:
                    content_type = part.headers.get("Content-Type", "application/octet-stream")
                    files.append(UploadedFile(name, filename, content_type, bytes(data)))
                elif name == "payload_json":
                    body = json.loads(bytes(data).decode("utf-8"))
                else:
                    form[name] = bytes(data).decode("utf-8", "replace")
        else:
            raw = await request.read()
            if raw:
                try:
                    body = json.loads(raw)
                except ValueError:
                    form["_raw"] = raw.decode("utf-8", "replace")
        return Call(
            method=request.method,
            path=path,
            route=None,
            params={},
            query=dict(request.query),
            headers=headers,
            json=body,
            files=files,
            form=form,
            authorized=authorized,
        )

    async def _cdn(self, request: web.Request) -> web.Response:
        self.state.downloads.append(request.match_info["attachment_id"])
        upload = self.state.uploads.get(request.match_info["attachment_id"])
        if upload is None:
            return web.Response(status=404, text="not found")
        return web.Response(body=upload.data, content_type="application/octet-stream")

    # -- routes ------------------------------------------------------------------------------------

    def _register(self) -> None:
        r = self.route
        r("GET", "/users/@me", self.get_me)
        r("GET", "/users/{user_id}", self.get_user)
        r("POST", "/users/@me/channels", self.create_dm)
        r("GET", "/gateway", self.get_gateway, auth=False)
        r("GET", "/gateway/bot", self.get_gateway_bot)
        r("GET", "/oauth2/applications/@me", self.get_application)
        r("GET", "/applications/@me", self.get_application)
        for prefix in ("/applications/{app}", "/applications/{app}/guilds/{guild_id}"):
            r("GET", prefix + "/commands", self.get_commands)
            r("PUT", prefix + "/commands", self.put_commands)
            r("POST", prefix + "/commands", self.post_command)
            r("GET", prefix + "/commands/{command_id}", self.get_command)
            r("PATCH", prefix + "/commands/{command_id}", self.patch_command)
            r("DELETE", prefix + "/commands/{command_id}", self.delete_command)
        r("GET", "/channels/{channel_id}", self.get_channel)
        r("GET", "/channels/{channel_id}/messages", self.list_messages)
        r("POST", "/channels/{channel_id}/messages", self.post_message)
        r("GET", "/channels/{channel_id}/messages/{message_id}", self.get_message)
        r("PATCH", "/channels/{channel_id}/messages/{message_id}", self.patch_message)
        r("DELETE", "/channels/{channel_id}/messages/{message_id}", self.delete_message)
        r("POST", "/channels/{channel_id}/messages/{message_id}/threads", self.thread_from_message)
        r("POST", "/channels/{channel_id}/threads", self.thread_without_message)
        r("POST", "/channels/{channel_id}/typing", self.no_content)
        for method in ("PUT", "DELETE"):
            r(
                method,
                "/channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me",
                self.no_content,
            )
        r("GET", "/guilds/{guild_id}", self.get_guild)
        r("GET", "/guilds/{guild_id}/channels", self.get_guild_channels)
        r("GET", "/guilds/{guild_id}/roles", self.get_guild_roles)
        r("GET", "/guilds/{guild_id}/members/{user_id}", self.get_member)
        member_role = "/guilds/{guild_id}/members/{user_id}/roles/{role_id}"
        r("PUT", member_role, self.add_member_role)
        r("DELETE", member_role, self.remove_member_role)
        r("POST", "/interactions/{interaction_id}/{token}/callback", self.callback, auth=False)
        hook = "/webhooks/{app}/{token}"
        r("POST", hook, self.followup, auth=False)
        r("GET", hook + "/messages/{message_id}", self.get_webhook_message, auth=False)
        r("PATCH", hook + "/messages/{message_id}", self.patch_webhook_message, auth=False)
        r("DELETE", hook + "/messages/{message_id}", self.delete_webhook_message, auth=False)

    # -- users, gateway, application ---------------------------------------------------------------

    async def get_me(self, call: Call) -> Reply:
        payload = self.state.bot.to_payload()
        payload.update(verified=True, mfa_enabled=False, locale="en-US", email=None)
        return Reply(200, payload)

    async def get_user(self, call: Call) -> Reply:
        user = self.state.known_user(_int(call.params["user_id"]))
        if user is None:
            raise _unknown("User", 10013)
        return Reply(200, user.to_payload())

    async def create_dm(self, call: Call) -> Reply:
        recipient_id = _int(str((call.json or {}).get("recipient_id")))
        user = self.state.known_user(recipient_id)
        if user is None:
            raise _unknown("User", 10013)
        for channel in self.state.dm_channels.values():
            if channel.recipients and channel.recipients[0].id == recipient_id:
                return Reply(200, channel.to_payload())
        channel = FakeChannel(self.state.ids(), "", None, type=1, recipients=[user])
        self.state.dm_channels[channel.id] = channel
        return Reply(200, channel.to_payload())

    async def get_gateway(self, call: Call) -> Reply:
        return Reply(200, {"url": self._gateway_url()})

    async def get_gateway_bot(self, call: Call) -> Reply:
        limit = {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}
        shards = self.state.shard_count
        return Reply(
            200, {"url": self._gateway_url(), "shards": shards, "session_start_limit": limit}
        )

    async def get_application(self, call: Call) -> Reply:
        state = self.state
        owner = state.bot.to_payload()
        owner.update(bot=False, username="owner")
        return Reply(
            200,
            {
                "id": str(state.application_id),
                "name": state.application_name,
                "icon": None,
                "description": "",
                "summary": "",
                "type": None,
                "bot_public": True,
                "bot_require_code_grant": False,
                "verify_key": "0" * 64,
                "flags": state.application_flags,
                "owner": owner,
                "team": None,
                "bot": state.bot.to_payload(),
                "rpc_origins": [],
                "tags": [],
                "redirect_uris": [],
                "interactions_endpoint_url": None,
                "approximate_guild_count": len(state.guilds),
                "integration_types_config": {"0": {}},
            },
        )

    # -- application commands ----------------------------------------------------------------------

    def _command_store(self, call: Call) -> tuple[dict[int, dict[str, Any]], int | None]:
        if _int(call.params["app"]) != self.state.application_id:
            raise DiscordError(403, 50001, "Missing Access")
        raw_guild = call.params.get("guild_id")
        if raw_guild is None:
            return self.state.global_commands, None
        guild_id = _int(raw_guild)
        if guild_id not in self.state.guilds:
            raise DiscordError(403, 50001, "Missing Access")
        return self.state.guild_commands.setdefault(guild_id, {}), guild_id

    def _normalise_command(
        self, item: dict[str, Any], command_id: int, guild_id: int | None
    ) -> dict[str, Any]:
        command: dict[str, Any] = {
            "type": 1,
            "description": "",
            "options": [],
            "default_member_permissions": None,
            "dm_permission": True,
            "nsfw": False,
            "contexts": None,
            "integration_types": [0],
            "name_localizations": None,
            "description_localizations": None,
            **item,
            "id": str(command_id),
            "application_id": str(self.state.application_id),
            "version": str(self.state.ids()),
        }
        if command["default_member_permissions"] is not None:  # discord.py sends an int
            command["default_member_permissions"] = str(command["default_member_permissions"])
        if guild_id is not None:
            command["guild_id"] = str(guild_id)
        return command

    async def get_commands(self, call: Call) -> Reply:
        store, _ = self._command_store(call)
        return Reply(200, list(store.values()))

    async def put_commands(self, call: Call) -> Reply:
        store, guild_id = self._command_store(call)
        items = call.json if isinstance(call.json, list) else []
        errors = {str(i): e for i, item in enumerate(items) if (e := _command_errors(item))}
        if errors:
            raise DiscordError(400, 50035, "Invalid Form Body", errors)
        by_key = {(c["name"], c.get("type", 1)): c for c in store.values()}
        fresh: dict[int, dict[str, Any]] = {}
        for item in items:
            old = by_key.get((item["name"], item.get("type", 1)))
            command_id = int(old["id"]) if old else self.state.ids()
            fresh[command_id] = self._normalise_command(item, command_id, guild_id)
        store.clear()
        store.update(fresh)
        return Reply(200, list(store.values()))

    async def post_command(self, call: Call) -> Reply:
        store, guild_id = self._command_store(call)
        item = call.json if isinstance(call.json, dict) else {}
        if errors := _command_errors(item):
            raise DiscordError(400, 50035, "Invalid Form Body", errors)
        for command_id, command in store.items():
            if (command["name"], command.get("type", 1)) == (item["name"], item.get("type", 1)):
                store[command_id] = self._normalise_command(item, command_id, guild_id)
                return Reply(200, store[command_id])
        command_id = self.state.ids()
        store[command_id] = self._normalise_command(item, command_id, guild_id)
        return Reply(201, store[command_id])

    def _stored_command(self, call: Call) -> tuple[dict[int, dict[str, Any]], int, int | None]:
        store, guild_id = self._command_store(call)
        command_id = _int(call.params["command_id"])
        if command_id not in store:
            raise _unknown("application command", 10063)
        return store, command_id, guild_id

    async def get_command(self, call: Call) -> Reply:
        store, command_id, _ = self._stored_command(call)
        return Reply(200, store[command_id])

    async def patch_command(self, call: Call) -> Reply:
        store, command_id, guild_id = self._stored_command(call)
        merged = {**store[command_id], **(call.json or {})}
        store[command_id] = self._normalise_command(merged, command_id, guild_id)
        return Reply(200, store[command_id])

    async def delete_command(self, call: Call) -> Reply:
        store, command_id, _ = self._stored_command(call)
        del store[command_id]
        return Reply(204)

    # -- channels and messages ---------------------------------------------------------------------

    def _channel(self, call: Call) -> FakeChannel:
        channel = self.state.channel(_int(call.params["channel_id"]))
        if channel is None:
            raise _unknown("Channel", 10003)
        return channel

    def _channel_message(self, call: Call) -> tuple[FakeChannel, FakeMessage]:
        channel = self._channel(call)
        message = self.state.messages.get(_int(call.params["message_id"]))
        # The bot cannot see ephemeral messages through the channel routes, only via webhooks.
        if message is None or message.channel_id != channel.id or message.ephemeral:
            raise _unknown("Message", 10008)
        return channel, message

    async def no_content(self, call: Call) -> Reply:
        return Reply(204)

    async def get_channel(self, call: Call) -> Reply:
        return Reply(200, self._channel(call).to_payload())

    async def list_messages(self, call: Call) -> Reply:
        channel = self._channel(call)
        limit = int(call.query.get("limit", "50"))
        before = int(call.query.get("before", "0")) or None
        after = int(call.query.get("after", "0")) or None
        found = [
            m
            for m in self.state.messages.values()
            if m.channel_id == channel.id
            and not m.ephemeral
            and (before is None or m.id < before)
            and (after is None or m.id > after)
        ]
        found.sort(key=lambda m: m.id, reverse=True)
        return Reply(200, [m.payload for m in found[:limit]])

    async def post_message(self, call: Call) -> Reply:
        channel = self._channel(call)
        body = call.json if isinstance(call.json, dict) else {}
        has_body = any(body.get(k) for k in ("content", "embeds", "components", "poll"))
        if not has_body and not call.files:
            raise DiscordError(400, 50006, "Cannot send an empty message")
        if channel.type == 1 and channel.recipients and not channel.recipients[0].dms_open:
            # The member turned off DMs from server members: opening the DM channel works,
            # sending into it does not.
            raise DiscordError(403, 50007, "Cannot send messages to this user")
        # A bot cannot post ephemeral messages to a channel: Discord drops the flag.
        body = {**body, "flags": int(body.get("flags") or 0) & ~(EPHEMERAL | LOADING)}
        message = self.state.create_message(channel, body, call.files)
        return Reply(200, message.payload)

    async def get_message(self, call: Call) -> Reply:
        _, message = self._channel_message(call)
        return Reply(200, message.payload)

    async def patch_message(self, call: Call) -> Reply:
        _, message = self._channel_message(call)
        if int(message.payload["author"]["id"]) != self.state.bot.id:
            raise DiscordError(403, 50005, "Cannot edit a message authored by another user")
        body = call.json if isinstance(call.json, dict) else {}
        self.state.edit_message(message, body, call.files)
        return Reply(200, message.payload)

    async def delete_message(self, call: Call) -> Reply:
        _, message = self._channel_message(call)
        self._delete(message)
        return Reply(204)

    def _delete(self, message: FakeMessage) -> None:
        message.deleted = True
        self.state.messages.pop(message.id, None)

    async def thread_from_message(self, call: Call) -> Reply:
        channel, message = self._channel_message(call)
        if message.payload.get("thread"):
            raise DiscordError(400, 160004, "A thread has already been created for this message")
        thread = self._new_thread(channel, message.id, call.json or {})
        payload = thread.to_payload()
        message.payload["thread"] = payload
        message.payload["flags"] = int(message.payload.get("flags") or 0) | (1 << 5)
        await self._dispatch("THREAD_CREATE", {**payload, "newly_created": True})
        return Reply(201, payload)

    async def thread_without_message(self, call: Call) -> Reply:
        channel = self._channel(call)
        body = call.json or {}
        thread = self._new_thread(channel, self.state.ids(), body)
        thread.type = int(body.get("type", 11))
        payload = thread.to_payload()
        await self._dispatch("THREAD_CREATE", {**payload, "newly_created": True})
        return Reply(201, payload)

    def _new_thread(self, parent: FakeChannel, thread_id: int, body: dict[str, Any]) -> FakeChannel:
        guild = self.state.guild_of(parent)
        if guild is None or parent.is_thread:
            raise DiscordError(400, 50024, "Cannot execute action on this channel type")
        name = str(body.get("name") or "thread")[:100]
        thread = FakeChannel(
            thread_id, name, guild.id, type=11, parent_id=parent.id, owner_id=self.state.bot.id
        )
        guild.channels[thread.id] = thread
        return thread

    # -- guilds ------------------------------------------------------------------------------------

    def _guild(self, call: Call) -> Any:
        guild = self.state.guilds.get(_int(call.params["guild_id"]))
        if guild is None:
            raise _unknown("Guild", 10004)
        return guild

    async def get_guild(self, call: Call) -> Reply:
        return Reply(200, self._guild(call).to_payload(with_state=False))

    async def get_guild_channels(self, call: Call) -> Reply:
        guild = self._guild(call)
        return Reply(200, [c.to_payload() for c in guild.channels.values() if not c.is_thread])

    async def get_guild_roles(self, call: Call) -> Reply:
        return Reply(200, [r.to_payload() for r in self._guild(call).roles.values()])

    async def get_member(self, call: Call) -> Reply:
        guild = self._guild(call)
        member = guild.members.get(_int(call.params["user_id"]))
        if member is None:
            raise _unknown("Member", 10007)
        return Reply(200, member.to_payload())

    async def add_member_role(self, call: Call) -> Reply:
        member, role = self._member_role(call)
        if role.id not in member.roles:
            member.roles.append(role.id)
        return Reply(204)

    async def remove_member_role(self, call: Call) -> Reply:
        member, role = self._member_role(call)
        if role.id in member.roles:
            member.roles.remove(role.id)
        return Reply(204)

    def _member_role(self, call: Call) -> tuple[Any, Any]:
        """As Discord checks a role change: the bot needs Manage Roles (or Administrator),
        and the role must be below the bot's highest role and not managed by an integration."""
        guild = self._guild(call)
        member = guild.members.get(_int(call.params["user_id"]))
        if member is None:
            raise _unknown("Member", 10007)
        role = guild.roles.get(_int(call.params["role_id"]))
        if role is None:
            raise _unknown("Role", 10011)
        bot = guild.members[self.state.bot.id]
        bot_roles = [guild.roles[r] for r in bot.roles if r in guild.roles]
        allowed = guild.everyone.permissions
        for held in bot_roles:
            allowed |= held.permissions
        top = max((r.position for r in bot_roles), default=0)
        may = allowed & ((1 << 28) | (1 << 3))  # manage roles, administrator
        if not may or role.position >= top or role.managed or role.id == guild.id:
            raise DiscordError(403, 50013, "Missing Permissions")
        return member, role

    # -- interactions ------------------------------------------------------------------------------

    async def callback(self, call: Call) -> Reply:
        state = self.state
        interaction = state.interactions.get(_int(call.params["interaction_id"]))
        if interaction is None or interaction.token != call.params["token"]:
            raise _unknown("interaction", 10062)
        if interaction.callback is not None:
            interaction.rejected_callbacks.append(call)
            raise DiscordError(400, 40060, "Interaction has already been acknowledged.")
        body = call.json if isinstance(call.json, dict) else {}
        kind = int(body.get("type", 0))
        data: dict[str, Any] = body.get("data") or {}
        allowed = _ALLOWED_CALLBACKS.get(interaction.type, set())
        if kind == PONG or kind not in allowed:
            raise DiscordError(
                400,
                50035,
                "Invalid Form Body",
                {
                    "type": {
                        "_errors": [
                            {
                                "code": "INTERACTION_RESPONSE_TYPE_INVALID",
                                "message": f"callback type {kind} is not valid for "
                                f"interaction type {interaction.type}",
                            }
                        ]
                    }
                },
            )
        channel = state.channel(interaction.channel_id)
        assert channel is not None, "interactions are only created in channels the fake knows"
        message: FakeMessage | None = None
        if kind == CHANNEL_MESSAGE:
            message = state.create_message(channel, data, call.files, interaction=interaction)
            interaction.original = message
        elif kind == DEFERRED_CHANNEL_MESSAGE:
            flags = int(data.get("flags") or 0) & EPHEMERAL
            message = state.create_message(
                channel, {"flags": flags}, [], interaction=interaction, extra_flags=LOADING
            )
            interaction.original = message
        elif kind in (UPDATE_MESSAGE, DEFERRED_UPDATE_MESSAGE):
            source = interaction.source_message
            if source is None:
                raise DiscordError(400, 50035, "Invalid Form Body: no message to update")
            if kind == UPDATE_MESSAGE:
                state.edit_message(source, data, call.files)
                message = source
            interaction.original = source
        elif kind == MODAL:
            state.modals[str(data.get("custom_id"))] = interaction
        interaction.callback = CallbackResponse(kind, data, list(call.files), call, message)

        if call.query.get("with_response", "").lower() not in ("1", "true"):
            return Reply(204)
        ephemeral = message is not None and message.ephemeral
        result: dict[str, Any] = {
            "interaction": {
                "id": str(interaction.id),
                "type": interaction.type,
                "response_message_loading": kind == DEFERRED_CHANNEL_MESSAGE,
                "response_message_ephemeral": ephemeral,
            },
            "resource": {"type": kind},
        }
        if message is not None:
            result["interaction"]["response_message_id"] = str(message.id)
            result["resource"]["message"] = message.payload
        return Reply(200, result)

    def _webhook_interaction(self, call: Call) -> FakeInteraction:
        interaction = self.state.interactions_by_token.get(call.params["token"])
        if interaction is None or _int(call.params["app"]) != self.state.application_id:
            raise _unknown("Webhook", 10015)
        if interaction.callback is None:
            # Follow-ups and @original only exist once the interaction was acknowledged.
            raise _unknown("Webhook", 10015)
        return interaction

    def _webhook_message(self, call: Call) -> tuple[FakeInteraction, FakeMessage]:
        interaction = self._webhook_interaction(call)
        raw = call.params["message_id"]
        if raw == "@original":
            message = interaction.original
        else:
            message_id = _int(raw)
            candidates = [interaction.original, *interaction.followups]
            message = next((m for m in candidates if m is not None and m.id == message_id), None)
        if message is None or message.deleted:
            raise _unknown("Message", 10008)
        return interaction, message

    async def followup(self, call: Call) -> Reply:
        interaction = self._webhook_interaction(call)
        body = call.json if isinstance(call.json, dict) else {}
        original = interaction.original
        if original is not None and original.loading:
            # Discord: a follow-up sent while the deferred "thinking" message is still loading
            # resolves that message (same id); its ephemeral flag is the defer's, not the body's.
            message = self.state.edit_message(original, body, call.files, resolve_loading=True)
        else:
            channel = self.state.channel(interaction.channel_id)
            assert channel is not None
            message = self.state.create_message(channel, body, call.files, interaction=interaction)
        interaction.followups.append(message)
        if call.query.get("wait", "").lower() in ("1", "true"):
            return Reply(200, message.payload)
        return Reply(204)

    async def get_webhook_message(self, call: Call) -> Reply:
        _, message = self._webhook_message(call)
        return Reply(200, message.payload)

    async def patch_webhook_message(self, call: Call) -> Reply:
        interaction, message = self._webhook_message(call)
        body = call.json if isinstance(call.json, dict) else {}
        was_loading = message.loading
        self.state.edit_message(message, body, call.files, resolve_loading=was_loading)
        if message is interaction.original:
            interaction.original_edits += 1
        return Reply(200, message.payload)

    async def delete_webhook_message(self, call: Call) -> Reply:
        _, message = self._webhook_message(call)
        self._delete(message)
        return Reply(204)


def _int(raw: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise DiscordError(400, 50035, f"Invalid Form Body: {raw!r} is not snowflake") from None


def _command_errors(item: dict[str, Any]) -> dict[str, Any]:
    """A small subset of Discord's validation, reported in its nested ``errors`` shape."""

    def err(code: str, message: str) -> dict[str, Any]:
        return {"_errors": [{"code": code, "message": message}]}

    errors: dict[str, Any] = {}
    kind = item.get("type", 1)
    name = item.get("name")
    if not isinstance(name, str) or (
        kind == 1 and (not _COMMAND_NAME.match(name) or name != name.lower())
    ):
        errors["name"] = err("APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
    if kind == 1:
        description = item.get("description") or ""
        if not 1 <= len(description) <= 100:
            errors["description"] = err(
                "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length."
            )
    options = item.get("options") or []
    if len(options) > 25:
        errors["options"] = err("BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.")
    option_errors: dict[str, Any] = {}
    seen_optional = False
    for index, option in enumerate(options):
        problems = _command_errors({**option, "type": 1})
        if option.get("type") not in (1, 2):
            if option.get("required"):
                if seen_optional:
                    problems["required"] = err(
                        "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID",
                        "Required options must be placed before non-required options",
                    )
            else:
                seen_optional = True
        if len(option.get("choices") or []) > 25:
            problems["choices"] = err("BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.")
        if problems:
            option_errors[str(index)] = problems
    if option_errors:
        errors["options"] = option_errors
    return errors


#: Discord's limits for a server without boosts: 10 MiB a file, 10 files, 25 MB a request.
UPLOAD_PER_FILE = 10 * 1024 * 1024
UPLOAD_MAX_FILES = 10
UPLOAD_PER_REQUEST = 25_000_000


def _check_message_limits(call: Call) -> None:
    """Refuse a message or modal past Discord's documented limits, as Discord does (50035)."""
    body = call.json
    if call.method not in ("POST", "PATCH") or not isinstance(body, dict):
        return
    if "/callback" in call.path:
        kind = int(body.get("type") or 0)
        data = body.get("data")
        problems = modal_problems(data) if kind == MODAL else message_problems(data)
    else:
        problems = message_problems(body)
    if problems:
        raise DiscordError(400, 50035, "Invalid Form Body: " + "; ".join(problems))


def _check_upload_limits(call: Call) -> None:
    """Refuse what Discord refuses: the whole message is lost, not just the big file."""
    if not call.files:
        return
    if len(call.files) > UPLOAD_MAX_FILES:
        raise DiscordError(400, 50035, "Invalid Form Body: too many attachments")
    if any(len(f.data) > UPLOAD_PER_FILE for f in call.files):
        raise DiscordError(413, 40005, "Request entity too large")
    if sum(len(f.data) for f in call.files) > UPLOAD_PER_REQUEST:
        raise DiscordError(413, 40005, "Request entity too large")
