"""Schedule specs: parsing every accepted form and every error, and next occurrences in local
time across DST changes.

Expected instants are written out by hand in UTC (Berlin is UTC+1 in winter and UTC+2 in
summer; New York UTC-5 and UTC-4), never computed with the code under test.
"""

from __future__ import annotations

import io
import json
import struct
from datetime import UTC, datetime, time, timedelta
from functools import cache
from itertools import pairwise
from zoneinfo import ZoneInfo, available_timezones

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bot.adapters.text_commands import parse_schedule_args, spec_words, split_args
from bot.core.cron import parse_cron
from bot.core.schedule_spec import (
    DIFFICULTIES,
    DaySpec,
    ScheduleError,
    ScheduleForm,
    ScheduleSpec,
    build_spec,
    canonical_timezone,
    decode_spec,
    encode_spec,
    next_occurrence,
    occurrence_key,
    occurrences,
    preview,
)
from bot.questions.schema import Difficulty
from tests.dst_weeks import DstWeek, dst_weeks


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, us: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, us, tzinfo=UTC)


def spec_of(*args: str, default_timezone: str = "UTC") -> ScheduleSpec:
    return parse_schedule_args(list(args), default_timezone)


def error_of(*args: str, default_timezone: str = "UTC") -> ScheduleError:
    with pytest.raises(ScheduleError) as caught:
        parse_schedule_args(list(args), default_timezone)
    return caught.value


# --- times ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("9:00", time(9, 0)),
        ("09:00", time(9, 0)),
        ("21:30", time(21, 30)),
        ("0:05", time(0, 5)),
        ("23:59", time(23, 59)),
        ("9am", time(9, 0)),
        ("9AM", time(9, 0)),
        ("9:30pm", time(21, 30)),
        ("12am", time(0, 0)),
        ("12:15am", time(0, 15)),
        ("12pm", time(12, 0)),
        ("11:59pm", time(23, 59)),
    ],
)
def test_accepted_time_forms(text: str, expected: time) -> None:
    assert spec_of(text).time == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("24:00", "hour 24 in '24:00' is out of range 0-23"),
        ("9:60", "minute 60 in '9:60' is out of range 00-59"),
        ("13pm", "hour 13 in '13pm' is out of range 1-12 for am/pm"),
        ("0am", "hour 0 in '0am' is out of range 1-12 for am/pm"),
        ("9", "'9' is not a time"),
        ("0900", "'0900' is not a time"),
        ("9:5", "'9:5' is not a time"),
        ("9:00:30", "'9:00:30' is not a time"),
        ("9.30", "'9.30' is not a time"),
    ],
)
def test_time_errors(text: str, reason: str) -> None:
    error = error_of(text)
    assert error.field == "time"
    assert reason in error.reason
    assert error.example == "/schedule add 09:00 Europe/Berlin weekdays"


def test_missing_time() -> None:
    error = error_of()
    assert (error.field, error.reason) == ("time", "missing TIME (or a --cron expression)")
    assert error_of("Europe/Berlin", "weekdays").field == "time"


def test_time_objects_must_be_naive_whole_minutes() -> None:
    assert build_spec(time=time(7, 45), timezone="UTC").time == time(7, 45)
    with pytest.raises(ScheduleError, match="drop the seconds"):
        build_spec(time=time(7, 45, 10), timezone="UTC")
    with pytest.raises(ScheduleError, match="timezone is a separate field"):
        build_spec(time=time(7, 45, tzinfo=UTC), timezone="UTC")


# --- timezones -----------------------------------------------------------------------------


def test_timezone_positional_and_default() -> None:
    assert spec_of("09:00", "Europe/Berlin").timezone == "Europe/Berlin"
    assert spec_of("09:00").timezone == "UTC"
    assert spec_of("09:00", default_timezone="America/New_York").timezone == "America/New_York"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("europe/berlin", "Europe/Berlin"),
        ("EUROPE/BERLIN", "Europe/Berlin"),
        ("america/new york", "America/New_York"),
        ("utc", "UTC"),
        ("  Asia/Kolkata ", "Asia/Kolkata"),
    ],
)
def test_timezone_case_and_spaces_are_canonicalised(text: str, expected: str) -> None:
    assert canonical_timezone(text) == expected


def test_timezone_typo_error_text_is_exact() -> None:
    error = error_of("09:00", "Europe/Berln")
    assert str(error) == (
        "timezone: unknown timezone 'Europe/Berln' — did you mean Europe/Berlin? "
        "(example: /schedule add 09:00 Europe/Berlin weekdays)"
    )
    assert error.field == "timezone"
    assert error.suggestions == ("Europe/Berlin",)
    assert isinstance(error, ValueError)


@pytest.mark.parametrize(
    ("text", "suggestion"),
    [
        ("berlin", "Europe/Berlin"),
        ("Berlin", "Europe/Berlin"),
        ("new york", "America/New_York"),
        ("Amerca/New_Yrok", "America/New_York"),
        ("sydney", "Australia/Sydney"),
        ("Europe/Londn", "Europe/London"),
    ],
)
def test_timezone_suggestions_match_whole_name_or_city(text: str, suggestion: str) -> None:
    with pytest.raises(ScheduleError) as caught:
        canonical_timezone(text)
    assert caught.value.suggestions[0] == suggestion
    assert f"did you mean {suggestion}" in caught.value.reason


def test_timezone_without_any_close_match_points_at_the_format() -> None:
    error = error_of("09:00", "Nowhere/Qqqqqq")
    assert error.field == "timezone"
    assert error.suggestions == ()
    assert "use an IANA name such as Europe/Berlin" in error.reason


def test_bad_default_timezone_is_a_timezone_error() -> None:
    assert error_of("09:00", default_timezone="Mars/Olympus").field == "timezone"


def test_spec_refuses_a_non_canonical_timezone() -> None:
    with pytest.raises(ScheduleError) as caught:
        ScheduleSpec(time=time(9), timezone="europe/berlin", days=DaySpec.every_day())
    assert caught.value.field == "timezone"


# --- days ----------------------------------------------------------------------------------

MON_TO_SUN = "mon,tue,wed,thu,fri,sat,sun"


@pytest.mark.parametrize(
    ("text", "weekdays", "canonical"),
    [
        ("daily", {0, 1, 2, 3, 4, 5, 6}, "daily"),
        ("everyday", {0, 1, 2, 3, 4, 5, 6}, "daily"),
        (MON_TO_SUN, {0, 1, 2, 3, 4, 5, 6}, "daily"),
        ("weekdays", {0, 1, 2, 3, 4}, "weekdays"),
        ("mon-fri", {0, 1, 2, 3, 4}, "weekdays"),
        ("weekends", {5, 6}, "weekends"),
        ("sat,sun", {5, 6}, "weekends"),
        ("mon,wed,fri", {0, 2, 4}, "mon,wed,fri"),
        ("fri,MON,Wednesday", {0, 2, 4}, "mon,wed,fri"),
        ("tues,thurs", {1, 3}, "tue,thu"),
        ("sunday", {6}, "sun"),
        ("fri-mon", {4, 5, 6, 0}, "mon,fri,sat,sun"),
        ("weekends,mon", {5, 6, 0}, "mon,sat,sun"),
    ],
)
def test_accepted_day_forms(text: str, weekdays: set[int], canonical: str) -> None:
    spec = spec_of("09:00", text)
    assert spec.days.weekdays == frozenset(weekdays)
    assert spec.days.text == canonical
    assert spec.days.cron is None


def test_days_default_to_daily() -> None:
    assert spec_of("09:00").days.text == "daily"


@pytest.mark.parametrize(
    ("args", "reason", "suggestion"),
    [
        (("09:00", "wekdays"), "unknown day 'wekdays' — did you mean weekdays?", "weekdays"),
        (("09:00", "mon,wen"), "unknown day 'wen' — did you mean wed?", "wed"),
        (("09:00", "mon,,fri"), "empty day in 'mon,,fri'", None),
        (("09:00", "mon-"), "empty day in 'mon-'", None),
        (("09:00", "mon,xyz"), "unknown day 'xyz' (use daily, weekdays", None),
    ],
)
def test_day_errors(args: tuple[str, ...], reason: str, suggestion: str | None) -> None:
    error = error_of(*args)
    assert error.field == "days"
    assert reason in error.reason
    assert error.example == "/schedule add 09:00 Europe/Berlin mon,wed,fri"
    assert error.suggestions == ((suggestion,) if suggestion else ())


def test_time_zone_and_days_may_come_in_any_order() -> None:
    expected = spec_of("09:00", "Europe/Berlin", "weekdays")
    assert spec_of("weekdays", "Europe/Berlin", "9am") == expected
    assert spec_of("Europe/Berlin", "9:00", "mon-fri") == expected


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("09:00", "10:00"), "time"),
        (("09:00", "UTC", "Europe/Berlin"), "timezone"),
        (("09:00", "weekdays", "sat"), "days"),
    ],
)
def test_a_positional_given_twice_is_an_error(args: tuple[str, ...], field: str) -> None:
    error = error_of(*args)
    assert error.field == field
    assert "given twice" in error.reason


def test_day_spec_holds_exactly_one_rule() -> None:
    with pytest.raises(ScheduleError):
        DaySpec()
    with pytest.raises(ScheduleError):
        DaySpec(weekdays=frozenset({0}), cron=parse_cron("0 9 * * *"))
    with pytest.raises(ScheduleError):
        DaySpec(weekdays=frozenset())
    with pytest.raises(ScheduleError):
        DaySpec(weekdays=frozenset({7}))


def test_specs_are_hashable_values() -> None:
    loose = DaySpec(weekdays={0, 2})  # type: ignore[arg-type]
    assert loose == DaySpec(weekdays=frozenset({0, 2}))
    spec = spec_of("09:00", "mon,wed", "--tag", "a")
    assert {spec: 1}[spec_of("9am", "wed,mon", "--tag", "a")] == 1
    assert hash(spec_of("--cron", "0 9 * * 1-5"))


# --- options -------------------------------------------------------------------------------


def test_every_option() -> None:
    spec = spec_of(
        "21:30",
        "America/New_York",
        "mon,wed,fri",
        "--pack",
        "PyTorch-Dynamic-Graphs",
        "--tag",
        "autograd",
        "--tag",
        "tensors,Autograd",
        "--difficulty",
        "HARD",
        "--window",
        "90m",
        "--mention",
        "<@&1234>",
    )
    assert spec == ScheduleSpec(
        time=time(21, 30),
        timezone="America/New_York",
        days=DaySpec(weekdays=frozenset({0, 2, 4})),
        pack="pytorch-dynamic-graphs",
        tags=("autograd", "tensors"),
        difficulty="hard",
        window=timedelta(minutes=90),
        mention="<@&1234>",
    )


def test_defaults() -> None:
    spec = spec_of("09:00")
    assert (spec.pack, spec.tags, spec.difficulty, spec.window, spec.mention) == (
        None,
        (),
        None,
        None,
        None,
    )


def test_option_equals_form_and_case() -> None:
    spec = spec_of("09:00", "--pack=algebra", "--WINDOW=2h", "--difficulty=easy")
    assert (spec.pack, spec.window, spec.difficulty) == ("algebra", timedelta(hours=2), "easy")


@pytest.mark.parametrize(
    ("window", "expected"),
    [
        ("90m", timedelta(minutes=90)),
        ("1h30m", timedelta(minutes=90)),
        ("1.5h", timedelta(minutes=90)),
        ("1m", timedelta(minutes=1)),
        ("7d", timedelta(days=7)),
        ("next", None),
        ("NEXT", None),
    ],
)
def test_window_forms(window: str, expected: timedelta | None) -> None:
    assert spec_of("09:00", "--window", window).window == expected


@pytest.mark.parametrize(
    ("window", "reason"),
    [
        ("soon", "'soon' is not a duration; expected something like 90m, 2h30m or 1d, or next"),
        ("30s", "30s is outside 1m to 7d"),
        ("8d", "8d is outside 1m to 7d"),
        ("0m", "'0m' is not a positive duration"),
    ],
)
def test_window_errors(window: str, reason: str) -> None:
    error = error_of("09:00", "--window", window)
    assert error.field == "window"
    assert reason in error.reason
    assert error.example == "/schedule add 09:00 --window 90m"


@pytest.mark.parametrize(
    ("args", "field", "reason"),
    [
        (("--difficulty", "expert"), "difficulty", "'expert' is not one of easy, medium, hard"),
        (("--pack", "my pack"), "pack", "'my pack' is not a pack id"),
        (("--pack", "-x"), "pack", "'-x' is not a pack id"),
        (("--tag", "two words"), "tags", "'two words' is not a tag"),
        (("--tag", "a,"), "tags", "'' is not a tag"),
        (("--mention", "@everyone"), "mention", "@everyone pings everyone"),
        (("--mention", "<!channel>"), "mention", "<!channel> pings everyone"),
        (("--mention", "x" * 101), "mention", "up to 100 chars"),
        (("--mention", "a\nb"), "mention", "up to 100 chars"),
        (("--pack",), "pack", "--pack needs a value"),
        (("--pack", "--tag", "x"), "pack", "--pack needs a value"),
        (("--pack", "a", "--pack", "b"), "pack", "--pack given twice"),
        (("--window", "1h", "--window", "2h"), "window", "--window given twice"),
        (("--dificulty", "easy"), "args", "unknown option --dificulty — did you mean --difficult"),
        (("--colour", "red"), "args", "unknown option --colour; known: --pack, --tag"),
    ],
)
def test_option_errors(args: tuple[str, ...], field: str, reason: str) -> None:
    error = error_of("09:00", *args)
    assert error.field == field
    assert reason in error.reason
    assert error.example.startswith("/schedule add ")


def test_every_error_has_field_reason_and_example_in_its_text() -> None:
    error = error_of("09:00", "--difficulty", "expert")
    assert str(error) == (
        "difficulty: 'expert' is not one of easy, medium, hard "
        "(example: /schedule add 09:00 --difficulty medium)"
    )


def test_difficulties_match_the_pack_schema() -> None:
    assert tuple(d.value for d in Difficulty) == DIFFICULTIES


def test_build_spec_treats_blank_form_fields_as_not_given() -> None:
    spec = build_spec(
        time="9am",
        timezone="europe/berlin",
        days="",
        cron="  ",
        pack="",
        tags=(),
        difficulty=" ",
        window="",
        mention="",
    )
    assert spec == ScheduleSpec(time=time(9), timezone="Europe/Berlin", days=DaySpec.every_day())


def test_build_spec_takes_values_as_well_as_text() -> None:
    spec = build_spec(
        time=time(9),
        timezone="UTC",
        days=DaySpec(weekdays=frozenset({5})),
        window=timedelta(minutes=90, microseconds=5),
    )
    assert spec.days.text == "sat"
    assert spec.window == timedelta(minutes=90)


# --- cron ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("--cron", "0 9 * * 1-5", "Europe/Berlin"),
        ("Europe/Berlin", "--cron", "0 9 * * 1-5"),
        ("--cron", "0", "9", "*", "*", "1-5", "Europe/Berlin"),
        ("--cron=0 9 * * MON-FRI", "Europe/Berlin"),
    ],
)
def test_cron_forms(args: tuple[str, ...]) -> None:
    spec = spec_of(*args)
    assert spec.time is None
    assert spec.timezone == "Europe/Berlin"
    assert spec.days.cron is not None
    assert spec.days.text in {"0 9 * * 1-5", "0 9 * * mon-fri"}
    assert spec.days.weekdays is None


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (("09:00", "--cron", "0 9 * * *"), "a cron expression gives the times"),
        (("--cron", "0 9 * * *", "weekdays"), "a cron expression gives the days"),
        (("--cron", "0 9 * *"), "expected 5 fields"),
        (("--cron", "0", "9", "--pack", "x"), "expected 5 fields"),
        (("--cron", "0 0 31 2 *"), "never fires"),
        (("--cron", "* * * * *"), "'* * * * *' fires 1440 times a day; at most 24 are allowed"),
        (("--cron", "*/30 * * * *"), "fires 48 times a day"),
        (("--cron", "0 25 * * *"), "hour: 25 is out of range 0-23"),
    ],
)
def test_cron_errors(args: tuple[str, ...], reason: str) -> None:
    error = error_of(*args)
    assert error.field == "cron"
    assert reason in error.reason
    assert error.example == '/schedule add --cron "0 9 * * 1-5" Europe/Berlin'


def test_cron_of_exactly_24_a_day_is_allowed() -> None:
    assert spec_of("--cron", "0 * * * *").days.text == "0 * * * *"


def test_a_spec_has_a_time_or_a_cron_never_both() -> None:
    with pytest.raises(ScheduleError):
        ScheduleSpec(time=time(9), timezone="UTC", days=DaySpec(cron=parse_cron("0 9 * * *")))
    with pytest.raises(ScheduleError):
        ScheduleSpec(time=None, timezone="UTC", days=DaySpec.every_day())


# --- splitting typed text ------------------------------------------------------------------


def test_split_args_keeps_a_quoted_cron_together() -> None:
    assert split_args('--cron "0 9 * * 1-5" Europe/Berlin --mention "Study Group"') == [
        "--cron",
        "0 9 * * 1-5",
        "Europe/Berlin",
        "--mention",
        "Study Group",
    ]


def test_split_args_straightens_curly_quotes_from_chat_clients() -> None:
    assert split_args("--cron \u201c0 9 * * 1-5\u201d UTC") == ["--cron", "0 9 * * 1-5", "UTC"]
    assert split_args("--mention \u2018Study Group\u2019") == ["--mention", "Study Group"]


def test_split_args_unclosed_quote() -> None:
    with pytest.raises(ScheduleError) as caught:
        split_args('09:00 --cron "0 9 * * *')
    assert caught.value.field == "args"
    assert "a quote is not closed" in caught.value.reason


def test_blank_words_and_blank_tags_are_ignored() -> None:
    assert spec_of("09:00", "", "UTC") == spec_of("09:00", "UTC")
    assert build_spec(time="09:00", timezone="UTC", tags=[" "]).tags == ()


# --- describe and spec_words ------------------------------------------------------------------


def test_describe_the_example_from_the_issue() -> None:
    spec = spec_of(
        "09:00",
        "Europe/Berlin",
        "weekdays",
        "--pack",
        "pytorch-dynamic-graphs",
        "--difficulty",
        "medium",
        "--window",
        "90m",
    )
    assert spec.describe() == (
        "09:00 Europe/Berlin on weekdays, pack pytorch-dynamic-graphs, medium, "
        "answers close after 1h30m"
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("9pm",), "21:00 UTC daily, answers close when the next question posts"),
        (
            ("7:05", "Asia/Tokyo", "mon,wed", "--tag", "autograd", "--mention", "@study"),
            "07:05 Asia/Tokyo on mon,wed, tag autograd, "
            "answers close when the next question posts, mentions @study",
        ),
        (
            ("09:00", "weekends", "--tag", "a", "--tag", "b", "--window", "1d"),
            "09:00 UTC on weekends, tags a, b, answers close after 1d",
        ),
        (
            ("--cron", "0 9 * * 1-5", "Europe/Berlin", "--difficulty", "easy"),
            'cron "0 9 * * 1-5" in Europe/Berlin, easy, answers close when the next question posts',
        ),
    ],
)
def test_describe(args: tuple[str, ...], expected: str) -> None:
    assert spec_of(*args).describe() == expected


def test_spec_words_are_the_canonical_command() -> None:
    spec = spec_of("9am", "europe/berlin", "fri,mon", "--window", "90m", "--tag", "x")
    assert spec_words(spec) == [
        "09:00",
        "Europe/Berlin",
        "mon,fri",
        "--tag",
        "x",
        "--window",
        "1h30m",
    ]
    cron = spec_of("--cron", "0 9 * * MON", "UTC")
    assert spec_words(cron) == ["--cron", "0 9 * * mon", "UTC"]
    assert parse_schedule_args(spec_words(cron), "Asia/Tokyo") == cron


# --- occurrences: plain weeks --------------------------------------------------------------


def test_weekdays_skip_the_weekend() -> None:
    spec = spec_of("09:00", "Europe/Berlin", "weekdays")
    # Friday 2026-04-03 noon UTC -> Monday, Tuesday (CEST, UTC+2).
    assert occurrences(spec, utc(2026, 4, 3, 12), 3) == [
        utc(2026, 4, 6, 7),
        utc(2026, 4, 7, 7),
        utc(2026, 4, 8, 7),
    ]


def test_weekends_only() -> None:
    spec = spec_of("10:00", "Europe/Berlin", "weekends")
    assert occurrences(spec, utc(2026, 4, 6), 3) == [
        utc(2026, 4, 11, 8),
        utc(2026, 4, 12, 8),
        utc(2026, 4, 18, 8),
    ]


def test_day_list() -> None:
    spec = spec_of("18:00", "America/New_York", "mon,wed,fri")
    # Sunday 2026-04-05; EDT is UTC-4 so 18:00 is 22:00 UTC.
    assert occurrences(spec, utc(2026, 4, 5), 4) == [
        utc(2026, 4, 6, 22),
        utc(2026, 4, 8, 22),
        utc(2026, 4, 10, 22),
        utc(2026, 4, 13, 22),
    ]


def test_next_is_strictly_after_and_today_counts_if_still_ahead() -> None:
    spec = spec_of("09:00", "Europe/Berlin")
    assert next_occurrence(spec, utc(2026, 4, 6, 6, 59)) == utc(2026, 4, 6, 7)
    assert next_occurrence(spec, utc(2026, 4, 6, 7)) == utc(2026, 4, 7, 7)


def test_after_may_be_in_any_timezone_and_the_result_is_utc() -> None:
    spec = spec_of("09:00", "Europe/Berlin")
    tokyo = datetime(2026, 4, 6, 15, 0, tzinfo=ZoneInfo("Asia/Tokyo"))  # 06:00 UTC
    result = next_occurrence(spec, tokyo)
    assert result == utc(2026, 4, 6, 7)
    assert result.tzinfo is UTC


def test_naive_datetimes_are_refused() -> None:
    spec = spec_of("09:00")
    with pytest.raises(ValueError, match="timezone-aware"):
        next_occurrence(spec, datetime(2026, 4, 6))
    with pytest.raises(ValueError, match="timezone-aware"):
        occurrence_key(datetime(2026, 4, 6))


def test_occurrences_count() -> None:
    spec = spec_of("09:00")
    assert occurrences(spec, utc(2026, 4, 6), 0) == []
    with pytest.raises(ValueError, match="n must be 0 or more"):
        occurrences(spec, utc(2026, 4, 6), -1)


# --- occurrences: DST weeks ----------------------------------------------------------------
# The weeks themselves are one table (tests/dst_weeks.py) that the scheduler's tests post through.


@pytest.mark.parametrize("week", dst_weeks())
def test_occurrences_through_a_dst_week(week: DstWeek) -> None:
    spec = spec_of(week.time, week.zone)
    assert occurrences(spec, week.start, week.days) == list(week.expected)
    local = [moment.astimezone(ZoneInfo(week.zone)) for moment in week.expected]
    assert len({moment.date() for moment in local}) == week.days  # one a day, none missed
    if week.kind == "steady":
        assert {f"{moment:%H:%M}" for moment in local} == {week.time}


def test_gap_start_and_end_times() -> None:
    # 02:00 is the first nonexistent minute (-> 03:00 EDT); 03:00 exists and is 03:00 EDT.
    assert next_occurrence(spec_of("02:00", "America/New_York"), utc(2026, 3, 8)) == utc(
        2026, 3, 8, 7
    )
    assert next_occurrence(spec_of("03:00", "America/New_York"), utc(2026, 3, 8)) == utc(
        2026, 3, 8, 7
    )
    assert next_occurrence(spec_of("01:59", "America/New_York"), utc(2026, 3, 8)) == utc(
        2026, 3, 8, 6, 59
    )


def test_asking_from_inside_the_gap_still_finds_the_shifted_time() -> None:
    spec = spec_of("02:30", "Europe/Berlin")
    # 01:15 UTC is 03:15 CEST, after the jump but before the shifted 03:30.
    assert next_occurrence(spec, utc(2026, 3, 29, 1, 15)) == utc(2026, 3, 29, 1, 30)
    assert next_occurrence(spec, utc(2026, 3, 29, 1, 30)) == utc(2026, 3, 30, 0, 30)


def test_asking_between_the_two_ambiguous_times_skips_the_second() -> None:
    spec = spec_of("1:30am", "America/New_York")
    # 06:00 UTC is the second 01:00 (EST); the second 01:30 (06:30 UTC) must not post.
    assert next_occurrence(spec, utc(2026, 11, 1, 6)) == utc(2026, 11, 2, 6, 30)


def test_a_whole_skipped_date_posts_once_not_twice() -> None:
    # Pacific/Apia skipped 2011-12-30 entirely (-10 -> +14). Its 09:00 would land on
    # 12-31 09:00, which has its own 09:00: one post.
    spec = spec_of("09:00", "Pacific/Apia")
    assert occurrences(spec, utc(2011, 12, 28), 4) == [
        utc(2011, 12, 28, 19),  # 12-28 09:00 -10
        utc(2011, 12, 29, 19),  # 12-29 09:00 -10
        utc(2011, 12, 30, 19),  # 12-31 09:00 +14
        utc(2011, 12, 31, 19),  # 01-01 09:00 +14
    ]


def _nuuk_springs_at_midnight() -> bool:
    wall = datetime(2024, 3, 30, 23, 30, tzinfo=ZoneInfo("America/Nuuk"))
    return wall.astimezone(UTC).astimezone(wall.tzinfo).hour != 23


@pytest.mark.skipif(not _nuuk_springs_at_midnight(), reason="tzdata older than 2023c")
def test_a_gap_ending_at_midnight_never_gives_two_posts_on_one_date() -> None:
    # America/Nuuk 2024: Saturday 03-30 23:00 -02 jumps to Sunday 00:00 -01.
    daily = spec_of("23:30", "America/Nuuk")
    assert occurrences(daily, utc(2024, 3, 28, 23), 3) == [
        utc(2024, 3, 29, 1, 30),  # Thu 23:30 -02
        utc(2024, 3, 30, 1, 30),  # Fri 23:30 -02
        # Sat 23:30 would be Sun 00:30; Sunday has its own 23:30, so it is dropped.
        utc(2024, 4, 1, 0, 30),  # Sun 23:30 -01
    ]
    saturdays = spec_of("23:30", "America/Nuuk", "sat")
    assert occurrences(saturdays, utc(2024, 3, 28, 23), 2) == [
        utc(2024, 3, 31, 1, 30),  # Sun 00:30 -01: Sunday is not a posting day, so kept
        utc(2024, 4, 7, 0, 30),  # Sat 04-06 23:30 -01
    ]
    # Asked from Sunday 00:10 -01: Saturday's shifted post is still ahead, on Sunday.
    assert next_occurrence(saturdays, utc(2024, 3, 31, 1, 10)) == utc(2024, 3, 31, 1, 30)


def _synthetic_zone(tz_string: str, std_offset_seconds: int, abbr: bytes) -> ZoneInfo:
    """A zone with no history, only a POSIX rule: a TZif v2 file with one type and a footer."""

    def block() -> bytes:
        counts = struct.pack(">6l", 0, 0, 0, 0, 1, len(abbr) + 1)
        ttinfo = struct.pack(">lBB", std_offset_seconds, 0, 0)
        return b"TZif2" + b"\0" * 15 + counts + ttinfo + abbr + b"\0"

    data = block() + block() + b"\n" + tz_string.encode() + b"\n"
    return ZoneInfo.from_file(io.BytesIO(data), key="Test/HalfHourAtMidnight")


def test_a_time_shifted_past_midnight_does_not_hide_an_earlier_one_next_day(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No real zone does this today: UTC+10 springs forward 30 minutes at 23:45 on the first
    # Sunday of October, so 23:50 becomes Monday 00:20 while Monday 00:15 exists.
    zone = _synthetic_zone("XST-10XDT-10:30,M10.1.0/23:45,M4.1.0/2", 36000, b"XST")
    monkeypatch.setattr("bot.core.schedule_spec.ZoneInfo", lambda key: zone)
    spec = spec_of("--cron", "15,50 0,23 * * *", "UTC")
    assert occurrences(spec, utc(2026, 10, 4, 13, 30), 3) == [  # Sunday 23:30 +10
        utc(2026, 10, 4, 13, 45),  # Monday 00:15 +10:30
        utc(2026, 10, 4, 13, 50),  # Sunday 23:50, shifted to Monday 00:20
        utc(2026, 10, 4, 14, 20),  # Monday 00:50
    ]


# --- occurrences: cron ---------------------------------------------------------------------


def test_cron_weekdays_across_new_york_spring_forward() -> None:
    spec = spec_of("--cron", "0 9 * * 1-5", "America/New_York")
    assert occurrences(spec, utc(2026, 3, 6), 3) == [
        utc(2026, 3, 6, 14),  # Fri 09:00 EST
        utc(2026, 3, 9, 13),  # Mon 09:00 EDT
        utc(2026, 3, 10, 13),
    ]


def test_cron_on_berlin_spring_forward_day_collapses_shifted_times() -> None:
    spec = spec_of("--cron", "*/30 1-3 * * *", "Europe/Berlin")
    assert occurrences(spec, utc(2026, 3, 28, 23), 6) == [
        utc(2026, 3, 29, 0, 0),  # 01:00 CET
        utc(2026, 3, 29, 0, 30),  # 01:30 CET
        utc(2026, 3, 29, 1, 0),  # 02:00 -> 03:00 CEST, one post with 03:00
        utc(2026, 3, 29, 1, 30),  # 02:30 -> 03:30 CEST, one post with 03:30
        utc(2026, 3, 29, 23, 0),  # Mon 01:00 CEST
        utc(2026, 3, 29, 23, 30),
    ]


def test_cron_on_berlin_fall_back_day_posts_the_first_of_each_repeated_time() -> None:
    spec = spec_of("--cron", "0,30 2 * * *", "Europe/Berlin")
    assert occurrences(spec, utc(2026, 10, 24, 22), 4) == [
        utc(2026, 10, 25, 0, 0),  # 02:00 CEST (first)
        utc(2026, 10, 25, 0, 30),  # 02:30 CEST (first)
        utc(2026, 10, 26, 1, 0),  # Mon 02:00 CET
        utc(2026, 10, 26, 1, 30),
    ]


def test_cron_vixie_day_rule_in_occurrences() -> None:
    spec = spec_of("--cron", "0 9 13 * fri", "UTC")
    assert occurrences(spec, utc(2026, 3, 1), 8) == [
        utc(2026, 3, 6, 9),
        utc(2026, 3, 13, 9),  # Friday the 13th: once
        utc(2026, 3, 20, 9),
        utc(2026, 3, 27, 9),
        utc(2026, 4, 3, 9),
        utc(2026, 4, 10, 9),
        utc(2026, 4, 13, 9),  # the 13th, a Monday
        utc(2026, 4, 17, 9),
    ]


def test_cron_leap_day_search_is_bounded_and_finds_2104() -> None:
    spec = spec_of("--cron", "0 0 29 2 *", "UTC")
    assert next_occurrence(spec, utc(2097, 3, 1)) == utc(2104, 2, 29)


def test_cron_several_times_a_day_in_order() -> None:
    spec = spec_of("--cron", "15 8,20 * * sun", "Asia/Tokyo")
    # Sunday 2026-04-05 in Tokyo (UTC+9): 08:15 = Sat 23:15 UTC, 20:15 = Sun 11:15 UTC.
    assert occurrences(spec, utc(2026, 4, 4), 3) == [
        utc(2026, 4, 4, 23, 15),
        utc(2026, 4, 5, 11, 15),
        utc(2026, 4, 11, 23, 15),
    ]


# --- keys and previews ---------------------------------------------------------------------


def test_occurrence_key_is_utc_whole_seconds() -> None:
    assert occurrence_key(utc(2026, 3, 30, 7)) == "2026-03-30T07:00:00Z"
    berlin = datetime(2026, 3, 30, 9, tzinfo=ZoneInfo("Europe/Berlin"))
    assert occurrence_key(berlin) == "2026-03-30T07:00:00Z"
    assert occurrence_key(utc(2026, 3, 30, 7, 0, 0, 999_999)) == "2026-03-30T07:00:00Z"
    assert occurrence_key(utc(999, 1, 2, 3, 4, 5)) == "0999-01-02T03:04:05Z"


def test_occurrence_key_round_trips_through_fromisoformat() -> None:
    key = occurrence_key(utc(2026, 11, 1, 5, 30))
    assert datetime.fromisoformat(key) == utc(2026, 11, 1, 5, 30)


def test_preview_format() -> None:
    spec = spec_of("09:00", "Europe/Berlin", "weekdays")
    assert preview(spec, utc(2026, 3, 27, 12), 3) == [
        "Mon 2026-03-30 09:00 CEST",
        "Tue 2026-03-31 09:00 CEST",
        "Wed 2026-04-01 09:00 CEST",
    ]


def test_preview_explains_shifted_and_repeated_times() -> None:
    spring = spec_of("02:30", "Europe/Berlin")
    assert preview(spring, utc(2026, 3, 28, 12), 2) == [
        "Sun 2026-03-29 03:30 CEST (shifted: clocks skip 02:30 on 2026-03-29)",
        "Mon 2026-03-30 02:30 CEST",
    ]
    fall = spec_of("1:30am", "America/New_York")
    assert preview(fall, utc(2026, 10, 31, 12), 2) == [
        "Sun 2026-11-01 01:30 EDT (first of two 01:30s)",
        "Mon 2026-11-02 01:30 EST",
    ]


# --- properties ----------------------------------------------------------------------------
# Oracles here use only zoneinfo's own UTC->local conversion (``astimezone``), never the
# module's wall->UTC resolution, so they check the rules rather than repeat the code.

TRICKY_ZONES = (
    "Europe/Berlin",
    "America/New_York",
    "Australia/Lord_Howe",  # 30-minute DST
    "America/Nuuk",  # a gap that ends at midnight (2024 on)
    "Pacific/Apia",  # a skipped date (2011-12-30)
    "America/Santiago",
    "Antarctica/Troll",  # 2-hour DST
    "Africa/Casablanca",
    "America/St_Johns",
    "Pacific/Chatham",
    "Asia/Tehran",
    "America/Havana",  # transitions at midnight
    "Europe/London",
    "Asia/Kolkata",
    "UTC",
)
ALL_ZONES = tuple(sorted(available_timezones()))
zones = st.one_of(st.sampled_from(TRICKY_ZONES), st.sampled_from(ALL_ZONES))
hours = st.one_of(st.integers(0, 23), st.sampled_from((0, 1, 2, 3, 23)))
PROPERTY_SETTINGS = settings(max_examples=150, deadline=None)


@cache
def _offset_changes(zone: str, year: int) -> tuple[datetime, ...]:
    """Instants within six hours before each UTC offset change of ``zone`` in ``year``."""
    tz = ZoneInfo(zone)
    step = timedelta(hours=6)
    cursor, end = utc(year, 1, 1), utc(year + 1, 1, 1)
    found = []
    while cursor < end:
        if cursor.astimezone(tz).utcoffset() != (cursor + step).astimezone(tz).utcoffset():
            found.append(cursor)
        cursor += step
    return tuple(found)


@st.composite
def instants(draw: st.DrawFn, zone: str) -> datetime:
    """Aware instants, half of them within three days of one of the zone's DST changes."""
    if draw(st.booleans()):
        changes = _offset_changes(zone, draw(st.integers(1980, 2060)))
        if changes:
            base = draw(st.sampled_from(changes))
            return base + timedelta(seconds=draw(st.integers(-3 * 86400, 3 * 86400)))
    return draw(st.datetimes(datetime(1980, 1, 1), datetime(2060, 1, 1), timezones=st.just(UTC)))


@st.composite
def time_of_day_cases(draw: st.DrawFn) -> tuple[ScheduleSpec, datetime]:
    zone = draw(zones)
    weekdays = draw(
        st.one_of(st.just(frozenset(range(7))), st.frozensets(st.integers(0, 6), min_size=1))
    )
    at = time(draw(hours), draw(st.integers(0, 59)))
    spec = build_spec(time=at, timezone=zone, days=DaySpec(weekdays=weekdays))
    return spec, draw(instants(zone))


def _wall_exists(wall: datetime, tz: ZoneInfo) -> bool:
    return wall.replace(tzinfo=tz).astimezone(UTC).astimezone(tz).replace(tzinfo=None) == wall


def _is_gap_shift(instant: datetime, wanted: datetime, tz: ZoneInfo) -> bool:
    """``instant`` is the nonexistent wall time ``wanted`` moved forward by the gap's length:
    its local time is ``wanted + shift`` where ``shift`` is exactly the UTC offset jump."""
    local = instant.astimezone(tz)
    shift = local.replace(tzinfo=None) - wanted
    if _wall_exists(wanted, tz) or shift <= timedelta(0):
        return False
    before = (instant - shift).astimezone(tz).utcoffset()
    after = local.utcoffset()
    assert before is not None
    assert after is not None
    return after - before == shift


def _explained_time_of_day(instant: datetime, spec: ScheduleSpec, tz: ZoneInfo) -> bool:
    """Posted at its wall time (the first of two, if repeated) on an admitted date, or a
    nonexistent wall time of an admitted date (that day or the day before) shifted by a gap."""
    assert spec.time is not None
    local = instant.astimezone(tz)
    if local.time() == spec.time and local.fold == 0 and spec.days.admits(local.date()):
        return True
    return any(
        spec.days.admits(day) and _is_gap_shift(instant, datetime.combine(day, spec.time), tz)
        for day in (local.date(), local.date() - timedelta(days=1))
    )


def _case(at: str, zone: str, days: str, after: datetime) -> tuple[ScheduleSpec, datetime]:
    return build_spec(time=at, timezone=zone, days=days), after


@PROPERTY_SETTINGS
@given(case=time_of_day_cases())
@example(case=_case("23:30", "America/Nuuk", "daily", utc(2024, 3, 29)))
@example(case=_case("23:30", "America/Nuuk", "sat", utc(2024, 3, 31, 1, 10)))
@example(case=_case("09:00", "Pacific/Apia", "fri", utc(2011, 12, 29)))
@example(case=_case("09:00", "Pacific/Apia", "daily", utc(2011, 12, 29)))
@example(case=_case("02:30", "Europe/Berlin", "daily", utc(2026, 3, 29, 1, 15)))
@example(case=_case("01:30", "America/New_York", "sun", utc(2026, 11, 1, 5, 45)))
@example(case=_case("02:15", "Australia/Lord_Howe", "daily", utc(2026, 10, 3)))
def test_property_time_of_day_occurrences(case: tuple[ScheduleSpec, datetime]) -> None:
    spec, after = case
    assert spec.time is not None
    tz = ZoneInfo(spec.timezone)
    found = occurrences(spec, after, 10)

    assert found[0] > after
    assert all(a < b for a, b in pairwise(found)), "strictly increasing"
    assert all(o.tzinfo is UTC for o in found)
    local_dates = [o.astimezone(tz).date() for o in found]
    assert len(set(local_dates)) == len(local_dates), "never two on one local date"
    for instant in found:
        assert _explained_time_of_day(instant, spec, tz), instant.astimezone(tz)

    # Nothing skipped: every admitted date in between had no such wall time.
    for first, second in pairwise(local_dates):
        day = first + timedelta(days=1)
        while day < second:
            wall = datetime.combine(day, spec.time)
            assert not spec.days.admits(day) or not _wall_exists(wall, tz), day
            day += timedelta(days=1)

    # Asking again from just before, or from the previous one, gives the same answers.
    for instant in found:
        assert next_occurrence(spec, instant - timedelta(microseconds=1)) == instant
    for previous, instant in pairwise(found):
        assert next_occurrence(spec, previous) == instant
        assert next_occurrence(spec, previous + (instant - previous) / 2) == instant


def _cron_text(values: frozenset[int]) -> str:
    return ",".join(str(v) for v in sorted(values))


@st.composite
def cron_cases(
    draw: st.DrawFn,
) -> tuple[ScheduleSpec, datetime, frozenset[int], frozenset[int], frozenset[int]]:
    zone = draw(zones)
    minutes = draw(st.frozensets(st.integers(0, 59), min_size=1, max_size=3))
    hour_set = draw(st.frozensets(hours, min_size=1, max_size=4))
    cron_weekdays = draw(st.frozensets(st.integers(0, 6), min_size=1))  # 0 = Sunday
    text = f"{_cron_text(minutes)} {_cron_text(hour_set)} * * {_cron_text(cron_weekdays)}"
    spec = build_spec(cron=text, timezone=zone)
    return spec, draw(instants(zone)), minutes, hour_set, cron_weekdays


def _cron_case(
    text: str, zone: str, after: datetime
) -> tuple[ScheduleSpec, datetime, frozenset[int], frozenset[int], frozenset[int]]:
    expr = parse_cron(text)
    spec = build_spec(cron=text, timezone=zone)
    return spec, after, expr.minutes, expr.hours, expr.days_of_week


@PROPERTY_SETTINGS
@given(case=cron_cases())
@example(case=_cron_case("0,30 1,2,3 * * *", "Europe/Berlin", utc(2026, 3, 28, 12)))
@example(case=_cron_case("0,30 1,2,3 * * *", "Europe/Berlin", utc(2026, 10, 24, 12)))
@example(case=_cron_case("0,30 0,1,23 * * 0,6", "America/Nuuk", utc(2024, 3, 29)))
@example(case=_cron_case("15,45 1,2 * * 0", "Australia/Lord_Howe", utc(2026, 4, 4)))
def test_property_cron_occurrences(
    case: tuple[ScheduleSpec, datetime, frozenset[int], frozenset[int], frozenset[int]],
) -> None:
    spec, after, minutes, hour_set, cron_weekdays = case
    tz = ZoneInfo(spec.timezone)

    def wanted(wall: datetime) -> bool:
        return (
            wall.minute in minutes
            and wall.hour in hour_set
            and wall.isoweekday() % 7 in cron_weekdays
        )

    horizon = after + timedelta(days=2)
    found = [next_occurrence(spec, after)]
    while found[-1] <= horizon and len(found) <= 2 * 3 * 24:  # at most 24 a day
        found.append(next_occurrence(spec, found[-1]))

    assert found[0] > after
    assert all(a < b for a, b in pairwise(found)), "strictly increasing"
    for instant in found:
        local = instant.astimezone(tz)
        naive = local.replace(tzinfo=None)
        if wanted(naive) and local.fold == 0:
            continue
        candidates = [
            datetime.combine(day, time(h, m))
            for day in (naive.date(), naive.date() - timedelta(days=1))
            for h in hour_set
            for m in minutes
        ]
        assert any(wanted(w) and _is_gap_shift(instant, w, tz) for w in candidates), local

    # Complete: every UTC minute whose local wall time matches (first of two) is posted.
    posted = set(found)
    minute = (after + timedelta(minutes=1)).replace(second=0, microsecond=0)
    while minute <= horizon:
        local = minute.astimezone(tz)
        if local.second == 0 and local.fold == 0 and wanted(local.replace(tzinfo=None)):
            assert minute in posted, local
        minute += timedelta(minutes=1)

    for instant in found:
        assert next_occurrence(spec, instant - timedelta(microseconds=1)) == instant


@st.composite
def full_specs(draw: st.DrawFn) -> ScheduleSpec:
    tag = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,8}", fullmatch=True)
    cron = None
    if draw(st.booleans()):
        cron = f"{draw(st.integers(0, 59))} {draw(st.integers(0, 23))} * * 1-5"
    return build_spec(
        time=None if cron else time(draw(st.integers(0, 23)), draw(st.integers(0, 59))),
        days=None if cron else DaySpec(weekdays=draw(st.frozensets(st.integers(0, 6), min_size=1))),
        cron=cron,
        timezone=draw(zones),
        pack=draw(st.none() | st.from_regex(r"[a-z0-9][a-z0-9._-]{0,10}", fullmatch=True)),
        tags=draw(st.lists(tag, max_size=3)),
        difficulty=draw(st.none() | st.sampled_from(DIFFICULTIES)),
        window=draw(st.none() | st.integers(60, 7 * 86400).map(lambda s: f"{s}s")),
        mention=draw(st.none() | st.sampled_from(("@study", "<@&42>", "<!subteam^S1>"))),
    )


@PROPERTY_SETTINGS
@given(spec=full_specs())
def test_property_spec_words_round_trip(spec: ScheduleSpec) -> None:
    assert parse_schedule_args(spec_words(spec), "UTC") == spec
    assert spec.describe().startswith(spec_words(spec)[0] if spec.time else "cron")


def test_kinds_parse_describe_and_round_trip() -> None:
    spec = parse_schedule_args(["09:00", "--kinds", "mc,prompt", "--kinds", "practice"], "UTC")
    assert spec.kinds == ("multiple_choice", "practice", "open")
    assert spec.posted_kinds == spec.kinds
    assert spec.describe().endswith("kinds multiple_choice, practice, open")
    assert decode_spec(encode_spec(spec)) == spec
    assert parse_schedule_args(spec_words(spec), "UTC") == spec
    plain = parse_schedule_args(["09:00"], "UTC")
    assert plain.kinds == () and "open" not in plain.posted_kinds
    assert "kinds" not in json.loads(encode_spec(plain))  # older schedules' JSON unchanged
    with pytest.raises(ScheduleError) as info:
        parse_schedule_args(["09:00", "--kinds", "quiz"], "UTC")
    assert info.value.field == "kinds"
    assert (
        "'quiz' is not a kind (flashcard, multiple_choice, practice, open, exercise, typed)"
        in str(info.value)
    )


def test_a_form_of_one_value_per_field_reads_as_the_text_grammar() -> None:
    """Discord's options and the web page's inputs: blanks are not given, days typed with
    spaces are one list, tags and kinds split on spaces or commas."""
    form = ScheduleForm.from_fields(
        {
            "time": "09:00",
            "days": "mon  wed,fri",
            "tags": "autograd, leaf",
            "kinds": " ",
            "pack": "",
        }
    )
    assert form == ScheduleForm(time="09:00", days="mon,wed,fri", tags=("autograd", "leaf"))
    assert form.spec("UTC") == parse_schedule_args(
        ["09:00", "mon,wed,fri", "--tag", "autograd", "--tag", "leaf"], "UTC"
    )
