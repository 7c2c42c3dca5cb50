"""Setting a channel up: schedules, packs, settings, and /help."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot.adapters.commands import (
    help_rows,
)
from bot.adapters.discord.cogs.base import (
    Interaction,
    StudyCog,
    answer,
    required,
    send_reply,
    suggest,
)
from bot.adapters.discord.options import Options, command, description, subcommand
from bot.core import replies
from bot.core.errors import BadInput, Unavailable
from bot.core.schedule_spec import ScheduleForm
from bot.log import get_logger

if TYPE_CHECKING:
    from bot.core.models import ChatContext
    from bot.services.schedule_book import ScheduleReply

__all__ = ["SetupCog"]

log = get_logger(__name__)

#: ``/schedule add``'s options that are text, each a field of the form.
_SCHEDULE_TEXT = (
    "time",
    "timezone",
    "days",
    "pack",
    "difficulty",
    "tags",
    "window",
    "cron",
    "kinds",
    "round",
)


class SetupCog(StudyCog, name="studybot-setup"):
    """Setting a channel up: schedules, packs, settings, and /help."""

    # --- settings ----------------------------------------------------------------------------

    @command("settings")
    async def settings(self, interaction: Interaction, options: Options) -> None:
        """This server's timezone, quiz window and points; admins change them (the one front
        door answers; this cog adds the timezone autocomplete)."""
        await answer(self.bot, interaction, "settings", options.given)

    @settings.autocomplete("value")
    async def _settings_value(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        if getattr(interaction.namespace, "setting", None) == "timezone":
            return self.timezone_choices(current)
        return []

    # --- packs and help ----------------------------------------------------------------------

    pack = app_commands.Group(name="pack", description=description("pack"))

    @subcommand(pack, "pack", "list")
    async def pack_list(self, interaction: Interaction, options: Options) -> None:
        """The question packs, and which are on in this channel."""
        await send_reply(interaction, await self.services.packs.listing(self.context(interaction)))

    @subcommand(pack, "pack", "enable")
    async def pack_enable(self, interaction: Interaction, options: Options) -> None:
        """Turn a question pack back on in this channel (admins)."""
        name = required(options.text("name"))
        reply = await self.services.packs.enable(self.context(interaction), name)
        await send_reply(interaction, reply.private())

    @subcommand(pack, "pack", "disable")
    async def pack_disable(self, interaction: Interaction, options: Options) -> None:
        """Turn a question pack off in this channel only (admins)."""
        name = required(options.text("name"))
        reply = await self.services.packs.disable(self.context(interaction), name)
        await send_reply(interaction, reply.private())

    @pack_enable.autocomplete("name")
    async def _pack_enable_name(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.channel_pack_choices(interaction, current, want_on=False)

    @pack_disable.autocomplete("name")
    async def _pack_disable_name(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.channel_pack_choices(interaction, current, want_on=True)

    async def channel_pack_choices(
        self, interaction: Interaction, current: str, *, want_on: bool
    ) -> list[app_commands.Choice[str]]:
        """Pack slugs for enable/disable: the ones that would change come first."""
        try:
            states = await self.services.packs.states(self.context(interaction))
        except Exception:
            log.exception("pack autocomplete failed")
            return []
        ordered = sorted(states, key=lambda state: state[1] != want_on)
        return suggest(
            ((f"{s.slug} — {s.title} ({'on' if on else 'off'} here)", s.slug) for s, on in ordered),
            current,
        )

    @subcommand(pack, "pack", "upload")
    async def pack_upload(self, interaction: Interaction, options: Options) -> None:
        """Check a question pack file with the linter; an admin's valid pack is installed.

        Name and size are checked from the attachment's metadata before it is downloaded;
        the reply is deferred (privately) because a big pack takes seconds to check.
        """
        ctx, file, force = self.context(interaction), options.file("file"), options.flag("force")
        self.services.packs.check_file(file.filename, file.size)
        await interaction.response.defer(ephemeral=True, thinking=True)
        try:
            raw = await file.read()
        except discord.HTTPException as exc:
            log.warning("cannot download attachment %s: %s", file.id, exc)
            raise Unavailable(
                "I couldn't download that file from Discord; please try again."
            ) from None
        reply = await self.services.packs.check_upload(ctx, file.filename, raw, force=force)
        await send_reply(interaction, reply.private())

    @command("help")
    async def help(self, interaction: Interaction, options: Options) -> None:
        """What studybot can do, and how answering works."""
        rows = help_rows("discord")
        await send_reply(
            interaction, replies.help_message(rows, admin=self.context(interaction).is_admin)
        )

    # --- schedules ---------------------------------------------------------------------------

    schedule = app_commands.Group(name="schedule", description=description("schedule"))

    @subcommand(schedule, "schedule", "add")
    async def schedule_add(self, interaction: Interaction, options: Options) -> None:
        """Add a scheduled question to this channel (admins).

        The typed fields go to the core as a form; it checks them exactly as it checks the
        text grammar's words on the console and Slack.
        """
        mention = options.role("mention")
        if mention is not None and mention.is_default():
            raise BadInput("@everyone would ping the whole server; pick a role to notify.")
        fields = {name: options.text(name) for name in _SCHEDULE_TEXT}
        fields["mention"] = None if mention is None else mention.mention
        form = ScheduleForm.from_fields(fields)
        ctx = self.context(interaction)
        await self._schedule(interaction, self.services.schedules.add(ctx, form))

    @schedule_add.autocomplete("timezone")
    async def _schedule_timezone(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return self.timezone_choices(current)

    @schedule_add.autocomplete("pack")
    async def _schedule_pack(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.pack_choices(current)

    @subcommand(schedule, "schedule", "list")
    async def schedule_list(self, interaction: Interaction, options: Options) -> None:
        """This channel's schedules and when each posts next."""
        ctx = self.context(interaction)
        await self._schedule(interaction, self.services.schedules.list(ctx))

    @subcommand(schedule, "schedule", "preview")
    async def schedule_preview(self, interaction: Interaction, options: Options) -> None:
        """When a schedule posts next, in its own timezone."""
        ctx, schedule_id = self.context(interaction), required(options.number("id"))
        count = required(options.number("count"))
        await self._schedule(interaction, self.services.schedules.preview(ctx, schedule_id, count))

    @subcommand(schedule, "schedule", "remove")
    async def schedule_remove(self, interaction: Interaction, options: Options) -> None:
        """Remove a schedule (admins)."""
        await self._by_id(interaction, options, self.services.schedules.remove)

    @subcommand(schedule, "schedule", "pause")
    async def schedule_pause(self, interaction: Interaction, options: Options) -> None:
        """Pause a schedule until it is resumed (admins)."""
        await self._by_id(interaction, options, self.services.schedules.pause)

    @subcommand(schedule, "schedule", "resume")
    async def schedule_resume(self, interaction: Interaction, options: Options) -> None:
        """Resume a paused schedule (admins)."""
        await self._by_id(interaction, options, self.services.schedules.resume)

    @subcommand(schedule, "schedule", "skip")
    async def schedule_skip(self, interaction: Interaction, options: Options) -> None:
        """Skip a schedule's next question (admins)."""
        await self._by_id(interaction, options, self.services.schedules.skip)

    @subcommand(schedule, "schedule", "now")
    async def schedule_now(self, interaction: Interaction, options: Options) -> None:
        """Post a schedule's question right now (admins)."""
        await self._by_id(interaction, options, self.services.schedules.now)

    async def _by_id(
        self,
        interaction: Interaction,
        options: Options,
        verb: Callable[[ChatContext, int], Awaitable[ScheduleReply]],
    ) -> None:
        """A verb on one schedule, by its ``id`` option."""
        schedule_id = required(options.number("id"))
        await self._schedule(interaction, verb(self.context(interaction), schedule_id))

    async def _schedule(self, interaction: Interaction, call: Awaitable[ScheduleReply]) -> None:
        """Permissions are the core's: ``ctx.is_admin`` says what the adapter saw.

        ``now`` answers the admin first, then publishes through the gateway like the
        scheduler does, so the question is a plain channel post that keeps no token.
        """
        reply = await call
        await send_reply(interaction, reply.message.private())
        if reply.draft is not None:
            await self.services.posting.publish(reply.draft, self.bot.gateway)
