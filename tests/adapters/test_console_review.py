"""/review in the console: JSON lines, and a simulated month moved by the console's /clock."""

from __future__ import annotations

import io
import itertools
import json
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from bot.adapters.console import ConsoleAdapter
from bot.app import Built, due_sources, timer_loop
from bot.core.clock import SimulatedClock
from bot.services.bundle import Services
from bot.services.scheduled_sources import SchedulerParts
from bot.storage.reviews import ReviewStore
from tests.adapters.test_console import _run_console


class _Console:
    """The console adapter in this process, with the timer loop the bot runs beside it (its
    due sources included): type a line, get the JSON lines it printed."""

    def __init__(self, built: Built, clock: SimulatedClock) -> None:
        self.out = io.StringIO()
        self.adapter = ConsoleAdapter(built.services, clock, out=self.out, json_mode=True)
        self.scheduler = timer_loop(
            built.timed, self.adapter, clock, timedelta(hours=1), concurrency=1
        )
        for source in due_sources(built.services, self.adapter):
            self.scheduler.add_source(source)
        self.adapter.scheduler = self.scheduler

    async def type(self, line: str) -> list[dict[str, object]]:
        start = self.out.tell()
        await self.adapter.handle_line(line)
        self.out.seek(start)
        lines = [json.loads(text) for text in self.out.read().splitlines()]
        self.out.seek(0, io.SEEK_END)
        return lines


@pytest.fixture
async def console(built: Built, clock: SimulatedClock) -> AsyncIterator[_Console]:
    typed = _Console(built, clock)
    async with typed.scheduler.running():
        yield typed


def _served(lines: list[dict[str, object]]) -> dict[str, object] | None:
    return next((line for line in lines if line["kind"] == "review"), None)


async def test_a_simulated_month_wrong_comes_back_soon_right_answers_space_out(
    timed: SchedulerParts, console: _Console, service: Services
) -> None:
    await console.type("/quiz mini --difficulty medium")
    await console.type("/answer A")  # wrong: Again
    nothing = await console.type("/review")
    assert _served(nothing) is None and "next card is due in" in str(nothing[-1]["text"])

    # Wrong: due again within a day.
    await console.type("/clock advance 1d")
    card = _served(await console.type("/review"))
    assert card is not None and card["question_id"] == "d-mc-1" and card["due"] == 1
    assert card["member"] == "me" and card["ephemeral"] is True

    # Then right every time it comes round, for a month, looking once a day.
    review_days: list[datetime] = []
    lines = await console.type("/review B")
    review_days.append(datetime.fromisoformat(str(lines[0]["at"])))
    for _ in range(45):
        await console.type("/clock advance 1d")
        served = _served(await console.type("/review"))
        if served is None:
            continue
        graded = await console.type("/review B")
        assert "Correct" in str(graded[0]["text"])
        review_days.append(datetime.fromisoformat(str(graded[0]["at"])))
    gaps = [b - a for a, b in itertools.pairwise(review_days)]
    print("review gaps (days):", [g.days for g in gaps])
    assert len(gaps) >= 3, gaps
    assert all(b >= a for a, b in itertools.pairwise(gaps)), gaps
    assert gaps[-1] >= 2 * gaps[0] and gaps[-1] >= timedelta(days=7), gaps
    assert await ReviewStore(timed.db).replay_problems() == []


async def test_review_usage_and_grading_words(console: _Console) -> None:
    error = await console.type("/review B")
    assert error[0]["kind"] == "error" and "start with /review" in str(error[0]["text"])
    await console.type("/quiz mini --difficulty easy --tag autograd")
    await console.type("/answer forgot")
    await console.type("/clock advance 2m")
    card = _served(await console.type("/review"))
    assert card is not None and card["question_id"] == "d-flash-1"
    assert card["choices"] == ["again", "hard", "good", "easy"]
    back = await console.type("/review show")
    assert "record operations" in str(back[0]["text"])
    wrong = await console.type("/review B")
    assert "not a grade" in str(wrong[0]["text"])
    done = await console.type("/review easy")
    assert "Graded easy" in str(done[0]["text"]) and "1 reviewed" in str(done[1]["text"])


def test_review_json_lines_from_the_command_line(tmp_path: Path) -> None:
    out = _run_console(
        tmp_path / "console.sqlite3",
        "/quiz mini --difficulty medium\n/answer A\n/as bob\n/answer A\n/as me\n"
        "/clock advance 1h\n/review\n/review A\n/review\n",
    )
    served = [line for line in out if line["kind"] == "review"]
    assert len(served) == 1
    line = served[0]
    assert line["question_id"] == "d-mc-1" and line["member"] == "me" and line["due"] == 1
    assert line["ephemeral"] is True and line["choices"] == ["A", "B"]
    # Not `/answer`, which answers the channel's question: the card names its own command.
    assert line["answer_with"] == "answer with /review A|B"
    assert "❌ Not quite" in str(out[-3]["text"]) and "the answer is B" in str(out[-3]["text"])
    assert "1 reviewed" in str(out[-2]["text"])
    assert "Nothing is due right now" in str(out[-1]["text"])


async def test_reminders_through_the_console_clock_keep_berlin_time_and_stop_on_closed_dms(
    console: _Console,
) -> None:
    """19:00 in Berlin: 18:00 UTC before 29 March 2026, 17:00 UTC after; DMs closed: off."""
    await console.type("/quiz mini --difficulty medium")
    await console.type("/answer A")  # wrong: the card is due again in minutes, and stays due
    await console.type("/review remind 19:00 Europe/Berlin")

    async def dms_after(moment: str) -> list[dict[str, object]]:
        return [line for line in await console.type(f"/clock set {moment}") if line["kind"] == "dm"]

    # As a running bot would: one DM a day at 19:00 in Berlin (18:00 UTC in CET) on the way,
    # and none yet on the 27th at 18:55.
    on_the_way = await dms_after("2026-03-27T17:55:00Z")
    assert [line["at"] for line in on_the_way] == [
        f"2026-03-{day:02d}T18:00:00+00:00" for day in range(4, 27)
    ]
    [dm] = await dms_after("2026-03-27T18:01:00Z")
    assert dm["member"] == "me" and "1 card due for review" in str(dm["text"])
    assert await dms_after("2026-03-27T22:00:00Z") == []  # once a day
    saturday = await dms_after("2026-03-29T16:55:00Z")  # 18:55 in Berlin (CEST since 01:00 UTC)
    assert [line["at"] for line in saturday] == ["2026-03-28T18:00:00+00:00"]  # the 28th's only
    assert len(await dms_after("2026-03-29T17:01:00Z")) == 1  # 19:01 in Berlin
    assert await console.type("/dms closed")
    assert await dms_after("2026-03-30T17:05:00Z") == []  # not sent: the reminder turns off
    assert await dms_after("2026-03-31T17:05:00Z") == []
    notice = await console.type("/review")
    assert "review reminder turned itself off" in str(notice[0]["text"])
    status = await console.type("/review remind")
    assert "No review reminder is set" in str(status[0]["text"])
