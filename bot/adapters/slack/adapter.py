"""The Slack adapter: slack-bolt ``AsyncApp`` listeners that turn Slack requests into core calls.

One object is the whole Slack side of the bot: it is the :class:`~bot.core.startup.PlatformAdapter`
(``run()`` / ``stop()``) and the core's :class:`~bot.core.gateway.ChatGateway` (``send_post`` /
``edit_post``, i.e. ``chat.postMessage`` / ``chat.update``), so the scheduler can post and reveal
through it too.

How a request is handled, whatever the delivery (Socket Mode or HTTP ``/slack/events``):

1. ``ack()`` comes within Slack's 3 seconds: bolt sends it as soon as it is called
   (``process_before_response=False``). Commands ack first and do the slow work (lookups,
   database, sandbox) after it. A button click is the exception: its answer or review is
   stored *before* the ack (within :data:`ACK_BUDGET`), so an HTTP 200 means the click is kept
   even if this process dies the next instant; a process that dies before acking leaves the
   request to be sent again, by Slack's retry or the load balancer, to a live replica. A bad
   ``/study`` subcommand is answered in the ack itself (usage help, ephemeral).
2. The member is looked up (``users.info``, cached) to build a :class:`ChatContext`.
3. The service answers with a neutral :class:`Message`; :mod:`.render` turns it into Block Kit.
   Private answers go through the request's ``response_url`` (ephemeral), or
   ``chat.postEphemeral`` where Slack sends none (modal submissions).

Errors: every listener is wrapped by :meth:`SlackAdapter._guarded`, which makes sure the request
was acked and hands the exception to the one error handler, :meth:`SlackAdapter._on_error`
(also registered as bolt's global ``app.error``). A :class:`StudyError` becomes a private reply
with its message; anything else is logged with its context and answered with an apology. The
wrapper exists because bolt, when a listener raises *after* ``ack()``, resets the ack it is
still waiting on and can then time the request out; handled in the wrapper, it never sees one.

slack-bolt facts this relies on (each pinned by ``tests/fakes/test_slack_fake.py``):

* ``AsyncApp`` never calls ``auth.test`` at start, so :meth:`SlackAdapter.start` does, and a bad
  app token would make Socket Mode retry forever, so ``apps.connections.open`` is tried first.
* ``view_submission`` has no ``response_url``: modal results go out with ``chat.*`` calls.
* Ephemeral messages cannot carry files: a pack report's full problem list (a text file) is
  posted in the member's direct messages with the bot, and the private reply says so.
* A slash command cannot carry a file, so pack uploads come through the *Check question pack*
  message shortcut on a message with the .yaml file attached (see :mod:`.files`).
* HTTP mode: bolt reads any form body containing the word ``payload`` as interactivity (a 404
  for ``/study run print(payload)``), so the events endpoint is :func:`.http.events_app`, which
  parses such bodies as the forms they are.
"""

from __future__ import annotations

import asyncio
import enum
import functools
import json
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import aiohttp
from aiohttp import web
from pydantic import SecretStr
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.commands import (
    SolveRequest,
    help_rows,
)
from bot.adapters.dispatch import dispatch
from bot.adapters.slack.commands import (
    StudyCommand,
    first_code_block,
    parse_study,
)
from bot.adapters.slack.files import attached_files, download, file_info
from bot.adapters.slack.http import events_app
from bot.adapters.slack.identity import DEFAULT_TTL, SlackDirectory
from bot.adapters.slack.manifest import (
    ANSWER_MODAL_CALLBACK,
    PACK_SHORTCUT_CALLBACK,
    RUN_MODAL_CALLBACK,
    RUN_SHORTCUT_CALLBACK,
    SLASH_COMMAND,
    SOLVE_MODAL_CALLBACK,
    WRITE_MODAL_CALLBACK,
)
from bot.adapters.slack.render import (
    IN_NEXT_MESSAGES,
    IN_THREAD,
    SlackMessage,
    answer_modal,
    home_view,
    inline_attachments,
    render,
    run_modal,
    solve_modal,
    write_modal,
)
from bot.adapters.text_commands import run_schedule_command
from bot.core import replies
from bot.core.errors import APOLOGY, BadInput, StudyError, Unavailable, UsageError
from bot.core.messages import (
    ACTION_ID_PATTERN,
    Action,
    Attachment,
    Message,
    Section,
    Tone,
    parse_action,
)
from bot.core.models import ChatContext
from bot.core.replies import TYPE_IT, parse_review_value
from bot.core.requests import (
    RemindRequest,
    RewardAdd,
    RewardsRequest,
)
from bot.core.rewards import Power
from bot.core.startup import StartupError
from bot.core.uploads import SLACK, fit_attachments
from bot.log import get_logger
from bot.questions.written import WRITE_FIELD_NAMES
from bot.questions.written import from_fields as written_from_fields
from bot.services.bundle import Services
from bot.services.packs import PACK_SUFFIXES
from bot.settings import Settings
from bot.text import clip

__all__ = ["ACTION_PATTERN", "EVENTS_PATH", "SlackAdapter", "SlackMode"]

log = get_logger(__name__)

_GROUP_TTL = 30.0  # seconds a user group's members, read for a team round, are trusted

PLATFORM = "slack"
HELP_PREFIX = f"{SLASH_COMMAND} "
EVENTS_PATH = "/slack/events"
ACTION_PATTERN = re.compile(rf"^{ACTION_ID_PATTERN}$")
"""Block Kit ``action_id`` s of our buttons: :attr:`bot.core.messages.Button.custom_id`."""

CONNECT_TIMEOUT = 30.0
# How long a click's work may run before the ack goes out anyway: Slack shows the member an
# error after 3 s, and the ack still has to travel back.
ACK_BUDGET = 2.0
DRAIN_TIMEOUT = 10.0
KIND_CHARS = 120  # how much of a command's text goes into an error log line
MAX_PACK_FILES = 5  # pack files checked from one message
PACK_HOWTO = (
    "To check a question pack, attach its .yaml file to a message (here or in a direct "
    "message with studybot), then choose *Check question pack* from the message's ⋯ menu. "
    "Everyone gets the linter's report; an admin's valid pack is installed."
)
NO_PACK_FILE = (
    "That message has no file attached. Attach a .yaml question pack to a message, then use "
    "*Check question pack* on it."
)
# A message too long for one Slack message (see render.fit) continues in up to this many
# thread replies (a public post) or further private replies (a response_url works five times);
# past that, its whole text goes as a file.
MAX_THREAD_PARTS = 5
MAX_FOLLOW_UPS = 3
WHOLE_TEXT_FILE = "studybot-message.txt"
_CANNOT_POST = frozenset(
    {"not_in_channel", "channel_not_found", "is_archived", "restricted_action", "ekm_access_denied"}
)

Listener = Callable[..., Awaitable[None]]


class SlackMode(enum.StrEnum):
    SOCKET = "socket"
    HTTP = "http"


def _secret(value: SecretStr | None) -> str:
    return value.get_secret_value().strip() if value is not None else ""


def _api_error(exc: SlackApiError) -> str:
    error = exc.response.get("error") if exc.response is not None else None
    return str(error or f"HTTP {exc.response.status_code}")


@dataclass(frozen=True, slots=True)
class _Where:
    """Who sent a request, from where, and what it was: for the context and for error logs."""

    kind: str
    team: str
    user: str
    user_name: str = ""
    channel: str | None = None
    channel_name: str | None = None
    team_domain: str | None = None
    response_url: bool = False

    @property
    def replyable(self) -> bool:
        return bool(self.user) and not self.kind.startswith("event")


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _where(body: dict[str, Any]) -> _Where:
    """Read the ids out of any payload shape Slack sends (command, interactivity, event)."""
    if "command" in body:  # a slash command: flat form fields
        text = _str(body.get("text"))
        return _Where(
            kind=f"{body['command']} {text}".strip()[:KIND_CHARS],  # `run` text can be long
            team=_str(body.get("team_id")),
            user=_str(body.get("user_id")),
            user_name=_str(body.get("user_name")),
            channel=_str(body.get("channel_id")) or None,
            channel_name=_str(body.get("channel_name")) or None,
            team_domain=_str(body.get("team_domain")) or None,
            response_url=bool(body.get("response_url")),
        )
    if body.get("type") == "event_callback":
        event = body.get("event") or {}
        return _Where(
            kind=f"event {_str(event.get('type'))}",
            team=_str(body.get("team_id")),
            user=_str(event.get("user")),
            channel=_str(event.get("channel")) or None,
        )
    team = body.get("team") or {}
    user = body.get("user") or {}
    channel = body.get("channel") or {}
    kind = _str(body.get("type")) or "request"
    channel_id = _str(channel.get("id")) or _str((body.get("container") or {}).get("channel_id"))
    channel_name = _str(channel.get("name")) or None
    if body.get("type") == "block_actions":
        actions = body.get("actions") or [{}]
        kind = f"action {_str(actions[0].get('action_id'))}"
    elif body.get("type") == "view_submission":
        view = body.get("view") or {}
        kind = f"view {_str(view.get('callback_id'))}"
        try:
            meta = json.loads(_str(view.get("private_metadata")) or "{}")
        except json.JSONDecodeError:
            meta = {}
        if isinstance(meta, dict):
            channel_id = _str(meta.get("channel"))
            channel_name = _str(meta.get("channel_name")) or None
    elif body.get("type") in ("message_action", "shortcut"):
        kind = f"shortcut {_str(body.get('callback_id'))}"
    return _Where(
        kind=kind,
        team=_str(team.get("id")) or _str(user.get("team_id")),
        user=_str(user.get("id")),
        user_name=_str(user.get("username")) or _str(user.get("name")),
        channel=channel_id or None,
        channel_name=channel_name,
        team_domain=_str(team.get("domain")) or None,
        response_url=bool(body.get("response_url")),
    )


def _input_value(view: dict[str, Any], block_id: str, action_id: str) -> str:
    values = ((view.get("state") or {}).get("values") or {}).get(block_id) or {}
    return _str((values.get(action_id) or {}).get("value"))


def slack_mode(settings: Settings, http_port: int | None) -> SlackMode:
    """How the settings ask to reach Slack; :class:`StartupError` with the fix if they cannot.

    Called before anything else starts (``studybot run`` checks settings first), so a missing
    token is one line, not a line after the database and the sandbox came up.
    """
    if not _secret(settings.slack_bot_token):
        raise StartupError(
            "SLACK_BOT_TOKEN is not set: install the app (deploy/slack-manifest.yaml) and "
            "copy its Bot User OAuth Token (xoxb-...)"
        )
    signing_secret = _secret(settings.slack_signing_secret)
    if http_port is not None:
        if not signing_secret:
            raise StartupError(
                "--http needs SLACK_SIGNING_SECRET (Basic Information > Signing Secret) "
                "to verify Slack's requests"
            )
        return SlackMode.HTTP
    if _secret(settings.slack_app_token):
        return SlackMode.SOCKET
    if signing_secret:
        raise StartupError(
            "SLACK_SIGNING_SECRET is set but --http PORT is not: pass --http PORT for HTTP "
            "mode, or set SLACK_APP_TOKEN (xapp-...) for Socket Mode"
        )
    raise StartupError(
        "set SLACK_APP_TOKEN (xapp-..., Socket Mode: no public URL needed) or "
        "SLACK_SIGNING_SECRET with --http PORT (HTTP mode, /slack/events)"
    )


class SlackAdapter:
    """Slack for studybot: Socket Mode by default, HTTP (``/slack/events``) with ``--http``."""

    def __init__(
        self,
        service: Services,
        settings: Settings,
        *,
        http_port: int | None = None,
        http_host: str = "0.0.0.0",  # noqa: S104 - HTTP mode serves Slack, usually behind a proxy
        ping_interval: float = 10.0,
        identity_ttl: float = DEFAULT_TTL,
    ) -> None:
        bot_token = _secret(settings.slack_bot_token)
        self._app_token = _secret(settings.slack_app_token)
        signing_secret = _secret(settings.slack_signing_secret)
        self.mode = slack_mode(settings, http_port)
        self.services = service
        service.quiz.connect(self)  # rules that read the chat (a round's role teams)
        self._groups_read: dict[str, tuple[float, frozenset[str]]] = {}  # role teams
        self.api_url = settings.slack_api_url
        self.web_url = settings.web_public_url  # the admin web page, linked on admins' Home
        self.http_port = http_port
        self.http_host = http_host
        self.http_url: str | None = None
        self.ping_interval = ping_interval
        self.team_name: str | None = None
        self.bot_user_id: str | None = None

        # SLACK_API_URL includes the /api/ path; the client joins method names onto it.
        self.client = AsyncWebClient(token=bot_token, base_url=self.api_url)
        self.client.retry_handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=2))
        # client= only (bolt takes the token from it), an explicit secret (else bolt reads the
        # environment) and a name (else bolt inspects the stack for one).
        self.app = AsyncApp(client=self.client, signing_secret=signing_secret, name="studybot")
        # The admin user group makes its members admins of the bot: never a reward.
        self._admin_usergroup = settings.slack_admin_usergroup
        self.directory = SlackDirectory(
            self.client,
            admin_users=settings.slack_admin_users,
            admin_usergroup=settings.slack_admin_usergroup,
            ttl=identity_ttl,
        )
        self._register(self.app)

        self._stopping = asyncio.Event()
        self._inflight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._socket: AsyncSocketModeHandler | None = None
        self._runner: web.AppRunner | None = None
        self.ready = asyncio.Event()

    # --- lifecycle ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Check the tokens, connect (Socket Mode) or listen (HTTP), and serve until stopped."""
        await self.start()
        try:
            await self._stopping.wait()
        finally:
            await self.close()

    async def stop(self) -> None:
        self._stopping.set()

    def is_connected(self) -> bool:
        """Ready, not stopping, and in Socket Mode with its websocket open (it reconnects by
        itself; a health check failing for a while is the signal that it cannot)."""
        if not self.ready.is_set() or self._stopping.is_set():
            return False
        if self._socket is None:
            return True  # HTTP mode: Slack calls us; there is no link to lose
        session = getattr(self._socket.client, "current_session", None)
        return session is not None and not session.closed

    async def start(self) -> None:
        """Fail fast on bad settings, then start taking requests; ``ready`` is set after."""
        await self._check_bot_token()
        if self.mode is SlackMode.SOCKET:
            await self._check_app_token()
            await self._connect_socket()
        else:
            await self._listen_http()
        self.ready.set()

    async def idle(self, timeout: float = DRAIN_TIMEOUT) -> bool:  # noqa: ASYNC109
        """Wait until no listener is running (work after ``ack()`` included); False on timeout."""
        try:
            async with asyncio.timeout(timeout):
                await self._idle.wait()
        except TimeoutError:
            return False
        return True

    async def close(self) -> None:
        """Let running listeners finish (briefly), then disconnect or stop listening."""
        if not await self.idle():
            log.warning("stopping with %d Slack request(s) still being handled", self._inflight)
        if self._socket is not None:
            socket, self._socket = self._socket, None
            await socket.close_async()  # type: ignore[no-untyped-call]
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()
        self.ready.clear()
        log.info("slack adapter stopped")

    async def _check_bot_token(self) -> None:
        try:
            auth = await self.client.auth_test()
        except SlackApiError as exc:
            raise StartupError(
                f"SLACK_BOT_TOKEN was refused by Slack (auth.test: {_api_error(exc)})"
            ) from None
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise StartupError(
                f"cannot reach the Slack API at {self.api_url} (SLACK_API_URL): {exc}"
            ) from None
        self.team_name = _str(auth.get("team")) or None
        self.bot_user_id = _str(auth.get("user_id")) or None
        log.info(
            "slack: signed in as %s (%s) in %s (%s); %s mode",
            auth.get("user"),
            self.bot_user_id,
            self.team_name,
            auth.get("team_id"),
            self.mode.value,
        )

    async def _check_app_token(self) -> None:
        # A bad app token would make the Socket Mode client retry forever without raising.
        try:
            await self.client.apps_connections_open(app_token=self._app_token)
        except SlackApiError as exc:
            raise StartupError(
                f"SLACK_APP_TOKEN was refused by Slack (apps.connections.open: {_api_error(exc)});"
                " it must be an app-level token (xapp-...) with the connections:write scope"
            ) from None
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise StartupError(
                f"cannot reach the Slack API at {self.api_url} (SLACK_API_URL): {exc}"
            ) from None

    async def _connect_socket(self) -> None:
        # Built here, inside the running loop: its client makes a session and a task at once.
        self._socket = AsyncSocketModeHandler(
            self.app, app_token=self._app_token, ping_interval=self.ping_interval
        )
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT):
                await self._socket.connect_async()  # type: ignore[no-untyped-call]
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            await self.close()
            reason = str(exc) or "timed out"
            raise StartupError(f"cannot open the Socket Mode connection: {reason}") from None

    async def _listen_http(self) -> None:
        assert self.http_port is not None
        runner = web.AppRunner(events_app(self.app, EVENTS_PATH), access_log=None)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.http_host, self.http_port)
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            raise StartupError(
                f"cannot listen on {self.http_host}:{self.http_port}: {exc.strerror or exc}"
            ) from None
        self._runner = runner
        port = runner.addresses[0][1]
        self.http_url = f"http://{self.http_host}:{port}{EVENTS_PATH}"
        log.info("slack: serving events on port %d at %s", port, EVENTS_PATH)

    # --- ChatGateway -------------------------------------------------------------------------

    async def send_post(self, channel: str, message: Message) -> str:
        """``chat.postMessage`` (attachments follow as file uploads in the post's thread, and
        so does the rest of a message too long for one)."""
        message = fit_attachments(message, SLACK)
        rendered, whole = _for_thread(message)
        try:
            response = await self.client.chat_postMessage(
                channel=channel, **rendered.kwargs(), unfurl_links=False, unfurl_media=False
            )
        except SlackApiError as exc:
            if _api_error(exc) in _CANNOT_POST:
                raise Unavailable(
                    "I can't post in this channel. Invite me with `/invite @studybot` and try "
                    "again."
                ) from exc
            raise
        ts = str(response["ts"])
        posted_in = _str(response.get("channel")) or channel
        await self._continue_in_thread(posted_in, ts, rendered, whole)
        for attachment in message.attachments:
            await self._upload(posted_in, attachment, thread_ts=ts)
        return ts

    async def edit_post(self, channel: str, message_id: str, message: Message) -> None:
        """``chat.update``; a message that was deleted meanwhile is posted again."""
        message = fit_attachments(message, SLACK)
        rendered, whole = _for_thread(replace(message, attachments=()))
        try:
            await self.client.chat_update(channel=channel, ts=message_id, **rendered.kwargs())
        except SlackApiError as exc:
            if _api_error(exc) != "message_not_found":
                raise
            log.info("message %s in %s is gone; posting it again", message_id, channel)
            await self.send_post(channel, message)
            return
        await self._continue_in_thread(channel, message_id, rendered, whole)
        # chat.update cannot carry files: a reveal's picture goes in the question's thread.
        for attachment in message.attachments:
            await self._upload(channel, attachment, thread_ts=message_id)

    async def _continue_in_thread(
        self, channel: str, ts: str, rendered: SlackMessage, whole: Attachment | None
    ) -> None:
        """The rest of a message too long for one, in its thread: as replies, or as a file."""
        for part in rendered.rest:
            await self.client.chat_postMessage(
                channel=channel,
                thread_ts=ts,
                **part.kwargs(),
                unfurl_links=False,
                unfurl_media=False,
            )
        if whole is not None:
            await self._upload(channel, whole, thread_ts=ts)

    async def _dm_channel(self, member: str) -> str:
        """The id of the member's DM with the app (``conversations.open``; needs ``im:write``)."""
        opened = await self.client.conversations_open(users=member)
        return _str((opened.get("channel") or {}).get("id")) or member

    async def send_dm(self, workspace: str, member: str, message: Message) -> bool:
        """A review reminder in the member's DM with the app; ``False`` if Slack refuses."""
        try:
            channel = await self._dm_channel(member)
            rendered, whole = _for_thread(message)
            response = await self.client.chat_postMessage(channel=channel, **rendered.kwargs())
            await self._continue_in_thread(channel, str(response["ts"]), rendered, whole)
        except SlackApiError as exc:
            log.info("cannot DM %s a review reminder: %s", member, _api_error(exc))
            return False
        return True

    # RoleManager: role rewards give and take Slack user groups (usergroups:write).
    async def _usergroups(self) -> dict[str, tuple[str, bool]]:
        """Every user group of the workspace: id -> (handle, enabled)."""
        listed = await self.client.usergroups_list(include_disabled=True)
        groups: dict[str, tuple[str, bool]] = {}
        for group in listed.get("usergroups") or []:
            if isinstance(group, dict) and group.get("id"):
                enabled = not group.get("date_delete")
                groups[str(group["id"])] = (str(group.get("handle") or group["id"]), enabled)
        return groups

    async def find_usergroup(self, typed: str) -> tuple[str, str]:
        """The user group ``/study rewards add`` names: a mention (``<!subteam^S1>``) or its
        handle (``@regulars``); its id and ``@handle``. Unknown: :class:`BadInput`."""
        wanted = typed.strip()
        groups = await self._usergroups()
        if wanted.startswith("<!subteam^") and wanted.endswith(">"):
            # ``<!subteam^S1>``, or ``<!subteam^S1|@handle>`` where Slack escapes mentions
            group_id = wanted.removeprefix("<!subteam^").removesuffix(">").split("|")[0]
            if group_id in groups:
                return group_id, f"@{groups[group_id][0]}"
        else:
            handle = wanted.removeprefix("@").casefold()
            for group_id, (name, _) in groups.items():
                if name.casefold() == handle:
                    return group_id, f"@{name}"
        raise BadInput(
            f"There is no user group `{wanted[:40]}` in this workspace: mention it "
            "(`@its-handle`) as Slack suggests while you type."
        )

    # RoleReader: teams made from user groups (``round start --teams @red,@blue``).
    async def find_role(self, workspace: str, typed: str) -> tuple[str, str] | None:
        try:
            return await self.find_usergroup(typed)
        except BadInput:
            return None

    async def roles_held(self, workspace: str, member: str, roles: Sequence[str]) -> frozenset[str]:
        """Which of the user groups ``member`` is in. Each group's members are read once a
        :data:`_GROUP_TTL` (a round's first answers come all at once, and
        ``usergroups.users.list`` is rate-limited); a refusal is said, not taken as "none"."""
        held = set()
        for role in roles:
            if member in await self._group_users(role):
                held.add(role)
        return frozenset(held)

    async def _group_users(self, role: str) -> frozenset[str]:
        now = time.monotonic()
        cached = self._groups_read.get(role)
        if cached is not None and now - cached[0] < _GROUP_TTL:
            return cached[1]
        try:
            listed = await self.client.usergroups_users_list(usergroup=role)
        except SlackApiError as exc:
            log.warning("cannot list user group %s: %s", role, _api_error(exc))
            raise Unavailable(
                "I could not read the user groups just now, so your team is not known yet: "
                "answer again in a moment."
            ) from exc
        users = frozenset(str(u) for u in listed.get("users") or [])
        if len(self._groups_read) > 256:
            self._groups_read.clear()
        self._groups_read[role] = (now, users)
        return users

    async def can_manage_role(self, workspace: str, role: str) -> str | None:
        try:
            groups = await self._usergroups()
        except SlackApiError as exc:
            return f"Slack refused to list user groups ({_api_error(exc)})"
        if role not in groups:
            return "there is no such user group in this workspace"
        if not groups[role][1]:
            return "that user group is disabled"
        return None

    async def role_powers(self, workspace: str, role: str) -> frozenset[Power]:
        """Slack gives a user group no workspace permissions; what it can carry is the bot's
        own admin rights, when it is ``SLACK_ADMIN_USERGROUP`` (workspace admins and
        ``SLACK_ADMIN_USERS`` are people, never groups)."""
        return frozenset({Power.BOT_ADMIN}) if role == self._admin_usergroup else frozenset()

    async def _set_usergroup(self, role: str, member: str, *, member_in: bool) -> str | None:
        try:
            listed = await self.client.usergroups_users_list(usergroup=role)
            users = [str(u) for u in listed.get("users") or []]
            if (member in users) == member_in:
                return None
            users = [*users, member] if member_in else [u for u in users if u != member]
            if not users:
                return "Slack keeps at least one member in a user group"
            await self.client.usergroups_users_update(usergroup=role, users=",".join(users))
        except SlackApiError as exc:
            return f"Slack refused ({_api_error(exc)})"
        return None

    async def grant_role(self, workspace: str, member: str, role: str) -> str | None:
        reason = await self.can_manage_role(workspace, role)
        return reason or await self._set_usergroup(role, member, member_in=True)

    async def revoke_role(self, workspace: str, member: str, role: str) -> str | None:
        reason = await self.can_manage_role(workspace, role)
        return reason or await self._set_usergroup(role, member, member_in=False)

    async def _upload(self, channel: str, attachment: Attachment, *, thread_ts: str | None) -> None:
        await self.client.files_upload_v2(
            channel=channel,
            content=attachment.content,
            filename=attachment.filename,
            title=attachment.description or attachment.filename,
            thread_ts=thread_ts,
        )

    # --- replies -----------------------------------------------------------------------------

    async def _reply_private(self, body: dict[str, Any], respond: Any, message: Message) -> None:
        """Only the member sees it: the response_url, else chat.postEphemeral, else a DM.

        A reply too long for one Slack message continues in up to :data:`MAX_FOLLOW_UPS`
        further private replies; longer still, its whole text goes to the member's direct
        messages with studybot as a file (a private reply cannot carry one), and it says so.
        """
        inlined = inline_attachments(message)
        rendered = render(inlined, rest_where=IN_NEXT_MESSAGES)
        if len(rendered.rest) > MAX_FOLLOW_UPS:
            where = await self._whole_to_dm(_where(body).user, inlined)
            rendered = render(inlined, rest_where=where, keep_rest=False)
        await self._send_private(body, respond, rendered)
        for part in rendered.rest:
            await self._send_private(body, respond, part)

    async def _whole_to_dm(self, member: str, message: Message) -> str:
        """Upload ``message``'s whole text to the member's DM; where it is, for the reply."""
        try:
            channel = await self._dm_channel(member)
            await self._upload(channel, _whole_text(message), thread_ts=None)
        except SlackApiError as exc:
            log.info("cannot send %s the whole reply as a file: %s", member, _api_error(exc))
            return (
                "not shown (I could not send them as a file: direct messages with studybot are off)"
            )
        return f"in the file `{WHOLE_TEXT_FILE}` in your direct messages with studybot"

    async def _send_private(
        self, body: dict[str, Any], respond: Any, rendered: SlackMessage
    ) -> None:
        where = _where(body)
        if respond is not None and where.response_url:
            sent = await respond(
                **rendered.kwargs(), response_type="ephemeral", replace_original=False
            )
            _check_sent(sent, where)
            return
        if where.channel:
            try:
                await self.client.chat_postEphemeral(
                    channel=where.channel, user=where.user, **rendered.kwargs()
                )
                return
            except SlackApiError as exc:
                log.info("cannot reply privately in %s (%s); sending a DM", where.channel, exc)
        await self.client.chat_postMessage(channel=where.user, **rendered.kwargs())

    async def _reply_public(self, body: dict[str, Any], respond: Any, message: Message) -> None:
        """In the channel, through the response_url (works where the bot is not a member).

        Too long for one message: up to :data:`MAX_FOLLOW_UPS` more replies follow; longer
        still, it is posted as the bot, and its rest goes in the post's thread.
        """
        inlined = inline_attachments(message)
        rendered = render(inlined, rest_where=IN_NEXT_MESSAGES)
        channel = _where(body).channel
        if len(rendered.rest) > MAX_FOLLOW_UPS:
            if channel and not message.attachments:
                try:
                    await self.send_post(channel, message)
                except Unavailable:
                    log.info("cannot post in %s; the long reply is shortened", channel)
                else:
                    return
            rendered = render(
                inlined,
                rest_where="not shown (invite me with `/invite @studybot` to post it all)",
                keep_rest=False,
            )
        for part in (rendered, *rendered.rest):
            sent = await respond(
                **part.kwargs(), response_type="in_channel", replace_original=False
            )
            _check_sent(sent, _where(body))

    async def _post_result(self, body: dict[str, Any], respond: Any, message: Message) -> None:
        """A snippet's output: in the channel if public (file uploads included), else privately."""
        message = fit_attachments(message, SLACK)
        where = _where(body)
        if not message.ephemeral and where.channel:
            try:
                ts = await self.send_post(where.channel, replace(message, attachments=()))
            except Unavailable:
                log.info("cannot post in %s; showing the snippet output privately", where.channel)
            else:
                await self._attach_output(where.channel, where.user, ts, message.attachments)
                return
        await self._reply_private(body, respond, message)

    async def _reply_stats(self, body: dict[str, Any], respond: Any, stats: Message) -> None:
        """The stats privately; the picture (a private reply cannot carry one) to the DM."""
        await self._reply_with_files(
            body,
            respond,
            stats,
            sent="📎 The picture of these stats is in your direct messages with studybot.",
            failed="(I could not send you the picture: direct messages with studybot are off.)",
        )

    async def _reply_with_files(
        self, body: dict[str, Any], respond: Any, message: Message, *, sent: str, failed: str
    ) -> None:
        """``message`` privately; its files (a private reply cannot carry one) uploaded to the
        member's DM with the app, and the reply says where they went (``sent``) or that they
        could not be sent (``failed``)."""
        if not message.attachments:
            await self._reply_private(body, respond, message)
            return
        member = _where(body).user
        try:
            channel = await self._dm_channel(member)
            for attachment in message.attachments:
                await self._upload(channel, attachment, thread_ts=None)
            note = sent
        except SlackApiError as exc:
            log.info("cannot send %s a file: %s", member, _api_error(exc))
            note = failed
        text_only = replace(
            message, attachments=(), sections=(*message.sections, Section(body=note))
        )
        await self._reply_private(body, respond, text_only)

    async def _attach_output(
        self, channel: str, member: str, thread_ts: str, attachments: tuple[Attachment, ...]
    ) -> None:
        """Upload the full output into the post's thread, or to the member's DM if refused.

        ``chat:write.public`` lets the bot post in a public channel it has not joined, but
        Slack refuses file uploads there (``not_in_channel``): the member who ran the snippet
        still gets the whole output, in their direct messages with studybot.
        """
        for attachment in attachments:
            try:
                await self._upload(channel, attachment, thread_ts=thread_ts)
            except SlackApiError as exc:
                if _api_error(exc) not in _CANNOT_POST:
                    raise
                log.info(
                    "cannot attach %s in %s (%s); sending it to the member's DM",
                    attachment.filename,
                    channel,
                    _api_error(exc),
                )
                note = (
                    "I can only attach files in channels I am a member of, so here it is. "
                    "Invite me there with `/invite @studybot` to get files in the channel."
                )
                try:
                    await self.send_post(
                        member,
                        Message(
                            title=f"The full output of your snippet: `{attachment.filename}`",
                            sections=(Section(body=note),),
                            attachments=(attachment,),
                        ),
                    )
                except (SlackApiError, StudyError) as dm_exc:
                    # the cut output is already in the channel: that is the answer, not an error
                    log.warning(
                        "cannot send %s to %s either: %s", attachment.filename, member, dm_exc
                    )

    # --- identity ----------------------------------------------------------------------------

    async def _context(self, where: _Where) -> ChatContext:
        member = await self.directory.member(where.user, where.user_name)
        return ChatContext(
            platform=PLATFORM,
            workspace=where.team,
            channel=where.channel or where.user,
            member=where.user,
            member_name=member.name,
            is_admin=member.is_admin,
            channel_name=where.channel_name,
            workspace_name=self.team_name or where.team_domain,
            command_prefix=HELP_PREFIX,
        )

    # --- listeners ---------------------------------------------------------------------------

    def _register(self, app: AsyncApp) -> None:
        app.command(SLASH_COMMAND)(self._guarded(self._on_study))
        app.action(ACTION_PATTERN)(self._guarded(self._on_action))
        app.view(RUN_MODAL_CALLBACK)(self._guarded(self._on_run_submit))
        app.view(SOLVE_MODAL_CALLBACK)(self._guarded(self._on_solve_submit))
        app.view(ANSWER_MODAL_CALLBACK)(self._guarded(self._on_answer_submit))
        app.view(WRITE_MODAL_CALLBACK)(self._guarded(self._on_write_submit))
        app.shortcut(RUN_SHORTCUT_CALLBACK)(self._guarded(self._on_run_shortcut))
        app.shortcut(PACK_SHORTCUT_CALLBACK)(self._guarded(self._on_pack_shortcut))
        app.event("app_home_opened")(self._guarded(self._on_home_opened))
        app.error(self._on_error)

    def _guarded(self, listener: Listener) -> Listener:
        """Ack if the listener failed before acking, and send its error to :meth:`_on_error`.

        It also counts running listeners, so :meth:`close` (and tests) can wait for the work
        that goes on after ``ack()``.

        bolt injects arguments by the names in the wrapped listener's signature (it unwraps
        ``functools.wraps``), so every listener names ``ack``, ``body`` and ``respond``.
        """

        @functools.wraps(listener)
        async def guarded(**kwargs: Any) -> None:
            self._inflight += 1
            self._idle.clear()
            try:
                await listener(**kwargs)
            except Exception as error:
                ack = kwargs["ack"]
                if ack.response is None:
                    await ack()
                await self._on_error(error, kwargs["body"], kwargs.get("respond"))
            finally:
                self._inflight -= 1
                if self._inflight == 0:
                    self._idle.set()

        return guarded

    async def _on_error(self, error: Exception, body: dict[str, Any] | None, respond: Any) -> None:
        """The one error handler: members get words, operators get a logged traceback."""
        where = _where(body or {})
        if isinstance(error, StudyError):
            text = str(error)
            log.debug("study error for %s in %s: %s", where.user, where.kind, text)
        else:
            text = APOLOGY
            log.exception(
                "slack request failed: %s (team %s, user %s, channel %s)",
                where.kind,
                where.team,
                where.user,
                where.channel,
                exc_info=error,
            )
        if not where.replyable:
            return
        reply = Message(sections=(Section(body=text),), ephemeral=True, tone=Tone.WARNING)
        try:
            await self._reply_private(body or {}, respond, reply)
        except Exception:
            log.exception("could not tell %s about the error in %s", where.user, where.kind)

    async def _on_study(self, ack: Any, body: dict[str, Any], respond: Any) -> None:
        """``/study <subcommand>``: usage problems in the ack, everything else after it."""
        try:
            command = parse_study(_str(body.get("text")))
        except UsageError as problem:
            await ack(**self._usage(str(problem), _where(body)))
            return
        await ack()
        if command.name in ("run", "graph"):
            # The trigger id is valid for 3 s: open the modal before any lookup, unless /run
            # cannot work here at all (then say so now, not after the code is typed).
            self.services.runs.check()
            graph: tuple[str, ...] | None = None
            if command.name == "graph":
                of, code = command.args
                graph = tuple(n for n in of.split(",") if n)
                self.services.runs.check_graph(graph)  # before the modal: its metadata is small
            else:
                code = command.args[0] if command.args else ""
            view = run_modal(_str(body.get("channel_id")), code, graph)
            await self.client.views_open(trigger_id=_str(body.get("trigger_id")), view=view)
            return
        if command.name == "solve":  # the editor, while the trigger id is valid (3 s)
            request = command.request
            assert isinstance(request, SolveRequest)
            post_id = request.post
            if request.exercise is not None:  # post that exercise here, then its editor
                ctx = await self._context(_where(body))
                draft = await self.services.quiz.post_question(
                    ctx, question=request.exercise, kinds=("exercise",)
                )
                post_id = draft.post.id
                await self._open_solver(body, post_id)
                await self.services.posting.publish(draft, self)
                return
            await self._open_solver(body, post_id)
            return
        if command.name == "write":  # the trigger id is valid for 3 s: the modal first
            difficulty, tags = command.args
            view = write_modal(
                _str(body.get("channel_id")),
                difficulty,
                tuple(t.strip() for t in tags.split(",") if t.strip()),
            )
            await self.client.views_open(trigger_id=_str(body.get("trigger_id")), view=view)
            return
        ctx = await self._context(_where(body))
        await self._subcommand(ctx, command, body, respond)

    def _usage(self, problem: str, where: _Where) -> dict[str, Any]:
        ctx = ChatContext(PLATFORM, where.team, where.channel or "", where.user, where.user_name)
        help_message = replies.help_message(help_rows("slack"), admin=ctx.is_admin)
        message = replace(help_message, sections=(Section(body=problem), *help_message.sections))
        # The ack is one message: anything past the budget is named, and /study help has it.
        rendered = render(
            message, rest_where="not shown: `/study help` lists them", keep_rest=False
        )
        return {**rendered.kwargs(), "response_type": "ephemeral"}

    async def _subcommand(
        self, ctx: ChatContext, command: StudyCommand, body: dict[str, Any], respond: Any
    ) -> None:
        args = command.args
        if command.values is not None:  # the one front door's commands
            await self._dispatched(ctx, command, body, respond)
            return
        private = await self._private_reply(ctx, command)
        if private is not None:
            await self._reply_private(body, respond, private)
        elif command.name == "stats" and command.path == ("stats", "group"):
            picture = await self.services.mastery.picture(ctx)
            await self._reply_stats(body, respond, picture.message)
        elif command.name == "stats":
            stats = await self.services.standings.stats(ctx, args[0] if args else None)
            await self._reply_stats(body, respond, stats)
        elif command.name == "review":  # `review export`: the deck is a file, sent to the DM
            deck = await self.services.review.export(ctx)
            await self._reply_with_files(
                body,
                respond,
                deck,
                sent="📎 The deck is in your direct messages with studybot.",
                failed="(I could not send you the deck: direct messages with studybot are off.)",
            )
        elif command.name == "schedule":
            await self._schedule(ctx, args[0], list(args[1:]), body, respond)
        else:
            await self._reply_private(
                body, respond, replies.help_message(help_rows("slack"), admin=ctx.is_admin)
            )

    async def _dispatched(
        self, ctx: ChatContext, command: StudyCommand, body: dict[str, Any], respond: Any
    ) -> None:
        """An ordinary command, answered by the one dispatch; Slack only delivers: privately
        or in the channel as the message says (with its files, posted as the bot), then a
        question drafted, through this gateway."""
        assert command.values is not None
        outcome = await dispatch(
            self.services, ctx, command.path, command.values, self, command.typed
        )
        message = outcome.message
        if message is not None and message.ephemeral:
            await self._reply_private(body, respond, message)
        elif message is not None and message.attachments:
            await self._post_result(body, respond, message)
        elif message is not None:
            await self._reply_public(body, respond, message)
        if outcome.draft is not None:
            await self.services.posting.publish(outcome.draft, self)

    async def _private_reply(self, ctx: ChatContext, command: StudyCommand) -> Message | None:
        """The subcommands answered only to the member; ``None`` for the others."""
        args, request = command.args, command.request
        if isinstance(request, RewardAdd) and ctx.is_admin:  # the group typed: id and handle
            role, name = await self.find_usergroup(request.role)
            request = replace(request, role=role, role_name=name)
        if isinstance(request, RewardsRequest):
            return await self.services.rewards.command(ctx, request, self)
        if isinstance(request, RemindRequest):
            return await self.services.reminders.command(ctx, request)
        if command.name == "review" and not args:
            return (await self.services.review.next(ctx)).as_message()
        if command.name == "pack":
            return await self._pack(ctx, args)
        return None

    async def _pack(self, ctx: ChatContext, args: tuple[str, ...]) -> Message:
        """``/study pack list|enable NAME|disable NAME|upload``; the core decides who may."""
        verb = args[0]
        if verb == "enable":
            return await self.services.packs.enable(ctx, args[1])
        if verb == "disable":
            return await self.services.packs.disable(ctx, args[1])
        if verb == "upload":  # a slash command cannot carry a file: say how it is done
            return Message(sections=(Section(body=PACK_HOWTO),), ephemeral=True)
        return await self.services.packs.listing(ctx)

    async def _schedule(
        self, ctx: ChatContext, verb: str, args: list[str], body: dict[str, Any], respond: Any
    ) -> None:
        """``/study schedule VERB ...``: the core checks the verb, the words and who may."""
        reply = await run_schedule_command(self.services.schedules, ctx, verb, args)
        await self._reply_private(body, respond, reply.message)
        if reply.draft is not None:  # `now`: a question to post in the schedule's channel
            await self.services.posting.publish(reply.draft, self)

    async def _on_action(
        self, ack: Any, body: dict[str, Any], action: dict[str, Any], respond: Any
    ) -> None:
        """A click on one of our buttons: answer, show a card's back, or a hint; all private.

        The click is handled before the ack (up to :data:`ACK_BUDGET`): an answer that Slack
        saw acknowledged is already stored, whatever happens to this process afterwards.
        """
        parsed = parse_action(_str(action.get("action_id")))
        if parsed is None:
            await ack()
            return
        if parsed[0] is Action.SOLVE:  # the editor: a modal, while the trigger id is valid
            await ack()
            await self._open_solver(body, parsed[1])
            return
        card = parse_review_value(parsed[2]) if parsed[0] is Action.REVIEW else None
        typed_card = card is not None and card[0] == TYPE_IT
        if parsed[0] is Action.TYPE or typed_card:  # a text box, while the trigger is valid
            await ack()
            ctx = await self._context(_where(body))
            channel = ctx.channel or _str((body.get("channel") or {}).get("id"))
            review = (card[1], card[2]) if card is not None and typed_card else None
            view = answer_modal(channel, parsed[1], review)
            await self.client.views_open(trigger_id=_str(body.get("trigger_id")), view=view)
            return
        if parsed[0] is Action.TRY:  # the code in an editable /run modal
            await ack()
            ctx = await self._context(_where(body))
            form = await self.services.quiz.try_it(ctx, parsed[1], parsed[2])
            channel = ctx.channel or _str((body.get("channel") or {}).get("id"))
            view = run_modal(channel, form.code)
            await self.client.views_open(trigger_id=_str(body.get("trigger_id")), view=view)
            return
        work = asyncio.create_task(self._click(body, *parsed))
        try:
            await asyncio.wait({work}, timeout=ACK_BUDGET)
            await ack()
            reply = await work
        finally:
            work.cancel()  # only if this listener itself was cancelled
        await self._reply_private(body, respond, reply)

    async def _click(
        self, body: dict[str, Any], action: Action, post_id: int, value: str
    ) -> Message:
        return await self.services.quiz.click(
            await self._context(_where(body)), action, post_id, value
        )

    async def _on_run_submit(
        self, ack: Any, body: dict[str, Any], view: dict[str, Any], respond: Any
    ) -> None:
        """The ``/study run`` modal was submitted: close it, run the code, post the output."""
        code = _input_value(view, "code", "code")
        if not code.strip():
            await ack(response_action="errors", errors={"code": "Write some code to run."})
            return
        await ack()
        ctx = await self._context(_where(body))
        graph = _modal_graph(view)
        if graph is None:
            reply = await self.services.runs.run(ctx, code)
        else:
            reply = await self.services.runs.graph(ctx, code, graph)
        await self._post_result(body, respond, reply)

    async def _open_solver(self, body: dict[str, Any], post_id: int | None) -> None:
        ctx = await self._context(_where(body))
        form = await self.services.exercises.open_editor(ctx, post_id)
        channel = ctx.channel or _str((body.get("channel") or {}).get("id"))
        view = solve_modal(channel, form.post_id, form.title, form.starter, form.entry)
        await self.client.views_open(trigger_id=_str(body.get("trigger_id")), view=view)

    async def _on_solve_submit(
        self, ack: Any, body: dict[str, Any], view: dict[str, Any], respond: Any
    ) -> None:
        """An exercise's editor was submitted: close it, judge the code, reply privately."""
        code = _input_value(view, "code", "code")
        if not code.strip():
            await ack(response_action="errors", errors={"code": "Write your solution."})
            return
        await ack()
        post = _metadata(view).get("post")
        ctx = await self._context(_where(body))
        reply = await self.services.exercises.submit(
            ctx, post if isinstance(post, int) else None, code
        )
        await self._reply_private(body, respond, reply)

    async def _on_answer_submit(
        self, ack: Any, body: dict[str, Any], view: dict[str, Any], respond: Any
    ) -> None:
        """A typed answer from the Answer modal, graded before the modal closes: "almost", a
        number that cannot be read or any refusal stays in the modal, on the answer field."""
        post = _metadata(view).get("post")
        if not isinstance(post, int):
            await ack()
            return
        ctx, typed = await self._context(_where(body)), _input_value(view, "answer", "answer")
        review = _metadata(view).get("review")  # a /review card's: [reviewed, card reviews]
        try:
            if isinstance(review, list) and [type(n) for n in review] == [int, int]:
                turn = await self.services.review.answer_typed(
                    ctx, post, typed, reviewed=review[0], card_reviews=review[1]
                )
                reply = turn.as_message()
            else:
                reply = await self.services.quiz.answer(ctx, post, typed)
        except StudyError as refused:
            await ack(response_action="errors", errors={"answer": clip(str(refused), 150)})
            return
        await ack()
        await self._reply_private(body, respond, reply)

    async def _on_write_submit(
        self, ack: Any, body: dict[str, Any], view: dict[str, Any], respond: Any
    ) -> None:
        """The ``/study write`` modal: check the question (and add it for an admin)."""
        fields = {name: _input_value(view, name, name) for name in WRITE_FIELD_NAMES}
        if not fields["prompt"].strip():
            await ack(response_action="errors", errors={"prompt": "Write the question."})
            return
        await ack()
        meta = _metadata(view)
        tags = tuple(str(t) for t in meta.get("tags") or ())
        question = written_from_fields(
            fields, difficulty=str(meta.get("difficulty") or "medium"), tags=tags
        )
        ctx = await self._context(_where(body))
        await self._reply_private(
            body, respond, await self.services.suggestions.write(ctx, question)
        )

    async def _on_run_shortcut(
        self, ack: Any, body: dict[str, Any], shortcut: dict[str, Any], respond: Any
    ) -> None:
        """The "Run code block" message shortcut: run the message's first fenced code block."""
        await ack()
        code = first_code_block(shortcut.get("message") or {})
        if code is None:
            raise BadInput("That message has no ``` code block to run.")
        ctx = await self._context(_where(body))
        await self._post_result(body, respond, await self.services.runs.run(ctx, code))

    async def _on_pack_shortcut(
        self, ack: Any, body: dict[str, Any], shortcut: dict[str, Any], respond: Any
    ) -> None:
        """The "Check question pack" message shortcut: lint (and maybe install) its .yaml files.

        Acked at once; each file is described by ``files.info``, refused by name and size
        before a byte is fetched, downloaded with the bot token, and handed to the core.
        """
        await ack()
        files = attached_files(shortcut.get("message") or {})
        if not files:
            raise BadInput(NO_PACK_FILE)
        packs = [f for f in files if f.name.lower().endswith(PACK_SUFFIXES)] or files[:1]
        ctx = await self._context(_where(body))
        for listed in packs[:MAX_PACK_FILES]:
            info = await file_info(self.client, listed.id)
            self.services.packs.check_file(info.name, info.size)
            raw = await download(
                info,
                token=str(self.client.token),
                api_url=self.api_url,
                limit=self.services.packs.max_bytes,
            )
            report = await self.services.packs.check_upload(ctx, info.name, raw)
            await self._reply_pack_report(body, respond, report)

    async def _reply_pack_report(self, body: dict[str, Any], respond: Any, report: Message) -> None:
        """The report privately; a full problem list (a file) goes to the member's DM.

        Ephemeral messages cannot carry files, so the file is posted in the member's direct
        messages with studybot, and the reply says so; if that fails it is inlined (cut).
        """
        if report.attachments:
            where = _where(body)
            names = ", ".join(f"`{a.filename}`" for a in report.attachments)
            try:
                await self.send_post(
                    where.user,
                    Message(
                        title=f"Pack check: {report.title or 'report'}",
                        sections=(Section(body="Every problem found, as the linter prints them."),),
                        attachments=report.attachments,
                    ),
                )
            except (SlackApiError, StudyError) as exc:
                log.info("cannot send the pack report file to %s: %s", where.user, exc)
            else:
                note = Section(body=f"{names} is in your direct messages with studybot.")
                report = replace(report, sections=(*report.sections, note), attachments=())
        await self._reply_private(body, respond, report)

    async def _on_home_opened(
        self, ack: Any, body: dict[str, Any], event: dict[str, Any], respond: Any
    ) -> None:
        """The App Home tab (``views.publish``): the member's streak and freezes, rank, cards
        due with a Review button, today's open questions; for admins the schedules, open
        reports and suggestions too."""
        if event.get("tab", "home") != "home":
            return
        where = _where(body)
        ctx = await self._context(where)
        home = await self.services.home.message(ctx, self.web_url)
        await self.client.views_publish(user_id=where.user, view=home_view(home))


def _for_thread(message: Message) -> tuple[SlackMessage, Attachment | None]:
    """``message`` rendered for a post whose rest goes in its thread: as replies, or, past
    :data:`MAX_THREAD_PARTS` of them, as one file with the whole text."""
    rendered = render(message, rest_where=IN_THREAD)
    if len(rendered.rest) <= MAX_THREAD_PARTS:
        return rendered, None
    where = f"in the file `{WHOLE_TEXT_FILE}` in the thread under this message"
    return render(message, rest_where=where, keep_rest=False), _whole_text(message)


def _whole_text(message: Message) -> Attachment:
    """A message's whole text as a file: what a long message could not show."""
    return Attachment(
        filename=WHOLE_TEXT_FILE,
        content=message.plain_text().encode("utf-8"),
        description=f"The whole of: {message.title or 'a long message'}"[:200],
    )


def _check_sent(sent: Any, where: _Where) -> None:
    """A response_url that refuses a reply answers 4xx (bolt does not raise): log it, as the
    member saw nothing."""
    status = getattr(sent, "status_code", 200)
    if status != 200:
        log.warning(
            "slack refused a reply to %s through its response_url (%s): %s",
            where.user,
            status,
            str(getattr(sent, "body", ""))[:KIND_CHARS],
        )


def _metadata(view: dict[str, Any]) -> dict[str, Any]:
    """A modal's ``private_metadata`` (JSON we wrote); ``{}`` if it is not ours."""
    try:
        meta = json.loads(_str(view.get("private_metadata")) or "{}")
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}


def _modal_graph(view: dict[str, Any]) -> tuple[str, ...] | None:
    """The tensors a ``/study graph`` modal draws (None for a ``/study run`` modal)."""
    graph = _metadata(view).get("graph")
    if not isinstance(graph, list):
        return None
    return tuple(str(n) for n in graph)
