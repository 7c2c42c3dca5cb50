"""Which workspace wrote each ``community`` question.

The community pack is one file that every workspace of a deployment shares, but a question in
it belongs to the workspace that wrote it (``/write``, or an approved suggestion): only that
workspace's admins see it on the admin page, edit it or retire it. The file says nothing of
workspaces, so the owner is kept here, by the item's id.
"""

from __future__ import annotations

from bot.storage.database import Database

__all__ = ["CommunityOwners"]


class CommunityOwners:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def claim(self, item_id: str, workspace_id: int) -> None:
        """``item_id`` was just written by ``workspace_id`` (an id freed by a retired question
        and written again belongs to its new author)."""
        async with self._db.write() as conn:
            await conn.execute(
                "INSERT INTO community_items (item_id, workspace_id) VALUES (?, ?) "
                "ON CONFLICT (item_id) DO UPDATE SET workspace_id = excluded.workspace_id",
                (item_id, workspace_id),
            )

    async def owner(self, item_id: str) -> int | None:
        """The workspace that wrote ``item_id``; None when none is recorded."""
        value = await self._db.fetchval(
            "SELECT workspace_id FROM community_items WHERE item_id = ?", (item_id,)
        )
        return None if value is None else int(value)

    async def owned_by(self, workspace_id: int) -> set[str]:
        """The ids of the community questions ``workspace_id`` wrote."""
        rows = await self._db.fetchall(
            "SELECT item_id FROM community_items WHERE workspace_id = ?", (workspace_id,)
        )
        return {str(row[0]) for row in rows}
