"""The pack check that chat uploads go through: a real child process, capped and timed."""

from __future__ import annotations

import pytest

from bot.questions.isolated_check import CheckFailed, check_isolated
from bot.questions.loader import load_packs
from tests.conftest import TEST_PACKS
from tests.helpers import FRESH


async def test_a_valid_upload_is_checked_against_the_loaded_packs() -> None:
    existing = load_packs(TEST_PACKS).packs
    verdict = await check_isolated(FRESH.encode(), "fresh.yaml", existing, max_items=500)
    assert verdict.valid and verdict.too_many is None
    assert all(problem.severity == "warning" for problem in verdict.problems)


async def test_an_id_reused_from_another_pack_is_reported_by_the_child() -> None:
    existing = load_packs(TEST_PACKS).packs
    reused = existing[0].pack.items[0].id
    raw = FRESH.replace("id: f-flash-1", f"id: {reused}", 1).encode()
    verdict = await check_isolated(raw, "fresh.yaml", existing, max_items=500)
    assert not verdict.valid
    assert any(f"id {reused!r} is already used" in p.message for p in verdict.problems)


async def test_too_many_items_are_counted_without_a_full_check() -> None:
    two = FRESH + FRESH.split("items:\n", 1)[1].replace("f-flash-1", "f-flash-2")
    verdict = await check_isolated(two.encode(), "fresh.yaml", [], max_items=1)
    assert verdict.too_many == 2 and not verdict.valid and verdict.problems == ()


async def test_a_check_past_its_deadline_is_killed_and_says_so() -> None:
    with pytest.raises(CheckFailed, match=r"checking `fresh.yaml` took longer than 0 s"):
        await check_isolated(FRESH.encode(), "fresh.yaml", [], max_items=500, deadline_s=0.05)


async def test_a_check_over_its_memory_cap_fails_in_the_child_only() -> None:
    with pytest.raises(CheckFailed, match=r"needed more than 64 MiB"):
        await check_isolated(
            FRESH.encode(), "fresh.yaml", [], max_items=500, memory_bytes=64 * 1024 * 1024
        )
    # The bot process is unharmed and the next check works.
    verdict = await check_isolated(FRESH.encode(), "fresh.yaml", [], max_items=500)
    assert verdict.valid
