"""``pack disable`` as the real scheduler sees it: scheduled posts skip a pack switched off in
their channel (the batched ``candidates_many`` path, not only ``quiz``), other channels keep it.

A console session with the scheduler running, on a real SQLite file and a simulated clock, as
in ``tests/test_scheduler.py``.
"""

from __future__ import annotations

import io
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.adapters.console import ConsoleAdapter
from bot.app import build_services, timer_loop
from bot.core.clock import SimulatedClock
from bot.questions.loader import load_packs
from bot.storage.database import open_database
from tests.conftest import TEST_PACKS

EXTRA = """\
pack: extra
title: Extra
items:
  - id: x-flash-1
    kind: flashcard
    difficulty: easy
    prompt: What does tensor.detach() return?
    answer: A tensor cut from the graph that shares storage.
"""


async def _session(tmp_path: Path, script: str) -> list[dict[str, object]]:
    packs = load_packs(TEST_PACKS).packs
    (tmp_path / "extra.yaml").write_text(EXTRA)
    packs += load_packs(tmp_path / "extra.yaml").packs
    clock = SimulatedClock(datetime(2026, 3, 4, 6, 0, tzinfo=UTC))
    out = io.StringIO()
    async with await open_database(tmp_path / "bot.sqlite3") as db:
        built = build_services(db, clock, rng=random.Random(7))
        service = built.services
        await service.packs.sync(packs)
        console = ConsoleAdapter(service, clock, out=out, json_mode=True)
        scheduler = timer_loop(built.timed, console, clock, timedelta(hours=2), concurrency=1)
        async with scheduler.running():
            console.scheduler = scheduler
            await console.run(script.splitlines())
    return [json.loads(line) for line in out.getvalue().splitlines()]


async def test_scheduled_posts_skip_a_pack_switched_off_in_their_channel(tmp_path: Path) -> None:
    lines = await _session(
        tmp_path,
        "/schedule add 09:00 UTC daily --window 1h\n"
        "/channel random\n"
        "/schedule add 09:00 UTC daily --window 1h\n"
        "/channel general\n"
        "/pack disable mini\n"
        "/clock advance 7d\n"
        "/pack disable extra\n"
        "/clock advance 2d\n"
        "/pack enable mini\n"
        "/clock advance 1d\n",
    )
    posts = [line for line in lines if line["kind"] == "post"]
    general = [str(p["question_id"]) for p in posts if p["channel"] == "general"]
    random_channel = [str(p["question_id"]) for p in posts if p["channel"] == "random"]
    # Seven days with only `extra` on, two with nothing on (nothing posts), one with mini back.
    assert general[:7] == ["x-flash-1"] * 7
    assert len(general) == 8 and general[7].startswith("d-")
    assert len(random_channel) == 10  # unaffected: every day, mini's questions included
    assert any(q.startswith("d-") for q in random_channel)
