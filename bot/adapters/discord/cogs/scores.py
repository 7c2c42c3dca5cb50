"""Scores together: live rounds, role rewards, the board, stats and the weekly recap."""

from __future__ import annotations

from discord import app_commands

from bot.adapters.discord.cogs.base import (
    Interaction,
    StudyCog,
    answer,
    required,
    send_reply,
)
from bot.adapters.discord.options import Options, command, description, subcommand
from bot.core.errors import NotFound
from bot.core.requests import (
    RewardAdd,
    RewardRemove,
    RewardsList,
    RewardsPreview,
    RewardsRequest,
)
from bot.core.rewards import Metric

__all__ = ["ScoreCog"]


class ScoreCog(StudyCog, name="studybot-scores"):
    """Scores together: live rounds, role rewards, the board, stats and the weekly recap."""

    # --- live rounds -------------------------------------------------------------------------

    rounds = app_commands.Group(name="round", description=description("round"))

    @subcommand(rounds, "round", "start")
    async def round_start(self, interaction: Interaction, options: Options) -> None:
        """Start a live round here: the reply is the public announcement; the questions follow
        as channel posts from the one timer loop, so none lives on this interaction's token."""
        await answer(self.bot, interaction, "round", options.given, "start")

    @round_start.autocomplete("pack")
    async def _round_pack(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.pack_choices(current)

    @subcommand(rounds, "round", "stop")
    async def round_stop(self, interaction: Interaction, options: Options) -> None:
        """End the round here early, with the board so far (public; a refusal is private)."""
        await answer(self.bot, interaction, "round", options.given, "stop")

    @subcommand(rounds, "round", "skip")
    async def round_skip(self, interaction: Interaction, options: Options) -> None:
        """Vote to skip the open question (public when it skips it; a vote or a refusal is
        private)."""
        await answer(self.bot, interaction, "round", options.given, "skip")

    # --- role rewards ------------------------------------------------------------------------

    rewards = app_commands.Group(name="rewards", description=description("rewards"))

    async def _rewards(self, interaction: Interaction, request: RewardsRequest) -> None:
        ctx = self.context(interaction)
        message = await self.services.rewards.command(ctx, request, self.bot.gateway)
        await send_reply(
            interaction, message if isinstance(request, RewardsList) else message.private()
        )

    @subcommand(rewards, "rewards", "list")
    async def rewards_list(self, interaction: Interaction, options: Options) -> None:
        """The role rewards set here."""
        await self._rewards(interaction, RewardsList())

    @subcommand(rewards, "rewards", "add")
    async def rewards_add(self, interaction: Interaction, options: Options) -> None:
        """Give a role to members who reach a threshold; it is taken back below it (admins)."""
        metric = Metric(required(options.text("metric")))
        threshold, role = required(options.number("threshold")), required(options.role("role"))
        request = RewardAdd(metric, threshold, str(role.id), f"@{role.name}")
        await self._rewards(interaction, request)

    @subcommand(rewards, "rewards", "remove")
    async def rewards_remove(self, interaction: Interaction, options: Options) -> None:
        """Remove a reward; its role is taken back from those who hold it (admins)."""
        await self._rewards(interaction, RewardRemove(required(options.number("id"))))

    @subcommand(rewards, "rewards", "preview")
    async def rewards_preview(self, interaction: Interaction, options: Options) -> None:
        """Who would gain or lose which role now; changes nothing (admins)."""
        await self._rewards(interaction, RewardsPreview())

    # --- scores ------------------------------------------------------------------------------

    @command("stats")
    async def stats(self, interaction: Interaction, options: Options) -> None:
        """Points, accuracy and streak for you or another member.

        The reply is private, as on Slack: asking about someone should not broadcast their
        accuracy. The core looks members up by platform id; its "no member called `<id>`"
        would show a raw snowflake, so the miss is reworded with the member's name here.
        """
        ctx = self.context(interaction)
        if options.flag("group"):  # the group's mastery picture (admins)
            picture = await self.services.mastery.picture(ctx)
            await send_reply(interaction, picture.message.private())
            return
        member = options.member("member")
        who = None if member is None or str(member.id) == ctx.member else str(member.id)
        try:
            message = await self.services.standings.stats(ctx, who)
        except NotFound:
            if member is None or who is None:
                raise NotFound("You have not answered any questions here yet.") from None
            raise NotFound(
                f"{member.display_name} has not answered any questions here yet."
            ) from None
        await send_reply(interaction, message.private())

    @command("recap")
    async def recap(self, interaction: Interaction, options: Options) -> None:
        """This channel's weekly recap: the board, the streaks, the most missed question."""
        await answer(self.bot, interaction, "recap", options.given)
