"""The cron matcher: field syntax, the Vixie day rule, and the "can it ever fire" check."""

from __future__ import annotations

from datetime import date, time, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.core.cron import MAX_GAP_DAYS, CronError, parse_cron

# 2026-03-30 is a Monday; the dates below are checked against a printed calendar.
MON, TUE, WED, THU, FRI, SAT, SUN = (date(2026, 3, 30) + timedelta(days=i) for i in range(7))


def test_minute_hour_lists_ranges_and_steps() -> None:
    expr = parse_cron("0,30 9-11 * * *")
    assert expr.times() == (
        time(9, 0),
        time(9, 30),
        time(10, 0),
        time(10, 30),
        time(11, 0),
        time(11, 30),
    )
    assert parse_cron("*/20 */8 * * *").times() == tuple(
        time(h, m) for h in (0, 8, 16) for m in (0, 20, 40)
    )
    assert parse_cron("5-20/5 1 * * *").times() == tuple(time(1, m) for m in (5, 10, 15, 20))


def test_value_slash_step_runs_to_the_field_maximum() -> None:
    assert parse_cron("50/5 0 * * *").times() == (time(0, 50), time(0, 55))


def test_weekday_numbers_names_and_seven_is_sunday() -> None:
    for text in ("0 9 * * 1-5", "0 9 * * mon-fri", "0 9 * * MON,tue,3,thu-fri"):
        expr = parse_cron(text)
        assert [expr.matches_date(d) for d in (MON, TUE, WED, THU, FRI, SAT, SUN)] == [
            True,
            True,
            True,
            True,
            True,
            False,
            False,
        ], text
    for text in ("0 9 * * 0", "0 9 * * 7", "0 9 * * sun"):
        assert parse_cron(text).matches_date(SUN)
        assert not parse_cron(text).matches_date(SAT)


def test_month_names_and_numbers() -> None:
    expr = parse_cron("0 9 1 jan-mar,dec *")
    assert sorted(expr.months) == [1, 2, 3, 12]
    assert expr.matches_date(date(2026, 2, 1))
    assert not expr.matches_date(date(2026, 4, 1))
    assert parse_cron("0 9 1 4 *").matches_date(date(2026, 4, 1))


def test_vixie_rule_both_day_fields_restricted_means_either() -> None:
    expr = parse_cron("0 9 13 * fri")
    assert expr.matches_date(date(2026, 3, 13))  # a Friday the 13th
    assert expr.matches_date(date(2026, 4, 13))  # the 13th, a Monday
    assert expr.matches_date(date(2026, 4, 3))  # a Friday, the 3rd
    assert not expr.matches_date(date(2026, 4, 14))  # Tuesday the 14th


def test_vixie_rule_a_star_prefixed_day_field_means_both() -> None:
    expr = parse_cron("0 9 */10 * mon")  # days 1, 11, 21, 31 that are also Mondays
    assert expr.matches_date(date(2026, 5, 11))  # Monday the 11th
    assert not expr.matches_date(date(2026, 5, 4))  # a Monday, but the 4th
    assert not expr.matches_date(date(2026, 5, 21))  # the 21st, but a Thursday
    expr = parse_cron("0 9 1 * *")
    assert expr.matches_date(date(2026, 7, 1))
    assert not expr.matches_date(date(2026, 7, 2))


def test_canonical_text_is_lower_case_single_spaced() -> None:
    assert parse_cron("  0  9 * *   MON-FRI ").text == "0 9 * * mon-fri"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("0 9 * *", "expected 5 fields"),
        ("0 9 * * * *", "expected 5 fields"),
        ("60 9 * * *", "minute: 60 is out of range 0-59"),
        ("0 24 * * *", "hour: 24 is out of range 0-23"),
        ("0 9 0 * *", "day-of-month: 0 is out of range 1-31"),
        ("0 9 32 * *", "day-of-month: 32 is out of range 1-31"),
        ("0 9 * 13 *", "month: 13 is out of range 1-12"),
        ("0 9 * * 8", "day-of-week: 8 is out of range 0-7"),
        ("0 9 * * fry", "day-of-week: 'fry' is not a number or a name"),
        ("0 9 * foo *", "month: 'foo' is not a number or a name"),
        ("x 9 * * *", "minute: 'x' is not a number"),
        ("0 9 * * 5-1", "day-of-week: range '5-1' runs backwards"),
        ("*/0 9 * * *", "minute: step in '*/0' must be a whole number of 1 or more"),
        ("*/x 9 * * *", "minute: step in '*/x'"),
        ("0,,5 9 * * *", "minute: empty item"),
        ("0 9 31 2 *", "never fires"),
        ("0 9 30,31 2 *", "never fires"),
        ("0 9 31 4,6,9,11 *", "never fires"),
        ("0 0 */31 2 mon", "fires too rarely: up to 11 years"),
    ],
)
def test_errors_name_the_field_and_the_reason(text: str, reason: str) -> None:
    with pytest.raises(CronError) as caught:
        parse_cron(text)
    assert reason in caught.value.reason
    assert str(caught.value) == caught.value.reason


def test_leap_day_is_accepted_because_it_fires_within_eight_years() -> None:
    expr = parse_cron("0 0 29 2 *")
    assert expr.matches_date(date(2028, 2, 29))
    # The longest real wait: 2096 to 2104 (2100 is not a leap year).
    assert date(2104, 2, 29).toordinal() - date(2096, 2, 29).toordinal() <= MAX_GAP_DAYS


@given(
    minutes=st.frozensets(st.integers(0, 59), min_size=1, max_size=4),
    hours=st.frozensets(st.integers(0, 23), min_size=1, max_size=3),
    weekdays=st.frozensets(st.integers(0, 6), min_size=1),
    day=st.dates(date(2000, 1, 1), date(2100, 12, 31)),
)
def test_comma_lists_match_exactly_their_values(
    minutes: frozenset[int], hours: frozenset[int], weekdays: frozenset[int], day: date
) -> None:
    """Oracle: the sets the expression was written from, not the parser's own output."""
    text = (
        f"{','.join(map(str, sorted(minutes)))} {','.join(map(str, sorted(hours)))} * * "
        f"{','.join(map(str, sorted(weekdays)))}"
    )
    expr = parse_cron(text)
    assert expr.times() == tuple(time(h, m) for h in sorted(hours) for m in sorted(minutes))
    cron_weekday = day.isoweekday() % 7  # Sunday 0
    assert expr.matches_date(day) == (cron_weekday in weekdays)
