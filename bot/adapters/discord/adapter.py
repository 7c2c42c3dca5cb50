"""``studybot run --platform discord``: the adapter the runtime runs, and the core's gateway.

:class:`DiscordAdapter` is both a :class:`~bot.core.startup.PlatformAdapter` (``run`` / ``stop``)
and a :class:`~bot.core.gateway.ChatGateway` (``send_post`` / ``edit_post``, and ``find_post``
after a crash mid-send), which the scheduler uses for scheduled questions and reveals.
It also answers :meth:`~DiscordAdapter.serves`: run as one of several processes (a shard
range), it serves only the servers on its shards, and what acts on its own (the scheduler)
asks before publishing for a workspace.
Start-up problems an operator must fix (no token, a rejected token, Discord unreachable,
commands refused, a bad shard range) become a :class:`StartupError` with one readable line;
the token itself is never logged.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence

import aiohttp
import discord
from discord import app_commands
from pydantic import SecretStr

from bot.adapters.discord.client import StudyBot, study_bot
from bot.adapters.discord.components import CUSTOM_ID_PREFIX
from bot.adapters.discord.endpoints import point_discord_py
from bot.adapters.discord.render import mention_target, render
from bot.adapters.discord.roles import RoleFacts, role_powers, role_problem
from bot.adapters.discord.shards import ShardRange, ShardRangeError, shard_plan
from bot.core.errors import Unavailable
from bot.core.messages import Message, parse_action
from bot.core.rewards import Power
from bot.core.startup import StartupError
from bot.log import get_logger
from bot.services.bundle import Services
from bot.settings import Settings

__all__ = ["DiscordAdapter", "discord_shards", "discord_token"]

log = get_logger(__name__)

PORTAL = "https://discord.com/developers/applications"
LOGIN_WAIT_SECONDS = 120.0
FIND_POST_LIMIT = 50  # recent messages searched for a question whose send was not confirmed


def _post_ids(message: discord.Message) -> set[int]:
    """The post ids in a message's studybot buttons (answer, show and hint all carry it)."""
    found: set[int] = set()
    for row in message.components:
        for item in getattr(row, "children", ()):
            custom_id = getattr(item, "custom_id", None) or ""
            action = parse_action(custom_id.removeprefix(CUSTOM_ID_PREFIX))
            if custom_id.startswith(CUSTOM_ID_PREFIX) and action is not None:
                found.add(action[1])
    return found


def discord_token(settings: Settings) -> SecretStr:
    """The bot token, or :class:`StartupError` saying where to find it (checked first thing)."""
    if settings.discord_token is None:
        raise StartupError(
            "DISCORD_TOKEN is not set; copy the bot token from the Bot tab of your "
            f"application ({PORTAL}) into the environment or .env"
        )
    return settings.discord_token


def discord_shards(settings: Settings) -> ShardRange | None:
    """The shards this process runs (``None``: all guilds, unsharded), or :class:`StartupError`
    naming ``DISCORD_SHARDS`` / ``DISCORD_SHARD_COUNT`` (the CLI names its options itself)."""
    try:
        return shard_plan(settings.discord_shards, settings.discord_shard_count)
    except ShardRangeError as exc:
        raise StartupError(f"invalid settings: {exc}") from None


class DiscordAdapter:
    """Connects studybot to Discord with discord.py; see :mod:`bot.adapters.discord`."""

    def __init__(
        self, services: Services, settings: Settings, *, guild_ready_timeout: float = 2.0
    ) -> None:
        """Like every front door, it gets the services bundle and its settings: no database
        handle, no store, no scheduler."""
        self._token = discord_token(settings)  # a SecretStr until the moment of login
        self.settings = settings
        self.services = services
        services.quiz.connect(self)  # rules that read the chat (a round's role teams)
        self.shard_range = discord_shards(settings)
        self.bot: StudyBot = study_bot(
            services,
            settings,
            gateway=self,
            shard_range=self.shard_range,
            guild_ready_timeout=guild_ready_timeout,
        )

    # --- PlatformAdapter ---------------------------------------------------------------------

    async def run(self) -> None:
        """Log in, sync commands, and serve interactions until :meth:`stop`."""
        point_discord_py(self.settings.discord_api_base, self.settings.discord_gateway_url)
        try:
            async with self.bot:
                await self.bot.start(self._token.get_secret_value())
            if self.bot.startup_problem is not None:
                raise StartupError(self.bot.startup_problem)
        except discord.LoginFailure:
            raise StartupError(
                "Discord rejected DISCORD_TOKEN (401 Unauthorized); reset the token on the Bot "
                f"tab of your application ({PORTAL}) and update DISCORD_TOKEN"
            ) from None
        except app_commands.CommandSyncFailure as exc:
            raise StartupError(f"Discord refused the slash commands: {exc}") from None
        except discord.Forbidden as exc:
            where = self.settings.discord_dev_guild
            hint = (
                f" (is the bot in DISCORD_DEV_GUILD {where}, invited with the "
                "applications.commands scope? see `studybot invite-url`)"
                if where is not None
                else ""
            )
            raise StartupError(f"Discord refused a start-up request: {exc.text}{hint}") from None
        except (aiohttp.ClientConnectionError, TimeoutError) as exc:
            raise StartupError(
                f"cannot reach Discord at {self.settings.discord_api_base}: {exc}"
            ) from None

    async def stop(self) -> None:
        """Disconnect; :meth:`run` then returns."""
        await self.bot.close()

    def is_connected(self) -> bool:
        return self.bot.is_ready() and not self.bot.is_closed()

    def serves(self, workspace: str) -> bool:
        """Whether this process serves ``workspace`` (a guild id, as in ``ChatContext``).

        Always, unsharded. Sharded, only a guild on one of this process's shards: its events
        come here and nowhere else, so this is the process that must publish its schedules.
        A workspace that is not a guild id is on no shard, so no sharded process claims it.
        """
        if self.shard_range is None:
            return True
        if not (workspace.isascii() and workspace.isdigit()):
            return False
        return self.shard_range.owns(int(workspace))

    # --- ChatGateway -------------------------------------------------------------------------

    async def send_post(self, channel: str, message: Message) -> str:
        """Post publicly in ``channel`` (and open its discussion thread, if enabled)."""
        sent = await self._send(channel, message)
        await self.bot.open_thread(sent.channel.id, sent.id, message)
        return str(sent.id)

    async def edit_post(self, channel: str, message_id: str, message: Message) -> None:
        """Replace a posted question (its reveal); a deleted post is posted again instead."""
        await self._wait_logged_in()
        target = self.bot.get_partial_messageable(int(channel)).get_partial_message(int(message_id))
        try:
            await target.edit(**render(message).edit_kwargs())
        except discord.NotFound:
            log.info(
                "message %s in channel %s is gone; posting post %s's update anew",
                message_id,
                channel,
                message.post_id,
            )
            await self._send(channel, message)

    async def find_post(self, channel: str, post_id: int) -> str | None:
        """The message of ``post_id`` among the channel's latest messages from this bot.

        The scheduler asks after a crash between sending a question and recording its id:
        the post id is in every button's custom_id, so the question is recognised without
        any state (needs Read Message History, which the invite asks for).
        """
        await self._wait_logged_in()
        me = self.bot.user
        target = self.bot.get_partial_messageable(int(channel))
        async for sent in target.history(limit=FIND_POST_LIMIT):
            if me is not None and sent.author.id == me.id and post_id in _post_ids(sent):
                return str(sent.id)
        return None

    async def send_dm(self, workspace: str, member: str, message: Message) -> bool:
        """A review reminder, privately; ``False`` when the member does not take DMs."""
        await self._wait_logged_in()
        try:
            user = self.bot.get_user(int(member)) or await self.bot.fetch_user(int(member))
            await user.send(**render(message).send_kwargs())
        except discord.Forbidden:
            return False
        return True

    # --- RoleManager: role rewards ----------------------------------------------------------

    async def can_manage_role(self, workspace: str, role: str) -> str | None:
        """Why the bot may not give ``role`` in the server ``workspace``, or ``None``: Discord
        lets a bot with Manage Roles change only roles below its own highest role, and never
        @everyone or a role an integration manages."""
        await self._wait_logged_in()
        guild = self.bot.get_guild(int(workspace)) if workspace.isdigit() else None
        if guild is None:
            return "I am not in that server"
        if not role.isdigit():
            return "there is no such role in this server"
        roles = {
            r.id: RoleFacts(r.id, r.name, r.position, r.permissions.value, r.managed)
            for r in guild.roles
        }
        return role_problem(int(role), roles, [r.id for r in guild.me.roles], guild.id)

    async def role_powers(self, workspace: str, role: str) -> frozenset[Power]:
        """The powers ``role`` carries now, read from discord.py's cache (kept current by
        GUILD_ROLE_UPDATE): a role's permissions can change after it became a reward."""
        await self._wait_logged_in()
        guild = self.bot.get_guild(int(workspace)) if workspace.isdigit() else None
        found = guild.get_role(int(role)) if guild is not None and role.isdigit() else None
        if found is None:
            return frozenset()
        return role_powers(found.permissions.value, admin_role=found.id in self.bot.admin_roles)

    async def grant_role(self, workspace: str, member: str, role: str) -> str | None:
        return await self._change_role(workspace, member, role, give=True)

    async def revoke_role(self, workspace: str, member: str, role: str) -> str | None:
        return await self._change_role(workspace, member, role, give=False)

    async def _change_role(
        self, workspace: str, member: str, role: str, *, give: bool
    ) -> str | None:
        reason = await self.can_manage_role(workspace, role)
        if reason is not None:
            return reason  # never touch a role the bot may not manage
        change = self.bot.http.add_role if give else self.bot.http.remove_role
        try:
            await change(int(workspace), int(member), int(role), reason="studybot role reward")
        except discord.NotFound:
            return "the member is no longer in the server"
        except discord.Forbidden as exc:
            return f"Discord refused ({exc.text})"
        return None

    # --- RoleReader: teams made from roles ---------------------------------------------------

    async def find_role(self, workspace: str, typed: str) -> tuple[str, str] | None:
        """A role of the server named as a mention (``<@&id>``, what Discord sends for a role
        picked while typing) or by its name (``@red`` or ``red``); never @everyone."""
        await self._wait_logged_in()
        guild = self.bot.get_guild(int(workspace)) if workspace.isdigit() else None
        if guild is None:
            return None
        wanted = typed.strip()
        mention = re.fullmatch(r"<@&(\d{1,20})>", wanted)
        for role in guild.roles:
            if role.id == guild.id:
                continue  # @everyone: not a team
            if (mention and role.id == int(mention[1])) or (
                not mention and role.name.casefold() == wanted.removeprefix("@").casefold()
            ):
                return str(role.id), f"@{role.name}"
        return None

    async def roles_held(self, workspace: str, member: str, roles: Sequence[str]) -> frozenset[str]:
        """Which of ``roles`` the member holds, read from Discord (``GET`` the guild member:
        the bot's intents keep no member cache)."""
        if not (workspace.isdigit() and member.isdigit()):
            return frozenset()
        try:
            data = await self.bot.http.get_member(int(workspace), int(member))
        except discord.NotFound:
            return frozenset()
        except discord.HTTPException as exc:
            log.warning("cannot read member %s's roles: %s", member, exc)
            raise Unavailable(
                "I could not read your roles just now, so your team is not known yet: answer "
                "again in a moment."
            ) from exc
        return frozenset(str(r) for r in data.get("roles", ())) & frozenset(roles)

    async def _send(self, channel: str, message: Message) -> discord.Message:
        await self._wait_logged_in()
        target = self.bot.get_partial_messageable(int(channel))
        rendered = render(message).with_mention(self._mention(int(channel), message))
        return await target.send(**rendered.send_kwargs())

    def _mention(
        self, channel_id: int, message: Message
    ) -> tuple[str, discord.AllowedMentions] | None:
        """The role (or user) a scheduled question notifies, found in the channel's server."""
        if not message.mention:
            return None
        guild = getattr(self.bot.get_channel(channel_id), "guild", None)
        roles = [(r.id, r.name) for r in guild.roles] if guild is not None else []
        target = mention_target(
            message.mention, roles, everyone_id=guild.id if guild is not None else None
        )
        if target is None:
            log.warning(
                "post %s: %r is not a role in channel %s's server; it is shown, not pinged",
                message.post_id,
                message.mention,
                channel_id,
            )
        return target

    async def _wait_logged_in(self) -> None:
        """The scheduler may publish before login has finished; REST needs the token set."""
        try:
            await asyncio.wait_for(self.bot.logged_in.wait(), LOGIN_WAIT_SECONDS)
        except TimeoutError:
            raise RuntimeError("the Discord client has not logged in") from None
