"""The durable scheduler, as members and admins see it: the console's JSON lines, a real SQLite
file, the simulated clock. A "restart" is a new session (new service, new scheduler, new
console) on the same database file; a few tests run the real `studybot console` subprocess.

Expected instants are written out by hand in UTC (Berlin is UTC+1 in winter and UTC+2 in
summer; New York UTC-5 and UTC-4), never computed with the code under test.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import logging
import random
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import ClassVar
from zoneinfo import ZoneInfo

import pytest

from bot.adapters.console import ConsoleAdapter
from bot.app import build_services, timer_loop
from bot.core.clock import SimulatedClock
from bot.core.messages import Message
from bot.questions.loader import load_packs
from bot.services.bundle import Services
from bot.services.posting import Posting
from bot.services.scheduled_sources import SchedulerParts
from bot.storage.database import Database, open_database
from tests.conftest import TEST_PACKS
from tests.dst_weeks import DstWeek, dst_weeks
from tests.helpers import member, schedule_command

ROOT = Path(__file__).parents[1]
GRACE = timedelta(hours=2)


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@dataclass
class Run:
    """What one session printed, as JSON lines."""

    lines: list[dict[str, object]]

    def of(self, kind: str) -> list[dict[str, object]]:
        return [line for line in self.lines if line["kind"] == kind]

    @property
    def posts(self) -> list[dict[str, object]]:
        return self.of("post")

    @property
    def edits(self) -> list[dict[str, object]]:
        return self.of("edit")

    def post_times(self) -> list[str]:
        return [_z(line["at"]) for line in self.posts]

    def replies(self) -> list[str]:
        return [str(line["text"]) for line in self.lines if line["kind"] == "reply"]


def _z(at: object) -> str:
    return utc(str(at)).astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ")


class Crash(BaseException):
    """The process dies (kill -9, OOM): nothing after this line runs, no handler catches it."""


class CrashingConsole(ConsoleAdapter):
    """A console whose platform connection dies in the middle of sending a post."""

    async def send_post(self, channel: str, message: Message) -> str:
        raise Crash


class SentThenCrashConsole(ConsoleAdapter):
    """The platform shows the post, then the process dies before it learns the message id."""

    async def send_post(self, channel: str, message: Message) -> str:
        self.post(channel, message)
        raise Crash


class FindingConsole(ConsoleAdapter):
    """A platform that can tell what a channel shows (as Discord can from its history)."""

    shown: ClassVar[dict[tuple[str, int], str]] = {}  # the platform outlives the process

    async def send_post(self, channel: str, message: Message) -> str:
        message_id = await super().send_post(channel, message)
        assert message.post_id is not None
        FindingConsole.shown[(channel, message.post_id)] = message_id
        return message_id

    async def find_post(self, channel: str, post_id: int) -> str | None:
        return FindingConsole.shown.get((channel, post_id))


class ShownThenCrashConsole(FindingConsole):
    """It shows the post, then the process dies before it learns the message id."""

    async def send_post(self, channel: str, message: Message) -> str:
        await super().send_post(channel, message)
        raise Crash


class FlakyConsole(ConsoleAdapter):
    """The platform refuses the first send (a 503), then works again."""

    failures = 1

    async def send_post(self, channel: str, message: Message) -> str:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("503 Service Unavailable")
        return await super().send_post(channel, message)


async def session(
    db_path: Path,
    start: str,
    script: str | Iterable[str],
    *,
    console: type[ConsoleAdapter] = ConsoleAdapter,
    grace: timedelta = GRACE,
    concurrency: int = 1,
) -> Run:
    """One run of the bot: open the file, start the scheduler, feed the console a script."""
    clock = SimulatedClock(utc(start))
    out = io.StringIO()
    db = await open_database(db_path)
    try:
        built = build_services(db, clock, default_timezone="UTC", rng=random.Random(7))
        service = built.services
        await service.packs.sync(load_packs(TEST_PACKS).packs)
        adapter = console(service, clock, out=out, json_mode=True)
        scheduler = timer_loop(built.timed, adapter, clock, grace, concurrency=concurrency)
        async with scheduler.running():
            adapter.scheduler = scheduler
            lines = script.splitlines() if isinstance(script, str) else list(script)
            await adapter.run(lines)
    finally:
        await db.close()
    return Run([json.loads(line) for line in out.getvalue().splitlines()])


async def crashed_session(
    db_path: Path, start: str, script: str, console: type[ConsoleAdapter]
) -> Run:
    """A session that dies mid-send; returns what was printed before it died."""
    clock = SimulatedClock(utc(start))
    out = io.StringIO()
    db = await open_database(db_path)
    try:
        built = build_services(db, clock, default_timezone="UTC", rng=random.Random(7))
        service = built.services
        await service.packs.sync(load_packs(TEST_PACKS).packs)
        adapter = console(service, clock, out=out, json_mode=True)
        scheduler = timer_loop(built.timed, adapter, clock, GRACE, concurrency=1)
        with pytest.raises(Crash):
            async with scheduler.running():
                adapter.scheduler = scheduler
                await adapter.run(script.splitlines())
    finally:
        await db.close()
    return Run([json.loads(line) for line in out.getvalue().splitlines()])


def local_dates(times: list[str], zone: str) -> list[str]:
    tz = ZoneInfo(zone)
    return [utc(t).astimezone(tz).date().isoformat() for t in times]


# --- DST weeks -----------------------------------------------------------------------------
# The weeks are one table (tests/dst_weeks.py); the schedule spec's occurrence tests use it too.


def _times(week: DstWeek) -> list[str]:
    return [f"{moment:%Y-%m-%dT%H:%MZ}" for moment in week.expected]


@pytest.mark.parametrize("week", dst_weeks("steady"))
async def test_0900_stays_0900_local_through_a_dst_week(tmp_path: Path, week: DstWeek) -> None:
    run = await session(
        tmp_path / "bot.sqlite3",
        week.start.isoformat(),
        f"/schedule add {week.time} {week.zone} daily --window 1h\n/clock advance {week.days}d",
    )
    expected = _times(week)
    assert run.post_times() == expected
    local = [utc(t).astimezone(ZoneInfo(week.zone)) for t in run.post_times()]
    assert {f"{t:%H:%M}" for t in local} == {week.time}
    assert len(set(local_dates(run.post_times(), week.zone))) == week.days  # one a day
    # Each one is revealed an hour later, in place.
    assert [_z(e["at"]) for e in run.edits] == [
        _z((utc(t) + timedelta(hours=1)).isoformat()) for t in expected
    ]
    assert [e["post_id"] for e in run.edits] == [p["post_id"] for p in run.posts]


@pytest.mark.parametrize("week", dst_weeks("gap"))
async def test_a_time_that_does_not_exist_posts_once_at_the_shifted_time(
    tmp_path: Path, week: DstWeek
) -> None:
    run = await session(
        tmp_path / "bot.sqlite3",
        week.start.isoformat(),
        f"/schedule add {week.time} {week.zone} --window 1h\n/clock advance {week.days}d",
    )
    assert run.post_times() == _times(week)
    dates = local_dates(run.post_times(), week.zone)
    assert len(set(dates)) == week.days  # one a day: the shifted one too, on its own date


@pytest.mark.parametrize("week", dst_weeks("fold"))
async def test_a_time_that_happens_twice_posts_once_at_the_first(
    tmp_path: Path, week: DstWeek
) -> None:
    run = await session(
        tmp_path / "bot.sqlite3",
        week.start.isoformat(),
        f"/schedule add {week.time} {week.zone} --window 30m\n/clock advance {week.days}d",
    )
    assert run.post_times() == _times(week)


async def test_weekdays_and_a_cron_schedule_in_one_channel(tmp_path: Path) -> None:
    run = await session(
        tmp_path / "bot.sqlite3",
        "2026-03-06T00:00:00Z",  # a Friday
        '/schedule add 09:00 weekdays --window 1h\n/schedule add --cron "0 18 * * sat,sun"'
        " --window 1h\n/clock advance 4d",
    )
    assert run.post_times() == [
        "2026-03-06T09:00Z",  # Fri
        "2026-03-07T18:00Z",  # Sat (cron)
        "2026-03-08T18:00Z",  # Sun (cron)
        "2026-03-09T09:00Z",  # Mon
    ]


# --- restarts and downtime -----------------------------------------------------------------


async def test_restart_at_the_same_instant_posts_nothing_new(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    first = await session(
        db,
        "2026-03-04T08:00:00Z",
        "/schedule add 09:00\n/schedule add 09:00 --window 90m\n/clock set 2026-03-04T09:00:00Z",
    )
    assert first.post_times() == ["2026-03-04T09:00Z", "2026-03-04T09:00Z"]
    for at in ("2026-03-04T09:00:00Z", "2026-03-04T09:30:00Z", "2026-03-04T10:15:00Z"):
        again = await session(db, at, "/schedule list")
        assert again.posts == [] and again.edits == [], at
    # The reveal still happens on time in the session that is up when it falls due.
    later = await session(db, "2026-03-04T10:00:00Z", "/clock advance 1h")
    assert [_z(e["at"]) for e in later.edits] == ["2026-03-04T10:30Z"]
    assert later.posts == []


async def test_a_lost_progress_mark_still_cannot_post_twice(tmp_path: Path) -> None:
    """A crash after the post but before ``handled_until`` was written: the post row's
    UNIQUE(schedule_id, occurrence) key alone keeps the restart from posting again."""
    db = tmp_path / "bot.sqlite3"
    first = await session(db, "2026-03-04T08:00:00Z", "/schedule add 09:00\n/clock advance 1h")
    assert first.post_times() == ["2026-03-04T09:00Z"]
    async with await open_database(db) as database, database.write() as conn:
        await conn.execute("UPDATE schedules SET handled_until = NULL")
    again = await session(db, "2026-03-04T09:10:00Z", "/clock advance 1m")
    assert again.posts == [] and again.edits == []


async def test_three_days_down_posts_at_most_one_late_question(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "bot.sqlite3"
    await session(db, "2026-03-02T08:00:00Z", "/schedule add 09:00 --window 1d")  # Monday
    with caplog.at_level(logging.INFO, logger="bot"):
        back = await session(db, "2026-03-05T10:00:00Z", "/clock advance 10m")  # Thursday
    assert back.post_times() == ["2026-03-05T10:00Z"]  # Thursday's, one hour late
    assert "missed by more than the 2:00:00 grace window" in caplog.text
    assert "posting occurrence Thu 2026-03-05 09:00 UTC late (1:00:00" in caplog.text
    # Tomorrow is on time again.
    tomorrow = await session(db, "2026-03-06T08:00:00Z", "/clock advance 2h")
    assert tomorrow.post_times() == ["2026-03-06T09:00Z"]


async def test_beyond_the_grace_window_nothing_is_posted(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    await session(db, "2026-03-02T08:00:00Z", "/schedule add 09:00 --window 1d")
    back = await session(db, "2026-03-05T11:00:01Z", "/clock advance 1h")
    assert back.posts == []
    nextday = await session(db, "2026-03-06T08:59:00Z", "/clock advance 1m")
    assert nextday.post_times() == ["2026-03-06T09:00Z"]


async def test_a_late_post_whose_window_is_already_over_is_not_posted(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    await session(db, "2026-03-02T08:00:00Z", "/schedule add 09:00 --window 30m")
    back = await session(db, "2026-03-02T09:45:00Z", "/clock advance 1m")
    assert back.posts == []


async def test_reveals_that_fell_due_while_down_happen_at_start_up(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    first = await session(
        db, "2026-03-04T08:00:00Z", "/schedule add 09:00 --window 1h\n/clock advance 90m"
    )
    assert first.post_times() == ["2026-03-04T09:00Z"] and first.edits == []
    back = await session(db, "2026-03-05T08:00:00Z", "/schedule list")
    assert [line["kind"] for line in back.lines] == ["edit", "reply"]  # before any command
    assert back.edits[0]["post_id"] == first.posts[0]["post_id"]
    assert "closed" in str(back.edits[0]["text"])


async def test_the_real_console_restarted_on_the_same_file(tmp_path: Path) -> None:
    """`studybot console --json --clock` twice on one file: posted once, even across a DST
    change during the downtime."""
    db = tmp_path / "bot.sqlite3"
    first = _console(
        db, "2026-03-28T07:00:00+01:00", "/schedule add 09:00 Europe/Berlin\n/clock advance 3h"
    )
    assert [_z(p["at"]) for p in first if p["kind"] == "post"] == ["2026-03-28T08:00Z"]
    again = _console(db, "2026-03-28T10:00:00+01:00", "/clock advance 1m")
    assert [p for p in again if p["kind"] == "post"] == []
    sunday = _console(db, "2026-03-29T08:30:00+02:00", "/clock advance 1h")  # after DST
    assert [_z(p["at"]) for p in sunday if p["kind"] == "post"] == ["2026-03-29T07:00Z"]
    edits = [line for line in sunday if line["kind"] == "edit"]
    assert len(edits) == 1  # Saturday's question closes when Sunday's posts
    assert [line["kind"] for line in sunday[:2]] == ["edit", "post"]


def _console(db: Path, clock: str, script: str) -> list[dict[str, object]]:
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "console", "--json", "--db", str(db),
         "--packs", str(TEST_PACKS), "--clock", clock],
        input=script, capture_output=True, text=True, timeout=120, check=False, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


# --- crash mid-send ------------------------------------------------------------------------


async def test_a_crash_before_the_platform_got_the_post_is_re_sent_once(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    await session(db, "2026-03-04T08:00:00Z", "/schedule add 09:00")
    crashed = await crashed_session(
        db, "2026-03-04T08:59:00Z", "/clock advance 1m", CrashingConsole
    )
    assert crashed.posts == []
    back = await session(db, "2026-03-04T09:05:00Z", "/clock advance 1m")
    assert back.post_times() == ["2026-03-04T09:05Z"]  # the same post, five minutes late
    assert back.posts[0]["post_id"] == 1
    again = await session(db, "2026-03-04T09:10:00Z", "/clock advance 1m")
    assert again.posts == []


async def test_re_sent_at_most_once_even_if_the_platform_had_it(tmp_path: Path) -> None:
    """The documented trade-off: if the crash came after the platform showed it, members see
    the same post twice (same post id, so answers still count once), never a third time."""
    db = tmp_path / "bot.sqlite3"
    await session(db, "2026-03-04T08:00:00Z", "/schedule add 09:00")
    shown = await crashed_session(
        db, "2026-03-04T08:59:00Z", "/clock advance 1m", SentThenCrashConsole
    )
    assert shown.post_times() == ["2026-03-04T09:00Z"]
    resent = await crashed_session(
        db, "2026-03-04T09:01:00Z", "/schedule list", SentThenCrashConsole
    )
    assert [p["post_id"] for p in resent.posts] == [shown.posts[0]["post_id"]]
    third = await session(db, "2026-03-04T09:02:00Z", "/clock advance 1m")
    assert third.posts == []
    async with await open_database(db) as database:
        closed = await database.fetchval("SELECT closed_at IS NOT NULL FROM posts WHERE id = 1")
    assert closed == 1  # given up on: closed quietly, so it is no channel's open question


async def test_a_post_the_platform_shows_after_all_is_adopted_not_re_sent(
    tmp_path: Path,
) -> None:
    db = tmp_path / "bot.sqlite3"
    FindingConsole.shown.clear()
    await session(db, "2026-03-04T08:00:00Z", "/schedule add 09:00 --window 1h")
    shown = await crashed_session(
        db, "2026-03-04T08:59:00Z", "/clock advance 1m", ShownThenCrashConsole
    )
    assert shown.post_times() == ["2026-03-04T09:00Z"]
    back = await session(db, "2026-03-04T09:01:00Z", "/clock advance 1h", console=FindingConsole)
    assert back.posts == []  # nothing sent twice
    [reveal] = back.edits  # and the adopted post is revealed in place at the window's end
    assert reveal["post_id"] == shown.posts[0]["post_id"]
    async with await open_database(db) as database:
        message = await database.fetchval("SELECT platform_message_id FROM posts WHERE id = 1")
    assert message == FindingConsole.shown[(shown.posts[0]["channel"], 1)]


async def test_an_unconfirmed_post_is_not_re_sent_after_the_grace_window(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    await session(db, "2026-03-04T08:00:00Z", "/schedule add 09:00")
    await crashed_session(db, "2026-03-04T08:59:00Z", "/clock advance 1m", CrashingConsole)
    back = await session(db, "2026-03-04T11:30:00Z", "/clock advance 1m")
    assert back.posts == [] and back.edits == []
    tomorrow = await session(db, "2026-03-05T08:59:00Z", "/clock advance 1m")
    assert tomorrow.post_times() == ["2026-03-05T09:00Z"]
    assert tomorrow.edits == []  # the unsent one is not "revealed" as a new message


async def test_a_failed_send_is_tried_once_more_a_minute_later(tmp_path: Path) -> None:
    run = await session(
        tmp_path / "bot.sqlite3",
        "2026-03-04T08:00:00Z",
        "/schedule add 09:00\n/clock advance 1h\n/clock advance 1m\n/clock advance 1d",
        console=FlakyConsole,
    )
    assert run.post_times() == ["2026-03-04T09:01Z", "2026-03-05T09:00Z"]


async def test_a_failure_between_inserting_and_sending_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The post row exists but rendering it failed once: the channel still gets its question."""
    real_draft = Posting.draft
    failures = [RuntimeError("the renderer hiccupped")]

    async def flaky_draft(self: Posting, *args: object, **kwargs: object) -> object:
        if failures:
            raise failures.pop()
        return await real_draft(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Posting, "draft", flaky_draft)
    run = await session(
        tmp_path / "bot.sqlite3",
        "2026-03-04T08:00:00Z",
        "/schedule add 09:00\n/clock advance 1h\n/clock advance 1m\n/clock advance 1d",
    )
    assert run.post_times() == ["2026-03-04T09:01Z", "2026-03-05T09:00Z"]


# --- answer windows ------------------------------------------------------------------------


async def test_until_next_reveals_the_previous_question_just_before_the_next(
    tmp_path: Path,
) -> None:
    run = await session(
        tmp_path / "bot.sqlite3",
        "2026-03-04T08:00:00Z",
        "/schedule add 09:00\n/clock advance 1h\n/answer A\n/clock advance 1d",
    )
    kinds = [line["kind"] for line in run.lines if line["kind"] in ("post", "edit")]
    assert kinds == ["post", "edit", "post"]
    first, edit, second = (line for line in run.lines if line["kind"] in ("post", "edit"))
    assert edit["post_id"] == first["post_id"] and edit["at"] == second["at"]
    assert "Answers close when the next question posts." in str(first["text"])
    assert "Closed with 1 answer" in str(edit["text"])


async def test_now_posts_at_once_and_closes_the_previous_until_next_question(
    tmp_path: Path,
) -> None:
    run = await session(
        tmp_path / "bot.sqlite3",
        "2026-03-04T08:00:00Z",
        "/schedule add 09:00 --mention @study-group\n/clock advance 1h\n/schedule now 1",
    )
    posts, edits = run.posts, run.edits
    assert [_z(p["at"]) for p in posts] == ["2026-03-04T09:00Z", "2026-03-04T09:00Z"]
    assert all(p["mention"] == "@study-group" for p in posts)
    assert str(posts[0]["text"]).startswith("@study-group\n\n")
    assert [e["post_id"] for e in edits] == [posts[0]["post_id"]]
    order = [line["kind"] for line in run.lines]
    assert order[-3:] == ["reply", "post", "edit"]


# --- admin commands with a running scheduler -----------------------------------------------


async def test_skip_pause_resume_and_remove_change_what_posts(tmp_path: Path) -> None:
    run = await session(
        tmp_path / "bot.sqlite3",
        "2026-03-02T08:00:00Z",  # Monday
        """\
/schedule add 09:00 --window 1h
/schedule skip 1
/clock advance 26h
/schedule pause 1
/clock advance 2d
/schedule resume 1
/clock advance 1d
/schedule remove 1
/clock advance 2d
""",
    )
    # Monday skipped; Tuesday posted; paused at Tuesday 10:00, so Wednesday and Thursday are
    # not posted (nor made up when resumed on Thursday at 10:00); Friday posted; removed on
    # Friday at 10:00, so nothing on the weekend.
    assert run.post_times() == ["2026-03-03T09:00Z", "2026-03-06T09:00Z"]


async def test_members_are_refused_and_nothing_changes(tmp_path: Path) -> None:
    run = await session(
        tmp_path / "bot.sqlite3",
        "2026-03-04T08:00:00Z",
        """\
/schedule add 09:00 --window 1h
/as bob
/schedule add 10:00
/schedule pause 1
/schedule remove 1
/schedule now 1
/schedule list
/clock advance 2h
""",
    )
    replies = run.replies()
    refused = [r for r in replies if r.startswith("Only admins can change schedules")]
    assert len(refused) == 4
    listing = next(r for r in replies if r.startswith("🗓️ Schedules"))
    assert "#1 09:00 UTC daily" in listing and "#2" not in listing
    assert run.post_times() == ["2026-03-04T09:00Z"]


async def test_a_bad_spec_is_answered_with_field_reason_and_example(tmp_path: Path) -> None:
    run = await session(
        tmp_path / "bot.sqlite3",
        "2026-03-04T08:00:00Z",
        "/schedule add 25:00\n/schedule add 09:00 Europe/Berln\n/schedule frob",
    )
    # In the console a spec that does not parse is a usage error (kind "error").
    assert [str(line["text"]) for line in run.of("error")] == [
        "usage: /schedule add [TIME] [TZ] [DAYS] [options]: "
        "time: hour 25 in '25:00' is out of range 0-23 (example: /schedule add 09:00 "
        "Europe/Berlin weekdays)",
        "usage: /schedule add [TIME] [TZ] [DAYS] [options]: "
        "timezone: unknown timezone 'Europe/Berln' — did you mean Europe/Berlin? (example: "
        "/schedule add 09:00 Europe/Berlin weekdays)",
        "usage: /schedule add|list|remove|pause|resume|skip|now|preview ...: "
        "`frob` is not a schedule command; use add, list, remove, pause, resume, skip, now or "
        "preview.",
    ]
    assert run.replies() == []


async def test_concurrent_edits_leave_the_scheduler_and_the_database_agreeing(
    timed: SchedulerParts, tmp_path: Path, db: Database, service: Services, clock: SimulatedClock
) -> None:
    posted: list[tuple[str, int | None]] = []

    class Recorder:
        async def send_post(self, channel: str, message: Message) -> str:
            posted.append((channel, message.post_id))
            return f"m{message.post_id}"

        async def edit_post(self, channel: str, message_id: str, message: Message) -> None:
            pass

    admins = [member("root", admin=True, channel=f"c{i}") for i in range(8)]
    async with timer_loop(timed, Recorder(), clock, GRACE, concurrency=4).running() as sched:
        for ctx in admins:
            for hour in (10, 11, 12):
                await schedule_command(service, ctx, "add", [f"{hour}:00", "--window", "30m"])
        verbs = ["pause", "remove", "resume", "skip", "pause", "resume"]
        calls = [
            schedule_command(service, admins[i % 8], verb, [str(i)])
            for i in range(1, 25)
            for verb in random.Random(i).sample(verbs, len(verbs))
        ]
        calls += [schedule_command(service, ctx, "add", ["10:30"]) for ctx in admins]
        await asyncio.gather(*calls, return_exceptions=True)
        await sched.settle()
        rows = await db.fetchall(
            "SELECT id FROM schedules WHERE deleted_at IS NULL AND paused = 0 ORDER BY id"
        )
        active = {int(r[0]) for r in rows}
        assert active  # some survive whatever the order
        await sched.advance(clock, clock.now() + timedelta(days=1))
    by_schedule = await db.fetchall(
        "SELECT schedule_id, count(*) FROM posts GROUP BY schedule_id ORDER BY schedule_id"
    )
    counts = {int(r[0]): int(r[1]) for r in by_schedule}
    # Every active schedule posted exactly once today (10:00 to 12:00); nothing else posted.
    assert counts == dict.fromkeys(active, 1)
    assert len(posted) == len(active)


async def test_one_scheduler_per_service(
    timed: SchedulerParts, service: Services, clock: SimulatedClock
) -> None:
    console = ConsoleAdapter(service, clock, out=io.StringIO())
    async with timer_loop(timed, console, clock, GRACE).running() as first:
        with pytest.raises(RuntimeError, match="already running"):
            await first.start()
        with pytest.raises(RuntimeError, match="another scheduler"):
            await timer_loop(timed, console, clock, GRACE).start()


async def test_an_idle_scheduler_sleeps_without_waking(
    timed: SchedulerParts, service: Services, clock: SimulatedClock
) -> None:
    console = ConsoleAdapter(service, clock, out=io.StringIO())
    async with timer_loop(timed, console, clock, GRACE).running() as sched:
        await schedule_command(service, member("root", admin=True), "add", ["10:00"])
        await sched.settle()
        passes = sched.passes
        await asyncio.sleep(0.2)  # nothing is due, nothing changes: no pass runs
        assert sched.passes == passes
        assert sched.next_due() == utc("2026-03-04T10:00:00Z")


# --- many at once --------------------------------------------------------------------------


class Recorder:
    """A gateway that only records what was posted where."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, str | None]] = []  # (channel, question id)

    async def send_post(self, channel: str, message: Message) -> str:
        self.posts.append((channel, message.question_id))
        return f"m{message.post_id}"

    async def edit_post(self, channel: str, message_id: str, message: Message) -> None:
        pass


async def test_a_channel_due_twice_at_once_gets_two_different_questions(
    timed: SchedulerParts, service: Services, clock: SimulatedClock
) -> None:
    gateway = Recorder()
    async with timer_loop(timed, gateway, clock, GRACE, concurrency=4).running() as sched:
        for i in range(10):
            for hours in (1, 2):  # two hard questions exist: each channel must get both
                await schedule_command(
                    service,  # (not identical: those are refused)
                    member("root", admin=True, channel=f"c{i}"),
                    "add",
                    ["10:00", "--difficulty", "hard", "--window", f"{hours}h"],
                )
        await sched.advance(clock, utc("2026-03-04T10:00:00Z"))
    assert len(gateway.posts) == 20
    for i in range(10):
        assert sorted(q for c, q in gateway.posts if c == f"c{i}") == ["d-mc-3", "d-prac-1"]


async def test_two_due_at_once_in_a_channel_do_not_repeat_each_other(
    timed: SchedulerParts, service: Services, clock: SimulatedClock
) -> None:
    """The batch's own first pick counts as the channel's latest for its second pick."""
    root = member("root", admin=True)
    for _ in range(3):  # d-mc-3 (hard, retain-graph) asked three times; d-prac-1 never
        draft = await service.quiz.post_question(root, tags=["retain-graph"])
        assert draft.message.question_id == "d-mc-3"
    gateway = Recorder()
    async with timer_loop(timed, gateway, clock, GRACE).running() as sched:
        for window in ([], ["--window", "1h"]):  # two alike, not identical: those are refused
            await schedule_command(service, root, "add", ["10:00", "--difficulty", "hard", *window])
        await sched.advance(clock, utc("2026-03-04T10:00:00Z"))
    assert sorted(q for _, q in gateway.posts) == ["d-mc-3", "d-prac-1"]


async def test_a_daily_schedule_never_posts_the_same_question_twice_in_a_row(
    timed: SchedulerParts, service: Services, clock: SimulatedClock
) -> None:
    gateway = Recorder()
    async with timer_loop(timed, gateway, clock, GRACE).running() as sched:
        await schedule_command(
            service, member("root", admin=True), "add", ["10:00", "--difficulty", "hard"]
        )
        first = await service.quiz.post_question(
            member("root"), difficulty="hard"
        )  # asked at 09:00
        await sched.advance(clock, utc("2026-03-24T10:00:00Z"))
    asked = [first.message.question_id, *(q for _, q in gateway.posts)]
    assert len(asked) == 22 and sorted(set(asked)) == ["d-mc-3", "d-prac-1"]
    assert all(a != b for a, b in itertools.pairwise(asked)), asked


async def test_a_prepared_batch_rechecks_channels_that_posted_since(
    timed: SchedulerParts,
    service: Services,
    clock: SimulatedClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Questions for a large batch are picked ahead of time; a channel that gets another
    post in between is picked for again, so the no-repeat rule still holds."""
    gateway = Recorder()
    admins = [member("root", admin=True, channel=f"c{i}") for i in range(20)]
    sched = timer_loop(
        timed, gateway, clock, GRACE, prepare_lead=timedelta(minutes=10), prepare_min=20
    )
    async with sched.running():
        for ctx in admins:
            await schedule_command(service, ctx, "add", ["10:00", "--difficulty", "hard"])
        with caplog.at_level(logging.INFO, logger="bot"):
            await sched.advance(clock, utc("2026-03-04T09:55:00Z"))
        assert "prepared 20 question(s) due at 2026-03-04T10:00:00+00:00" in caplog.text
        asked = {}
        for ctx in admins[:10]:  # half the channels get an ad-hoc hard question meanwhile
            asked[ctx.channel] = (
                await service.quiz.post_question(ctx, difficulty="hard")
            ).message.question_id
        await sched.advance(clock, utc("2026-03-04T10:00:00Z"))
    assert len(gateway.posts) == 20
    for channel, question in gateway.posts:
        if channel in asked:
            assert question != asked[channel], channel


async def test_a_schedule_posts_no_open_prompt_unless_asked_to(
    timed: SchedulerParts, service: Services, clock: SimulatedClock
) -> None:
    """A day whose only question nobody can answer broke every streak (issue 17)."""
    gateway = Recorder()
    async with timer_loop(timed, gateway, clock, GRACE).running() as sched:
        await schedule_command(service, member("root", admin=True), "add", ["10:00"])
        await schedule_command(
            service, member("root", admin=True, channel="talk"), "add", ["10:00", "--kinds", "open"]
        )
        await sched.advance(clock, utc("2026-03-24T10:00:00Z"))
    general = {q for c, q in gateway.posts if c == "general"}
    talk = {q for c, q in gateway.posts if c == "talk"}
    assert general == {"d-flash-1", "d-mc-1", "d-prac-1", "d-mc-2", "d-mc-3"}
    assert talk == {"d-open-1"}
