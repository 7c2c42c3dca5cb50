"""Schedule commands through the shared text grammar, as the console and Slack call them, on a real
SQLite file; and the pure catch-up rule that decides what posts after downtime.

The clock starts on Wednesday 2026-03-04 09:00 UTC (tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.adapters.text_commands import parse_schedule_args
from bot.core.clock import SimulatedClock
from bot.core.errors import BadInput, Forbidden, NotFound
from bot.core.schedule_spec import (
    ScheduleSpec,
    build_spec,
    decode_spec,
    encode_spec,
    next_occurrence,
    occurrences,
)
from bot.services.bundle import Services
from bot.services.schedule_book import (
    MAX_SCHEDULES_PER_CHANNEL,
    CatchUp,
    ScheduleReply,
    catch_up,
)
from bot.services.scheduled_sources import SchedulerParts
from bot.storage.database import Database
from tests.helpers import member, schedule_command

ADMIN = member("root", admin=True)
ANN = member("ann")
ELSEWHERE = member("eve", admin=True, workspace="other-ws")


def text(reply: ScheduleReply) -> str:
    return reply.message.plain_text()


async def add(service: Services, *args: str, who=ADMIN) -> int:  # type: ignore[no-untyped-def]
    reply = await schedule_command(service, who, "add", list(args))
    assert reply.message.ephemeral and reply.draft is None
    body = text(reply)
    assert body.startswith("✅ Schedule #"), body
    return int(body.split("#", 1)[1].split(" ", 1)[0])


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


# --- add and list --------------------------------------------------------------------------


async def test_add_confirms_with_the_description_and_first_question(service: Services) -> None:
    reply = await schedule_command(
        service,
        ADMIN,
        "add",
        ["09:00", "Europe/Berlin", "weekdays", "--pack", "mini", "--window", "90m"],
    )
    assert text(reply) == (
        "✅ Schedule #1 added in #general: 09:00 Europe/Berlin on weekdays, pack mini, answers close after "
        "1h30m.\nFirst question: Thu 2026-03-05 09:00 CET."
    )


async def test_add_today_if_the_time_is_still_ahead(service: Services) -> None:
    reply = await schedule_command(service, ADMIN, "add", ["09:01"])  # workspace default: UTC
    assert text(reply).endswith("First question: Wed 2026-03-04 09:01 UTC.")


async def test_list_is_for_everyone_and_shows_next_times(service: Services) -> None:
    first = await add(service, "09:00", "Europe/Berlin", "weekdays")
    second = await add(service, "18:30", "America/New_York", "mon,wed,fri", "--difficulty", "easy")
    await schedule_command(service, ADMIN, "pause", [str(second)])
    reply = await schedule_command(service, ANN, "list", [])
    assert reply.message.ephemeral
    assert text(reply) == (
        "🗓️ Schedules in #general\n\n"
        f"#{first} 09:00 Europe/Berlin on weekdays, answers close when the next question "
        "posts — next: Thu 2026-03-05 09:00 CET\n"
        f"#{second} 18:30 America/New_York on mon,wed,fri, easy, answers close when the next "
        "question posts — ⏸️ paused"
    )


async def test_list_of_an_empty_channel_says_how_to_add(service: Services) -> None:
    body = text(await schedule_command(service, ANN, "list", []))
    assert "No schedules in #general yet" in body and "schedule add 09:00" in body


async def test_schedules_belong_to_their_channel(service: Services) -> None:
    await add(service, "09:00")
    other = member("root", admin=True, channel="random")
    assert "No schedules in #random" in text(await schedule_command(service, other, "list", []))


async def test_a_bad_spec_names_the_field_the_reason_and_an_example(service: Services) -> None:
    with pytest.raises(BadInput) as caught:
        await schedule_command(service, ADMIN, "add", ["09:00", "Europe/Berln"])
    assert str(caught.value) == (
        "timezone: unknown timezone 'Europe/Berln' — did you mean Europe/Berlin? "
        "(example: /schedule add 09:00 Europe/Berlin weekdays)"
    )
    with pytest.raises(BadInput, match=r"^days: unknown day 'wendesday' — did you mean wednesday"):
        await schedule_command(service, ADMIN, "add", ["09:00", "wendesday"])
    with pytest.raises(BadInput, match=r"^time: missing TIME"):
        await schedule_command(service, ADMIN, "add", [])


async def test_add_refuses_filters_that_could_never_post(service: Services) -> None:
    with pytest.raises(BadInput, match=r"^pack: no pack called 'mimi' — did you mean mini\?"):
        await schedule_command(service, ADMIN, "add", ["09:00", "--pack", "mimi"])
    with pytest.raises(BadInput, match=r"^filters: no questions match pack mini, tag nope"):
        await schedule_command(service, ADMIN, "add", ["09:00", "--pack", "mini", "--tag", "nope"])
    assert "No schedules" in text(await schedule_command(service, ADMIN, "list", []))


async def test_a_channel_has_at_most_so_many_schedules(
    timed: SchedulerParts, service: Services
) -> None:
    await asyncio.gather(
        *(schedule_command(service, ADMIN, "add", [f"{h:02d}:00"]) for h in range(20)),
        *(schedule_command(service, ADMIN, "add", [f"{h:02d}:30"]) for h in range(10)),
        return_exceptions=True,
    )
    rows = await timed.db.fetchval("SELECT count(*) FROM schedules WHERE deleted_at IS NULL")
    assert rows == MAX_SCHEDULES_PER_CHANNEL
    with pytest.raises(BadInput, match="already has 25 schedules"):
        await schedule_command(service, ADMIN, "add", ["23:59"])


async def test_the_spec_is_stored_as_readable_json(service: Services, db: Database) -> None:
    await add(service, "9am", "europe/berlin", "mon-fri", "--tag", "autograd", "--window", "1h")
    stored = json.loads(await db.fetchval("SELECT spec FROM schedules"))
    assert stored == {
        "time": "09:00",
        "timezone": "Europe/Berlin",
        "days": "weekdays",
        "cron": None,
        "pack": None,
        "tags": ["autograd"],
        "difficulty": None,
        "window": 3600,
        "mention": None,
    }


# --- permissions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("verb", "args"),
    [
        ("add", ["09:00"]),
        ("remove", ["1"]),
        ("pause", ["1"]),
        ("resume", ["1"]),
        ("skip", ["1"]),
        ("now", ["1"]),
    ],
)
async def test_members_who_are_not_admins_cannot_change_schedules(
    service: Services, verb: str, args: list[str]
) -> None:
    await add(service, "10:00")
    with pytest.raises(Forbidden, match=r"^Only admins can change schedules"):
        await schedule_command(service, ANN, verb, args)
    body = text(await schedule_command(service, ANN, "list", []))
    assert "#1 10:00 UTC daily" in body and "paused" not in body  # nothing changed


async def test_everyone_may_preview(service: Services) -> None:
    await add(service, "10:00")
    assert "Wed 2026-03-04 10:00 UTC" in text(
        await schedule_command(service, ANN, "preview", ["1"])
    )


async def test_a_schedule_of_another_workspace_is_not_found(service: Services) -> None:
    await add(service, "10:00")
    for verb in ("remove", "pause", "resume", "skip", "now", "preview"):
        with pytest.raises(NotFound, match=r"There is no schedule #1 here"):
            await schedule_command(service, ELSEWHERE, verb, ["1"])
    with pytest.raises(NotFound):
        await schedule_command(service, ADMIN, "pause", ["99"])


async def test_bad_ids_verbs_and_counts(service: Services) -> None:
    await add(service, "10:00")
    with pytest.raises(BadInput, match="`one` is not a schedule id"):
        await schedule_command(service, ADMIN, "pause", ["one"])
    # The table's usage line for the verb, and what is missing.
    with pytest.raises(BadInput, match=r"usage: /schedule remove ID \[--channel NAME\]: give one"):
        await schedule_command(service, ADMIN, "remove", [])
    with pytest.raises(BadInput, match="Did you mean `schedule pause`"):
        await schedule_command(service, ADMIN, "puase", ["1"])
    with pytest.raises(BadInput, match="from 1 to 25"):
        await schedule_command(service, ADMIN, "preview", ["1", "100"])
    # `#1` is accepted as well as `1`
    assert "paused" in text(await schedule_command(service, ADMIN, "pause", ["#1"]))


# --- pause, resume, skip, remove, preview --------------------------------------------------


async def test_preview_in_the_schedule_timezone_across_dst(
    service: Services, clock: SimulatedClock
) -> None:
    clock.set(utc(2026, 3, 27, 12))
    await add(service, "02:30", "Europe/Berlin")
    body = text(await schedule_command(service, ANN, "preview", ["1", "3"]))
    assert body == (
        "🗓️ Next 3 of schedule #1 in #general (Europe/Berlin)\n\n"
        "• Sat 2026-03-28 02:30 CET\n"
        "• Sun 2026-03-29 03:30 CEST (shifted: clocks skip 02:30 on 2026-03-29)\n"
        "• Mon 2026-03-30 02:30 CEST"
    )


async def test_skip_skips_the_next_occurrence_and_again_the_one_after(
    service: Services,
) -> None:
    await add(service, "10:00")
    first = text(await schedule_command(service, ADMIN, "skip", ["1"]))
    assert first == (
        "⏭️ Schedule #1 in #general skips Wed 2026-03-04 10:00 UTC (UTC). "
        "Next question: Thu 2026-03-05 10:00 UTC."
    )
    second = text(await schedule_command(service, ADMIN, "skip", ["1"]))
    assert "skips Thu 2026-03-05 10:00 UTC" in second and "Next question: Fri" in second
    assert "• Fri 2026-03-06 10:00 UTC" in text(
        await schedule_command(service, ANN, "preview", ["1", "1"])
    )


async def test_pause_then_resume_posts_from_now_on(
    service: Services, clock: SimulatedClock
) -> None:
    await add(service, "10:00")
    assert "paused: nothing posts until `schedule resume 1`" in text(
        await schedule_command(service, ADMIN, "pause", ["1"])
    )
    preview = text(await schedule_command(service, ANN, "preview", ["1", "1"]))
    assert preview.startswith(
        "🗓️ Next 1 of schedule #1 in #general (UTC)\n\nPaused: these are the times"
    )
    clock.advance(timedelta(days=3, hours=2))  # Sat 11:00
    resumed = text(await schedule_command(service, ADMIN, "resume", ["1"]))
    assert resumed.endswith("Next question: Sun 2026-03-08 10:00 UTC.")


async def test_remove_hides_the_schedule_and_later_commands_do_not_find_it(
    service: Services, db: Database
) -> None:
    await add(service, "10:00")
    assert text(await schedule_command(service, ADMIN, "remove", ["1"])) == (
        "🗑️ Schedule #1 in #general removed; it will not post again."
    )
    with pytest.raises(NotFound):
        await schedule_command(service, ADMIN, "remove", ["1"])
    assert "No schedules" in text(await schedule_command(service, ADMIN, "list", []))
    assert await db.fetchval("SELECT deleted_at IS NOT NULL FROM schedules WHERE id = 1") == 1


async def test_a_schedule_that_no_longer_reads_can_still_be_removed(
    service: Services, db: Database
) -> None:
    await add(service, "10:00", "Europe/Berlin")
    spec = json.loads(await db.fetchval("SELECT spec FROM schedules WHERE id = 1"))
    spec["timezone"] = "Mars/Olympus"  # e.g. a zone dropped from the timezone data
    async with db.write() as conn:
        await conn.execute("UPDATE schedules SET spec = ? WHERE id = 1", (json.dumps(spec),))
    service.schedules.changed(1)
    listed = text(await schedule_command(service, ANN, "list", []))
    assert "#1 — cannot be read any more; remove it (`schedule remove 1`)" in listed
    with pytest.raises(BadInput, match="cannot be read any more"):
        await schedule_command(service, ADMIN, "pause", ["1"])
    removed = text(await schedule_command(service, ADMIN, "remove", ["1"]))
    assert removed == "🗑️ Schedule #1 in #general removed; it will not post again."
    assert "No schedules" in text(await schedule_command(service, ADMIN, "list", []))


# --- now -----------------------------------------------------------------------------------


async def test_now_returns_a_draft_with_the_schedule_filters_and_mention(
    service: Services, clock: SimulatedClock
) -> None:
    await add(
        service, "10:00", "--pack", "mini", "--difficulty", "medium", "--window", "30m",
        "--mention", "@study-group",
    )  # fmt: skip
    reply = await schedule_command(service, ADMIN, "now", ["1"])
    assert text(reply) == "📨 Posting a question from schedule #1 in #general now."
    draft = reply.draft
    assert draft is not None and draft.channel == "general"
    assert draft.message.question_id == "d-mc-1" and draft.message.mention == "@study-group"
    assert draft.message.plain_text().startswith("@study-group\n\nMultiple choice")
    assert draft.post.schedule_id == 1 and draft.post.requested_by is None
    assert draft.post.closes_at == clock.now() + timedelta(minutes=30)


async def test_now_closes_the_previous_until_next_post(
    timed: SchedulerParts, service: Services, clock: SimulatedClock
) -> None:
    await add(service, "10:00")
    first = (await schedule_command(service, ADMIN, "now", ["1"])).draft
    assert first is not None and first.post.closes_at is None
    assert "Answers close when the next question posts." in first.message.plain_text()
    clock.advance(timedelta(minutes=5))
    await schedule_command(service, ADMIN, "now", ["1"])
    assert [p.id for p in await timed.posts.due_to_close(clock.now())] == [first.post.id]


# --- concurrent edits ----------------------------------------------------------------------


async def test_concurrent_edits_leave_one_consistent_state(service: Services, db: Database) -> None:
    ids = [await add(service, f"{h:02d}:00") for h in range(6)]
    calls = []
    for schedule_id in ids:
        for verb in ("pause", "remove", "resume", "skip", "pause"):
            calls.append(schedule_command(service, ADMIN, verb, [str(schedule_id)]))
    calls += [schedule_command(service, ADMIN, "add", [f"{h:02d}:15"]) for h in range(6)]
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert all(isinstance(r, ScheduleReply | NotFound) for r in results), results
    # Whatever the interleaving: the removed ones are gone, the added ones are all there.
    rows = await db.fetchall("SELECT id, paused, deleted_at FROM schedules ORDER BY id")
    assert len(rows) == 12
    removed = {int(r[0]) for r in rows if r[2] is not None}
    assert removed == set(ids)
    listing = text(await schedule_command(service, ADMIN, "list", [])).split("\n\n", 1)[1]
    assert sorted(line.split(" ")[1] for line in listing.splitlines()) == [
        f"{h:02d}:15" for h in range(6)
    ]
    assert "paused" not in listing


# --- the stored spec -----------------------------------------------------------------------


_SPECS = st.builds(
    lambda hour, minute, tz, days, window, tags, mention: build_spec(
        time=f"{hour:02d}:{minute:02d}",
        timezone=tz,
        days=days,
        window=window,
        tags=tags,
        mention=mention,
    ),
    st.integers(0, 23),
    st.integers(0, 59),
    st.sampled_from(["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"]),
    st.sampled_from(["daily", "weekdays", "weekends", "mon,wed,fri", "sun"]),
    st.sampled_from([None, "1m", "90m", "1d", "7d"]),
    st.lists(st.sampled_from(["autograd", "leaf", "tensors"]), max_size=2),
    st.sampled_from([None, "@study-group", "<@&123>"]),
)


@given(_SPECS)
def test_property_stored_spec_round_trips(spec: ScheduleSpec) -> None:
    assert decode_spec(encode_spec(spec)) == spec


def test_a_cron_spec_round_trips() -> None:
    spec = parse_schedule_args(["--cron", "30 8,17 * * 1-5", "Europe/Berlin"], "UTC")
    assert decode_spec(encode_spec(spec)) == spec


# --- catch-up after downtime (pure) --------------------------------------------------------

DAILY_9 = build_spec(time="09:00", timezone="UTC")
GRACE = timedelta(hours=2)


def test_catch_up_nothing_due() -> None:
    plan = catch_up(DAILY_9, utc(2026, 3, 4, 9), utc(2026, 3, 5, 8, 59), GRACE)
    assert plan == CatchUp(None, upcoming=utc(2026, 3, 5, 9))


def test_catch_up_on_time_and_a_little_late() -> None:
    on_time = catch_up(DAILY_9, utc(2026, 3, 4, 9), utc(2026, 3, 5, 9), GRACE)
    assert on_time == CatchUp(utc(2026, 3, 5, 9), upcoming=utc(2026, 3, 6, 9))
    late = catch_up(DAILY_9, utc(2026, 3, 4, 9), utc(2026, 3, 5, 11), GRACE)
    assert late.post == utc(2026, 3, 5, 9)  # exactly the grace: still posts


def test_catch_up_too_late_posts_nothing() -> None:
    late = catch_up(DAILY_9, utc(2026, 3, 4, 9), utc(2026, 3, 5, 11, 0, 1), GRACE)
    assert late == CatchUp(None, (), utc(2026, 3, 5, 9), utc(2026, 3, 6, 9))


def test_catch_up_after_three_days_posts_at_most_the_latest() -> None:
    down = catch_up(DAILY_9, utc(2026, 3, 1, 9), utc(2026, 3, 4, 10), GRACE)
    assert down == CatchUp(utc(2026, 3, 4, 9), (), utc(2026, 3, 2, 9), utc(2026, 3, 5, 9))


def test_catch_up_with_several_in_the_grace_window_posts_only_the_latest() -> None:
    hourly = parse_schedule_args(["--cron", "0 * * * *"], "UTC")
    plan = catch_up(hourly, utc(2026, 3, 4, 5), utc(2026, 3, 4, 9, 30), GRACE)
    assert plan.post == utc(2026, 3, 4, 9)
    assert plan.skipped == (utc(2026, 3, 4, 8),)
    assert plan.too_late_since == utc(2026, 3, 4, 6)
    assert plan.upcoming == utc(2026, 3, 4, 10)


def test_catch_up_a_tiny_grace_still_counts_the_loop_waking_late_as_on_time() -> None:
    plan = catch_up(DAILY_9, utc(2026, 3, 4, 9), utc(2026, 3, 5, 9, 0, 2), timedelta(0))
    assert plan.post == utc(2026, 3, 5, 9)


def test_catch_up_uses_known_occurrences_as_given() -> None:
    """The scheduler passes what it computed ahead; the answer is the same as without."""
    after, now = utc(2026, 3, 4, 9), utc(2026, 3, 5, 9)
    known = catch_up(
        DAILY_9, after, now, GRACE, first=utc(2026, 3, 5, 9), following=utc(2026, 3, 6, 9)
    )
    assert known == catch_up(DAILY_9, after, now, GRACE)


@given(
    st.integers(0, 60 * 24 * 9),
    st.integers(0, 60 * 24 * 4),
    st.sampled_from([timedelta(0), timedelta(minutes=30), GRACE, timedelta(days=1)]),
)
def test_property_catch_up_posts_at_most_one_and_only_within_grace(
    after_minutes: int, down_minutes: int, grace: timedelta
) -> None:
    spec = build_spec(time="09:00", timezone="Europe/Berlin", days="weekdays")
    after = utc(2026, 3, 23) + timedelta(minutes=after_minutes)
    now = after + timedelta(minutes=down_minutes)
    plan = catch_up(spec, after, now, grace)
    due = [o for o in occurrences(spec, after, 40) if o <= now]
    assert plan.upcoming == next_occurrence(spec, now)
    if plan.post is None:
        assert not due or now - due[-1] > max(grace, timedelta(minutes=1))
    else:
        assert plan.post == due[-1] and now - plan.post <= max(grace, timedelta(minutes=1))
        assert set(plan.skipped) <= set(due[:-1])


# --- ids act on this channel; identical schedules are refused (issue 17) ----------------------

TORCH_HELP = member("root", admin=True, channel="torch-help")


@pytest.mark.parametrize("verb", ["remove", "pause", "resume", "skip", "now", "preview"])
async def test_an_id_from_another_channel_is_refused_and_names_the_owner(
    service: Services, verb: str
) -> None:
    schedule_id = await add(service, "09:00", "Europe/Berlin")  # in #general
    with pytest.raises(BadInput) as info:
        await schedule_command(service, TORCH_HELP, verb, [str(schedule_id)])
    assert str(info.value) == (
        f"Schedule #{schedule_id} posts in #general, not in this channel. Run "
        f"`schedule {verb} {schedule_id}` in #general, or name that channel: "
        f"`schedule {verb} {schedule_id} --channel general`."
    )
    listed = text(await schedule_command(service, ADMIN, "list", []))
    assert f"#{schedule_id}" in listed and "paused" not in listed  # untouched


async def test_naming_the_channel_acts_on_its_schedule_and_the_reply_says_where(
    service: Services,
) -> None:
    schedule_id = await add(service, "09:00", "Europe/Berlin")
    reply = text(
        await schedule_command(
            service, TORCH_HELP, "remove", [str(schedule_id), "--channel", "#general"]
        )
    )
    assert reply == f"🗑️ Schedule #{schedule_id} in #general removed; it will not post again."
    assert "No schedules in #general" in text(await schedule_command(service, ADMIN, "list", []))


async def test_an_identical_schedule_is_refused_with_the_existing_id(
    service: Services,
) -> None:
    first = await add(service, "09:00", "Europe/Berlin")
    with pytest.raises(BadInput) as info:
        await schedule_command(service, ADMIN, "add", ["09:00", "Europe/Berlin"])
    assert str(info.value).startswith(f"#general already has this schedule: #{first} (09:00")
    listed = text(await schedule_command(service, ADMIN, "list", []))
    assert [line for line in listed.splitlines() if line.startswith("#")] == [
        line for line in listed.splitlines() if line.startswith(f"#{first} ")
    ]
    # The same schedule in another channel is a different schedule.
    await schedule_command(service, TORCH_HELP, "add", ["09:00", "Europe/Berlin"])


async def test_a_schedule_posting_within_a_minute_of_another_is_added_with_a_warning(
    service: Services,
) -> None:
    first = await add(service, "09:00", "Europe/Berlin")
    reply = text(
        await schedule_command(service, ADMIN, "add", ["09:00", "Europe/Berlin", "weekdays"])
    )
    assert reply.startswith("✅ Schedule #")
    assert f"⚠️ It posts within a minute of schedule #{first}" in reply
    apart = text(await schedule_command(service, ADMIN, "add", ["09:05", "Europe/Berlin"]))
    assert "⚠️" not in apart


async def test_a_legacy_zone_is_accepted_with_a_warning_naming_the_city_zone(
    service: Services,
) -> None:
    reply = text(await schedule_command(service, ADMIN, "add", ["09:00", "EST"]))
    assert reply.startswith("✅ Schedule #")
    assert "⚠️ EST is a legacy zone name" in reply and "use America/New_York" in reply
    gmt = text(await schedule_command(service, ADMIN, "add", ["10:00", "Etc/GMT+5"]))
    assert "Etc/GMT+5 is UTC-5" in gmt
    berlin = text(await schedule_command(service, ADMIN, "add", ["11:00", "Europe/Berlin"]))
    assert "⚠️" not in berlin
