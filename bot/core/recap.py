"""The weekly recap: when it is due, which week it covers, and what it says. Pure.

A recap is posted once a week in a channel, at a local day and time an admin chose: the
week's board, the longest streaks alive, and the question most people missed, so a group
sees its week at a glance and knows what to revisit. The week it covers is the local week
that was under way a day before it posts: a Friday recap sums up this week so far, a Monday
morning recap the week that just ended.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from bot.core.errors import BadInput
from bot.core.messages import Message, Section, Tone, escape_markup, neutralise
from bot.core.models import LeaderboardRow

__all__ = [
    "DAY_NAMES",
    "MissedQuestion",
    "RecapContent",
    "StreakRow",
    "parse_when",
    "recap_message",
    "recap_week",
    "week_key",
]

DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_TIME = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")


def parse_when(words: list[str]) -> tuple[int, time]:
    """``fri 18:00`` -> (4, 18:00); refuses anything else with the form expected."""
    usage = "give a day and a local time, e.g. `fri 18:00` or `mon 09:00`"
    if len(words) != 2:
        raise BadInput(f"The recap needs a day and a time: {usage}.")
    day, at = words[0].lower()[:3], words[1]
    if day not in DAY_NAMES:
        raise BadInput(f"`{words[0]}` is not a day of the week: {usage}.")
    match = _TIME.match(at)
    if match is None:
        raise BadInput(f"`{at}` is not a time of day (HH:MM): {usage}.")
    return DAY_NAMES.index(day), time(int(match[1]), int(match[2]))


def recap_week(moment: datetime, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """The local week a recap posted at ``moment`` covers: [Monday 00:00, next Monday 00:00)."""
    day_before = (moment - timedelta(days=1)).astimezone(tz).date()
    monday = day_before - timedelta(days=day_before.weekday())
    start = datetime.combine(monday, time(0), tzinfo=tz)
    end = datetime.combine(monday + timedelta(days=7), time(0), tzinfo=tz)
    return start, end


def week_key(start: datetime) -> str:
    """The key a channel's recap of one week is stored under (``2026-03-02``)."""
    return start.date().isoformat()


@dataclass(frozen=True, slots=True)
class StreakRow:
    display_name: str
    days: int
    freezes: int = 0  # held today
    freezes_used: int = 0


@dataclass(frozen=True, slots=True)
class MissedQuestion:
    post_id: int
    prompt: str
    missed: int
    answered: int
    answer: str  # the correct choice, e.g. "B. As the forward pass runs"


@dataclass(frozen=True, slots=True)
class RecapContent:
    channel: str
    week_start: date
    board: tuple[LeaderboardRow, ...]
    streaks: tuple[StreakRow, ...]
    missed: MissedQuestion | None
    questions: int  # posted in the channel that week


def _safe(name: str) -> str:
    """A member-chosen display name, safe in a public post: no pings, no Markdown."""
    return escape_markup(neutralise(name))


def recap_message(content: RecapContent, question_command: str) -> Message:
    """The recap post (public, in the channel); ``question_command`` shows the missed one."""
    sections: list[Section] = []
    medals = {1: "🥇", 2: "🥈", 3: "🥉"}
    if content.board:
        board = "\n".join(
            f"{medals.get(row.rank, f'{row.rank}.')} **{_safe(row.display_name)}** — "
            f"{row.points} pts ({row.answers} answer{'s' if row.answers != 1 else ''})"
            for row in content.board
        )
    else:
        board = "Nobody scored this week. A fresh start next week!"
    sections.append(Section(heading="The week's board", body=board))
    if content.streaks:
        streaks = "\n".join(
            f"🔥 **{_safe(s.display_name)}** — {s.days} day{'s' if s.days != 1 else ''}"
            f" (🧊 {s.freezes} freeze{'s' if s.freezes != 1 else ''} held, {s.freezes_used} used)"
            for s in content.streaks
        )
        sections.append(Section(heading="Longest streaks", body=streaks))
    if content.missed is not None:
        m = content.missed
        prompt = " ".join(m.prompt.split())
        prompt = prompt if len(prompt) <= 120 else prompt[:119].rstrip() + "…"
        sections.append(
            Section(
                heading="Most missed",
                body=(
                    f"#{m.post_id}: {prompt}\n{m.missed} of {m.answered} missed it; the answer "
                    f"was **{m.answer}**. Revisit it with {question_command}."
                ),
            )
        )
    start = content.week_start
    posted = f"{content.questions} question{'s' if content.questions != 1 else ''}"
    return Message(
        title=f"📅 Weekly recap — week of {start:%a} {start.day} {start:%b}",
        sections=tuple(sections),
        tone=Tone.INFO,
        footer=f"#{content.channel} · {posted} posted here this week",
    )
