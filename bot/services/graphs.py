"""The autograd-graph pictures that reveals of ``show_graph: true`` items carry.

An item's code is run once in the sandbox with the graph drawn (``/graph``'s path, without a
member's rate limit), and the picture is kept in memory by the code's hash: 2,000 channels
revealing the same item at 09:00 cost one run. A failure (no sandbox, a busy one, code that no
longer builds a graph) is logged and the reveal goes out without the picture, never later.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict

from bot.core.messages import Attachment
from bot.core.snippets import SnippetRunner
from bot.log import get_logger
from bot.questions.schema import Item
from bot.sandbox.errors import SandboxUnavailable, SnippetRejected
from bot.sandbox.result import Outcome

__all__ = ["ItemGraphs"]

log = get_logger(__name__)

_KEEP = 64  # pictures kept (a few tens of KiB each)
_PICTURE = "autograd-graph.png"


class ItemGraphs:
    """Pictures of pack items' graphs, drawn in the sandbox once per code and cached."""

    def __init__(
        self,
        runner: SnippetRunner | None,
        *,
        runner_starting: asyncio.Future[None] | None = None,
    ) -> None:
        self._runner = runner
        self._runner_starting = runner_starting
        self._cache: OrderedDict[str, bytes | None] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}

    async def picture(self, item: Item) -> Attachment | None:
        """The picture for ``item`` (None if it has none, or it cannot be drawn now)."""
        if not item.show_graph or item.code is None or self._runner is None:
            return None
        key = hashlib.sha256(item.code.encode()).hexdigest()
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            if key not in self._cache:
                data = await self._draw(item.id, item.code)
                if data is None:
                    return None  # not cached: the next reveal tries again
                self._cache[key] = data
                while len(self._cache) > _KEEP:
                    self._cache.popitem(last=False)
            self._cache.move_to_end(key)
            data = self._cache[key]
        if data is None:
            return None
        return Attachment(_PICTURE, data, f"the autograd graph of {item.id}'s code", is_image=True)

    async def _draw(self, item_id: str, code: str) -> bytes | None:
        runner = self._runner
        assert runner is not None
        if self._runner_starting is not None:
            await self._runner_starting
        if not runner.available:
            return None
        try:
            result = await runner.run(code, graph=())
        except (SandboxUnavailable, SnippetRejected) as exc:
            log.warning("no graph picture for %s: %s", item_id, exc)
            return None
        picture = next((f.data for f in result.files if f.name == _PICTURE and f.is_image), None)
        if result.outcome is not Outcome.OK or picture is None:
            reason = result.graph_error or result.outcome.value
            log.warning("no graph picture for %s: %s", item_id, reason)
            return None
        return picture
