"""Where a chat context is: its workspace and channel rows, written once for every service.

Ids from a platform are only unique within it, so every feature that acts "in this channel" first
turns the context into the stored rows; the names are refreshed on the way (a renamed channel
shows its new name in listings).
"""

from __future__ import annotations

from datetime import datetime

from bot.core.clock import Clock
from bot.core.models import ChatContext, Post
from bot.storage.directory import ChannelRow, Directory, WorkspaceRow

__all__ = ["Places"]


class Places:
    """The context -> workspace/channel lookup, over the directory store."""

    def __init__(self, directory: Directory, clock: Clock) -> None:
        self._directory = directory
        self._clock = clock

    async def workspace(self, ctx: ChatContext) -> WorkspaceRow:
        """The caller's workspace row (created on first sight)."""
        return await self._directory.workspace(
            ctx.platform, ctx.workspace, ctx.workspace_name, self._clock.now()
        )

    async def channel(self, ctx: ChatContext) -> tuple[WorkspaceRow, ChannelRow]:
        """The caller's workspace and channel rows (created on first sight)."""
        workspace = await self.workspace(ctx)
        channel = await self._directory.channel(
            workspace, ctx.channel, ctx.channel_name, self._clock.now()
        )
        return workspace, channel

    async def workspace_ids(self, platform: str) -> list[int]:
        """Every workspace of ``platform`` seen so far (the admin page's console workspaces)."""
        return await self._directory.workspace_ids(platform)

    async def workspace_by_id(self, workspace_id: int) -> WorkspaceRow:
        return await self._directory.workspace_by_id(workspace_id)

    async def channels_of(self, workspace: WorkspaceRow) -> list[ChannelRow]:
        """The workspace's channels seen so far, by name."""
        return await self._directory.channels_of(workspace.id)

    async def timezone(self, ctx: ChatContext) -> str:
        """The IANA timezone the caller's workspace shows times in (see
        :attr:`WorkspaceRow.display_zone`); its days may still end in the old one until
        midnight, which :meth:`days_zone` says."""
        workspace = await self.workspace(ctx)
        return workspace.display_zone.key

    async def days_zone(self, ctx: ChatContext) -> tuple[str, datetime | None]:
        """The zone the workspace's days end in now, and when the chosen one takes over
        (None: it already has)."""
        workspace = await self.workspace(ctx)
        now = self._clock.now()
        name = workspace.settings.zone_name_at(now)
        switch = workspace.settings.timezone_from
        return name, (switch if name != workspace.settings.timezone else None)

    async def channel_of(self, workspace: WorkspaceRow, post: Post | None) -> ChannelRow | None:
        """The channel ``post`` was posted in, if it is one of ``workspace``'s, else None.

        Post ids are numbered across every workspace: a number typed in one workspace must
        never reach another's question.
        """
        if post is None:
            return None
        channel = await self._directory.channel_by_id(post.channel_id)
        return channel if channel.workspace_id == workspace.id else None
