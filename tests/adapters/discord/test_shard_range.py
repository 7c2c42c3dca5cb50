"""Shard ranges as an operator writes them (``0-3``, ``0,2,5``, ``3``) and what they own."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.adapters.discord.shards import ShardRange, ShardRangeError, shard_of, shard_plan


def guild_on(millis: int, low_bits: int = 0x2A) -> int:
    """A guild id whose timestamp part (the bits above 22) is ``millis``."""
    return (millis << 22) | low_bits


def test_shard_of_is_the_timestamp_part_modulo_the_count() -> None:
    assert shard_of(guild_on(5), 4) == 1
    assert shard_of(guild_on(8), 4) == 0
    assert shard_of(guild_on(8, low_bits=(1 << 22) - 1), 4) == 0  # low bits never count
    assert shard_of(81384788765712384, 1) == 0
    with pytest.raises(ShardRangeError, match="1 or more"):
        shard_of(guild_on(1), 0)


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("0-3", (0, 1, 2, 3)),
        ("0,2,5", (0, 2, 5)),
        ("3", (3,)),
        ("5,0-1", (0, 1, 5)),
        (" 2 - 4 ", (2, 3, 4)),
        ("7", (7,)),
    ],
)
def test_parse(text: str, ids: tuple[int, ...]) -> None:
    assert ShardRange.parse(text, 8) == ShardRange(ids, 8)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "expected shard ids, e.g. 0-3, 0,2,5 or 3; got ''"),
        ("a-b", "expected shard ids, e.g. 0-3, 0,2,5 or 3; got 'a-b'"),
        ("-1", "expected shard ids, e.g. 0-3, 0,2,5 or 3; got '-1'"),
        ("0,,2", "expected shard ids, e.g. 0-3, 0,2,5 or 3; got '0,,2'"),
        ("0-3-5", "expected shard ids, e.g. 0-3, 0,2,5 or 3; got '0-3-5'"),
        ("8", "shard 8 is out of range: with a shard count of 8 the shards are 0 to 7"),
        ("4-9", "shard 9 is out of range: with a shard count of 8 the shards are 0 to 7"),
        ("3-1", "the range 3-1 runs backwards; write 1-3"),
        ("1,1", "shard 1 is given twice in '1,1'"),
        ("0-3,2", "shard 2 is given twice in '0-3,2'"),
    ],
)
def test_parse_refuses_with_what_was_expected(text: str, message: str) -> None:
    with pytest.raises(ShardRangeError) as raised:
        ShardRange.parse(text, 8)
    assert str(raised.value) == message


def test_a_count_of_one_has_only_shard_zero() -> None:
    assert ShardRange.parse("0", 1).owns(guild_on(12345))
    with pytest.raises(ShardRangeError, match="with a shard count of 1 the only shard is 0"):
        ShardRange.parse("1", 1)


def test_owns_the_guilds_of_its_shards_only() -> None:
    low = ShardRange.parse("0-1", 4)
    assert [low.owns(guild_on(m)) for m in range(8)] == [True, True, False, False] * 2
    spread = ShardRange.parse("0,3", 4)
    assert [spread.owns(guild_on(m)) for m in range(4)] == [True, False, False, True]


def test_every_and_str() -> None:
    assert ShardRange.every(3) == ShardRange.parse("0-2", 3)
    assert str(ShardRange.parse("0-2,5,7-8", 10)) == "0-2,5,7-8 of 10"
    assert str(ShardRange.parse("4", 8)) == "4 of 8"


@given(
    guild_id=st.integers(min_value=0, max_value=(1 << 63) - 1),
    count=st.integers(min_value=1, max_value=64),
    cut=st.integers(min_value=0, max_value=64),
)
def test_two_complementary_ranges_own_each_guild_exactly_once(
    guild_id: int, count: int, cut: int
) -> None:
    """Processes started with ranges that split 0..count-1 answer every guild, none twice."""
    cut = cut % count
    ranges = [ShardRange.parse(f"0-{cut}", count)]
    if cut + 1 < count:
        ranges.append(ShardRange.parse(f"{cut + 1}-{count - 1}", count))
    assert sum(r.owns(guild_id) for r in ranges) == 1


def test_the_dataclass_refuses_what_parse_would() -> None:
    with pytest.raises(ShardRangeError, match="no shards given"):
        ShardRange((), 2)
    with pytest.raises(ShardRangeError, match="sorted and given once"):
        ShardRange((1, 0), 2)
    with pytest.raises(ShardRangeError, match="shard 2 is out of range"):
        ShardRange((2,), 2)


class TestShardPlan:
    """Where the range and count come from decides what the error names."""

    def test_nothing_set_means_not_sharded(self) -> None:
        assert shard_plan(None, None) is None

    def test_a_count_alone_runs_every_shard(self) -> None:
        assert shard_plan(None, 3) == ShardRange((0, 1, 2), 3)

    def test_errors_name_the_options(self) -> None:
        names = {"shards_name": "--shards", "count_name": "--shard-count"}
        with pytest.raises(ShardRangeError) as raised:
            shard_plan("0-3", None, **names)
        assert str(raised.value) == (
            "--shards needs --shard-count, the number of shards across all processes "
            "(the same in each), e.g. --shards 0-3 with --shard-count 8"
        )
        with pytest.raises(ShardRangeError) as raised:
            shard_plan("0-4", 4, **names)
        assert str(raised.value) == (
            "--shards: shard 4 is out of range: with a shard count of 4 the shards are 0 to 3"
        )
        with pytest.raises(ShardRangeError) as raised:
            shard_plan("0", 0, **names)
        assert str(raised.value) == "--shard-count: expected a number of shards, 1 or more; got 0"

    def test_errors_name_the_variables_by_default(self) -> None:
        with pytest.raises(ShardRangeError, match=r"^DISCORD_SHARDS: shard 9 is out of range"):
            shard_plan("9", 2)
        with pytest.raises(ShardRangeError, match=r"DISCORD_SHARDS=0-3 with DISCORD_SHARD_COUNT=8"):
            shard_plan("1", None)
