"""Which Discord servers this process serves when studybot runs as several processes.

Discord splits a bot's servers (guilds) over *shards*, one gateway connection each: guild ``g``
belongs to shard ``(g >> 22) % shard_count``, and only that shard's connection receives its
events and interactions. ``studybot run --shards 0-3 --shard-count 8`` opens shards 0 to 3, so
this process answers only their guilds; everything that acts on its own (the scheduler) must
skip the other guilds too, or two processes would post the same scheduled question.

Pure (no discord.py, no settings), so the CLI, the adapter and the tests share one parser.
Errors are :class:`ShardRangeError` with a sentence that names the option the value came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ShardRange", "ShardRangeError", "shard_of", "shard_plan"]

EXAMPLES = "e.g. 0-3, 0,2,5 or 3"
_ITEM = re.compile(r"([0-9]+)(?:\s*-\s*([0-9]+))?")


class ShardRangeError(ValueError):
    """A shard range or count an operator must fix; the message is one readable line."""


def shard_of(guild_id: int, shard_count: int) -> int:
    """The shard whose gateway connection carries ``guild_id``'s events (Discord's formula)."""
    if shard_count < 1:
        raise ShardRangeError(f"the shard count must be 1 or more, not {shard_count}")
    return (guild_id >> 22) % shard_count


@dataclass(frozen=True)
class ShardRange:
    """The shards one process runs (``ids``, sorted) out of ``count`` across all processes."""

    ids: tuple[int, ...]
    count: int

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ShardRangeError(f"the shard count must be 1 or more, not {self.count}")
        if not self.ids:
            raise ShardRangeError(f"no shards given; expected shard ids, {EXAMPLES}")
        for shard in self.ids:
            if not 0 <= shard < self.count:
                raise ShardRangeError(_out_of_range(shard, self.count))
        if list(self.ids) != sorted(set(self.ids)):
            raise ShardRangeError("shard ids must be sorted and given once each")

    @classmethod
    def parse(cls, text: str, count: int) -> ShardRange:
        """``"0-3"``, ``"0,2,5"``, ``"3"`` (or a mix: ``"0-1,4"``) out of ``count`` shards."""
        ids: set[int] = set()
        for part in text.split(","):
            item = _ITEM.fullmatch(part.strip())
            if item is None:
                raise ShardRangeError(f"expected shard ids, {EXAMPLES}; got {text.strip()!r}")
            first = int(item.group(1))
            last = int(item.group(2)) if item.group(2) is not None else first
            if last < first:
                raise ShardRangeError(
                    f"the range {first}-{last} runs backwards; write {last}-{first}"
                )
            if last >= count:
                raise ShardRangeError(_out_of_range(last if first < count else first, count))
            span = set(range(first, last + 1))
            if ids & span:
                raise ShardRangeError(f"shard {min(ids & span)} is given twice in {text.strip()!r}")
            ids |= span
        return cls(tuple(sorted(ids)), count)

    @classmethod
    def every(cls, count: int) -> ShardRange:
        """All ``count`` shards in this one process (``--shard-count`` without ``--shards``)."""
        return cls(tuple(range(count)), count)

    def owns(self, guild_id: int) -> bool:
        """Whether ``guild_id``'s events come to this process."""
        return shard_of(guild_id, self.count) in self.ids

    def __str__(self) -> str:
        """``0-3 of 8``, ``0,2,5 of 8``: for logs."""
        runs: list[str] = []
        start = prev = self.ids[0]
        for shard in (*self.ids[1:], None):
            if shard is not None and shard == prev + 1:
                prev = shard
                continue
            runs.append(str(start) if start == prev else f"{start}-{prev}")
            if shard is not None:
                start = prev = shard
        return f"{','.join(runs)} of {self.count}"


def _out_of_range(shard: int, count: int) -> str:
    expected = "the only shard is 0" if count == 1 else f"the shards are 0 to {count - 1}"
    return f"shard {shard} is out of range: with a shard count of {count} {expected}"


def shard_plan(
    shards: str | None,
    count: int | None,
    *,
    shards_name: str = "DISCORD_SHARDS",
    count_name: str = "DISCORD_SHARD_COUNT",
) -> ShardRange | None:
    """What this process runs: ``None`` (no sharding, as before) or a :class:`ShardRange`.

    ``shards`` without ``count`` is refused: which guilds a shard holds depends on the total,
    so every process must be given the same count. ``count`` alone runs all its shards here.
    ``shards_name`` / ``count_name`` are what the error names (an option or a variable).
    """
    if shards is None and count is None:
        return None
    if count is None:
        example = f"{_given(shards_name, '0-3')} with {_given(count_name, '8')}"
        raise ShardRangeError(
            f"{shards_name} needs {count_name}, the number of shards across all processes "
            f"(the same in each), e.g. {example}"
        )
    if count < 1:
        raise ShardRangeError(f"{count_name}: expected a number of shards, 1 or more; got {count}")
    if shards is None:
        return ShardRange.every(count)
    try:
        return ShardRange.parse(shards, count)
    except ShardRangeError as exc:
        raise ShardRangeError(f"{shards_name}: {exc}") from None


def _given(name: str, value: str) -> str:
    """How an operator writes ``value`` for an option (``--shards 0-3``) or a variable."""
    return f"{name} {value}" if name.startswith("-") else f"{name}={value}"
