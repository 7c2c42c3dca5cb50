"""Snippet runs: `/run`, `/graph`, and the two message context menus."""

from __future__ import annotations

import discord
from discord import app_commands

from bot.adapters.discord.cogs.base import (
    Interaction,
    StudyCog,
)
from bot.adapters.discord.components import SnippetModal
from bot.adapters.discord.errors import report_error
from bot.adapters.discord.options import Options, command
from bot.core.errors import BadInput
from bot.core.snippets import first_python_block

__all__ = ["SnippetCog"]


class SnippetCog(StudyCog, name="studybot-snippets"):
    """Snippet runs: `/run`, `/graph`, and the two message context menus."""

    _menus: tuple[app_commands.ContextMenu, ...] = ()

    async def cog_load(self) -> None:
        # discord.py cannot declare context menus inside a class; they are added by hand.
        self._menus = (
            app_commands.ContextMenu(name="Run snippet", callback=self.run_message),
            app_commands.ContextMenu(name="Show autograd graph", callback=self.graph_message),
        )
        for menu in self._menus:
            self.bot.tree.add_command(menu)

    async def cog_unload(self) -> None:
        for menu in self._menus:
            self.bot.tree.remove_command(menu.name, type=menu.type)

    @command("run")
    async def run(self, interaction: Interaction, options: Options) -> None:
        """Run a Python snippet with torch (CPU) in a sandbox; opens a code editor."""
        self.context(interaction)
        self.services.runs.check()  # say "unavailable" now, not after the code is typed
        await interaction.response.send_modal(SnippetModal(self.run_code, report_error))

    async def run_message(self, interaction: Interaction, message: discord.Message) -> None:
        """Run the first Python code block of a message (the "Run snippet" context menu)."""
        code = first_python_block(message.content)
        if code is None:
            raise BadInput("That message has no ```python code block to run.")
        await self.run_code(interaction, code)

    @command("graph")
    async def graph(self, interaction: Interaction, options: Options) -> None:
        """Run a snippet and draw the autograd graph it built; opens a code editor."""
        self.context(interaction)
        self.services.runs.check()
        names = tuple(n.strip() for n in (options.text("of") or "").split(",") if n.strip())
        if options.flag("inputs"):
            names = ("*",)
        self.services.runs.check_graph(names)  # "At most 4 tensors" now, not after the code

        async def submit(inner: Interaction, code: str) -> None:
            await self.run_code(inner, code, graph=names)

        modal = SnippetModal(submit, report_error, title="Draw an autograd graph")
        await interaction.response.send_modal(modal)

    async def graph_message(self, interaction: Interaction, message: discord.Message) -> None:
        """Draw the graph of a message's first Python block ("Show autograd graph" menu)."""
        code = first_python_block(message.content)
        if code is None:
            raise BadInput("That message has no ```python code block to draw.")
        await self.run_code(interaction, code, graph=())
