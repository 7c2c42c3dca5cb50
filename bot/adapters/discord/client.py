"""The discord.py client: a ``commands.Bot`` given its dependencies, set up in ``setup_hook``.

``setup_hook`` runs once per process, inside ``login()`` and before the gateway connects: the
persistent button class is registered there, the commands are added and synced (to
``DISCORD_DEV_GUILD`` alone when it is set, which is instant; globally otherwise). Nothing is
started from ``on_ready``, which fires again after every non-resumed reconnect.

Intents are ``guilds`` only: slash commands, buttons and modals arrive as interactions whatever
the intents, and the context menu gets its message inside the interaction. The guild cache is
kept for channel and role names (the admin role may be given by name).

Sharded (``--shards`` / ``--shard-count``), the client is :class:`ShardedStudyBot`, an
``AutoShardedBot`` that opens only this process's shards; unsharded it stays the plain
``commands.Bot`` (no ``GET /gateway/bot``, no shard in IDENTIFY), exactly as before.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

import discord
from discord import app_commands
from discord.ext import commands
from discord.voice_client import VoiceClient

from bot.adapters.discord.cogs import COGS, QuestionCog
from bot.adapters.discord.components import StudyButton
from bot.adapters.discord.endpoints import discover_gateway, is_default_api
from bot.adapters.discord.errors import describe, report_error
from bot.adapters.discord.identity import (
    AdminRoleNames,
    admin_role_ids,
    chat_context,
    name_problem,
)
from bot.adapters.discord.render import thread_name
from bot.adapters.discord.routed import routed_commands
from bot.adapters.discord.shards import ShardRange
from bot.core.gateway import ChatGateway
from bot.core.messages import Message
from bot.core.models import ChatContext
from bot.log import get_logger
from bot.services.bundle import Services
from bot.settings import Settings

__all__ = ["ShardedStudyBot", "StudyBot", "StudyTree", "intents", "study_bot"]

log = get_logger(__name__)

THREAD_ARCHIVE_MINUTES: Final = 1440  # a day: long enough for a daily question's discussion


def intents() -> discord.Intents:
    """The least the bot needs: guilds (channels, roles). Nothing privileged."""
    return discord.Intents(guilds=True)


class StudyTree(app_commands.CommandTree["StudyBot"]):
    """The command tree whose ``on_error`` is the adapter's one error handler."""

    async def on_error(
        self, interaction: discord.Interaction[StudyBot], error: app_commands.AppCommandError, /
    ) -> None:
        await report_error(interaction, error, describe(interaction))


class StudyBot(commands.Bot):
    """studybot on Discord: holds the service, the settings and the gateway; routes clicks."""

    def __init__(
        self,
        service: Services,
        settings: Settings,
        *,
        gateway: ChatGateway,
        guild_ready_timeout: float = 2.0,
        **client_options: Any,
    ) -> None:
        # discord.py 2.7 warns at every start that PyNaCl/davey (voice) are missing; no voice here.
        VoiceClient.warn_nacl = VoiceClient.warn_dave = False
        super().__init__(
            command_prefix=commands.when_mentioned,  # no prefix commands; nothing to read
            intents=intents(),
            help_command=None,
            tree_cls=StudyTree,
            allowed_contexts=app_commands.AppCommandContext(
                guild=True, dm_channel=False, private_channel=False
            ),
            allowed_installs=app_commands.AppInstallationType(guild=True, user=False),
            allowed_mentions=discord.AllowedMentions.none(),
            guild_ready_timeout=guild_ready_timeout,
            max_messages=None,  # the bot never reads its message cache
            **client_options,
        )
        self.services = service
        self.settings = settings
        self.gateway = gateway  # the adapter: how /schedule now publishes, like the scheduler
        self.logged_in = asyncio.Event()
        self._questions: QuestionCog | None = None  # where a button click goes
        self.shard_range: ShardRange | None = None  # set by ShardedStudyBot
        # Admin roles are ids. Names are refused at start, once the guilds' roles are known,
        # with the ids that carry those names (`startup_problem`, read by the adapter).
        self.startup_problem: str | None = None
        try:
            self._admin_roles = admin_role_ids(settings.discord_admin_role)
            self._admin_role_names: tuple[str, ...] = ()
        except AdminRoleNames as names:
            self._admin_roles, self._admin_role_names = frozenset(), names.names

    async def setup_hook(self) -> None:
        if self.settings.discord_gateway_url is None and not is_default_api(
            self.settings.discord_api_base
        ):
            await discover_gateway(self.http)
        self.add_dynamic_items(StudyButton)
        for kind in COGS:
            cog = kind(self)
            if isinstance(cog, QuestionCog):
                self._questions = cog
            await self.add_cog(cog)
        # The one front door's commands, made from the table (no cog defines them).
        taken = [c.name for c in self.tree.get_commands()]
        for routed in routed_commands(self, taken):
            self.tree.add_command(routed)
        await self.sync_commands()
        self.logged_in.set()

    async def sync_commands(self) -> list[app_commands.AppCommand]:
        """Sync every command: to the dev guild when one is set, else globally."""
        dev_guild = self.settings.discord_dev_guild
        if dev_guild is not None:
            guild = discord.Object(dev_guild)
            self.tree.copy_global_to(guild=guild)
            synced = await self.tree.sync(guild=guild)
            log.info("synced %d commands to guild %s", len(synced), dev_guild)
        else:
            synced = await self.tree.sync()
            log.info("synced %d commands globally (may take a while to show)", len(synced))
        return synced

    async def on_ready(self) -> None:
        if self._admin_role_names:
            roles = [(r.id, r.name, g.name) for g in self.guilds for r in g.roles]
            self.startup_problem = name_problem(self._admin_role_names, roles)
            log.error("%s", self.startup_problem)
            await self.close()
            return
        guilds = len(self.guilds)
        shards = f" (shards {self.shard_range})" if self.shard_range is not None else ""
        log.info("connected to Discord as %s in %d server(s)%s", self.user, guilds, shards)

    def context(self, interaction: discord.Interaction[Any]) -> ChatContext:
        return chat_context(interaction, self._admin_roles)

    @property
    def admin_roles(self) -> frozenset[int]:
        """The ids of ``DISCORD_ADMIN_ROLE``: holding one makes a member an admin of the bot,
        so a role reward may never be one of them."""
        return self._admin_roles

    async def on_study_button(self, interaction: discord.Interaction[Any], core_id: str) -> None:
        """Route a click (see :class:`StudyButton`); errors go to the one error handler."""
        try:
            if self._questions is None:
                raise RuntimeError("a button was clicked before setup_hook ran")
            await self._questions.on_button(interaction, core_id)
        except Exception as exc:
            await report_error(interaction, exc, f"button {core_id}")

    async def open_thread(self, channel_id: int, message_id: int, message: Message) -> None:
        """A public discussion thread under a question, when ``DISCORD_THREADS`` is on.

        A thread is a nicety: if Discord refuses (no Create Public Threads, a forum, a
        thread already), the question stays posted and a warning is logged.
        """
        if not self.settings.discord_threads:
            return
        try:
            await self.http.start_thread_with_message(
                channel_id,
                message_id,
                name=thread_name(message),
                auto_archive_duration=THREAD_ARCHIVE_MINUTES,
            )
        except discord.HTTPException as exc:
            log.warning(
                "no discussion thread for post %s in channel %s: %s",
                message.post_id,
                channel_id,
                exc.text or exc.status,
            )
        except Exception:  # a network error: the question itself was posted, so keep going
            log.warning(
                "no discussion thread for post %s in channel %s",
                message.post_id,
                channel_id,
                exc_info=True,
            )


class ShardedStudyBot(StudyBot, commands.AutoShardedBot):
    """studybot as one of several processes: discord.py's ``AutoShardedBot`` behaviour (one
    gateway connection per shard, events routed by guild), opening only ``shard_range``'s
    shards. With ``shard_count`` given, discord.py connects to the configured gateway as the
    plain client does, without asking ``GET /gateway/bot`` for a recommended count.

    ``commands.Bot`` defines nothing of its own (it is ``BotBase`` + ``Client``), so placing
    it before ``AutoShardedBot`` in the MRO leaves every ``AutoShardedClient`` method in force.
    """

    def __init__(
        self,
        service: Services,
        settings: Settings,
        *,
        gateway: ChatGateway,
        shard_range: ShardRange,
        guild_ready_timeout: float = 2.0,
    ) -> None:
        super().__init__(
            service,
            settings,
            gateway=gateway,
            guild_ready_timeout=guild_ready_timeout,
            shard_ids=list(shard_range.ids),
            shard_count=shard_range.count,
        )
        self.shard_range = shard_range


def study_bot(
    service: Services,
    settings: Settings,
    *,
    gateway: ChatGateway,
    shard_range: ShardRange | None,
    guild_ready_timeout: float = 2.0,
) -> StudyBot:
    """The client for this process: sharded only when a shard range was given."""
    if shard_range is None:
        return StudyBot(service, settings, gateway=gateway, guild_ready_timeout=guild_ready_timeout)
    return ShardedStudyBot(
        service,
        settings,
        gateway=gateway,
        shard_range=shard_range,
        guild_ready_timeout=guild_ready_timeout,
    )
