"""What members type is normalised once, at the boundary, for both engines (issue 27, 8 and 15).

The same hostile strings go through every command that stores text (display names, report
reasons, written questions), on SQLite and on PostgreSQL (the ``service`` fixture runs each
test on both): nothing crashes, nothing is lost that could be kept, markup shows as text, and
a refusal never echoes a 100 kB value back.
"""

from __future__ import annotations

import dataclasses

import pytest

from bot.core.errors import BadInput, StudyError
from bot.core.messages import escape_markup
from bot.core.models import Window
from bot.questions.written import WrittenQuestion
from bot.services.bundle import Services
from tests.helpers import member

ADMIN = member("root", admin=True)
LINK = "[Free Nitro](https://evil.example) @everyone <@&1>"
HOSTILE = {
    "nul": "ann\x00b",
    "surrogate": "ann\ud800b",
    "markup": LINK,
    "controls": "ann\x1b[2J\u202eb",
    "huge": "a" * 100_000,
}


@pytest.mark.parametrize("case", list(HOSTILE))
async def test_hostile_display_names_are_stored_and_shown_inert(
    service: Services, case: str
) -> None:
    who = dataclasses.replace(member("x"), member_name=HOSTILE[case])
    assert "\x00" not in who.member_name and "\x1b" not in who.member_name
    assert len(who.member_name) <= 100
    draft = await service.quiz.post_question(who, pack="mini", difficulty="medium")
    await service.quiz.answer(who, draft.post.id, "A")
    board = await service.standings.leaderboard(ADMIN, Window.ALL)
    shown = board.plain_text()
    assert "\x00" not in shown and "\ud800" not in shown and "\x1b" not in shown
    if case == "markup":
        body = "\n".join(s.body for s in board.sections)
        assert "[Free Nitro](" not in body  # escaped: a Discord embed shows no link


@pytest.mark.parametrize("case", ["nul", "surrogate", "markup", "controls"])
async def test_hostile_report_reasons_are_kept_and_shown_as_text(
    service: Services, case: str
) -> None:
    ann = member("ann")
    draft = await service.quiz.post_question(ann, pack="mini")
    reason = f"the answer is wrong: {HOSTILE[case]}"
    await service.reports.report(ann, draft.post.id, reason)
    listing = await service.reports.listing(ADMIN)
    body = "\n".join(s.body for s in listing.sections)
    assert "\x00" not in body and "\ud800" not in body and "\x1b" not in body
    assert "the answer is wrong" in body
    if case == "markup":
        assert escape_markup("[Free Nitro](https://evil.example)") in body
        assert "@everyone" not in body  # defused: a zero-width space after the @


async def test_a_huge_reason_is_refused_with_a_short_message(service: Services) -> None:
    ann = member("ann")
    draft = await service.quiz.post_question(ann, pack="mini")
    with pytest.raises(BadInput, match="under 500 characters") as refused:
        await service.reports.report(ann, draft.post.id, "x" * 100_000)
    assert len(str(refused.value)) < 300


@pytest.mark.parametrize("case", ["nul", "surrogate", "controls"])
async def test_hostile_written_questions_are_stored(service: Services, case: str) -> None:
    question = WrittenQuestion(
        prompt=f"What is a leaf tensor? {HOSTILE[case]}", answer=f"One you made {HOSTILE[case]}"
    )
    reply = await service.packs.write_question(ADMIN, question)  # once a crash in YAML and SQL
    assert reply.title is not None and "1 question, no problems" in reply.title
    text = reply.plain_text()
    assert "\x00" not in text and "\ud800" not in text and "\x1b" not in text


@pytest.mark.parametrize("call", ["leaderboard", "stats", "resolve"])
async def test_a_refusal_never_echoes_a_huge_value(service: Services, call: str) -> None:
    typed = "x" * 100_000
    with pytest.raises(StudyError) as refused:
        if call == "leaderboard":
            await service.standings.leaderboard(ADMIN, typed)
        elif call == "stats":
            await service.standings.stats(ADMIN, typed)
        else:
            await service.reports.resolve(ADMIN, typed)
    assert len(str(refused.value)) < 400, str(refused.value)[:400]
    assert "x" * 70 in str(refused.value)  # the start of what was typed is still there
