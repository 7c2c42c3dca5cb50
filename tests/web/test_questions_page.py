"""The Questions tab over HTTP: every question's figures, sortable; one question's detail with
its choice chart, flags and reports; dismissing a flag; both CSV exports; and one workspace's
admin never reaching another's."""

from __future__ import annotations

import asyncio
import csv
import html
import io
import re

import httpx
import pytest

from bot.services.item_analysis import GRADEBOOK_HEADER
from tests.web.conftest import HOSTILE, ZOE, Site, console, sign_in

Browser = tuple[httpx.AsyncClient, str]


async def _answers(site: Site, members: int, pick: str = "B", item: str = "d-mc-1") -> None:
    """``members`` console members answer one post of ``item`` (file order: B is right)."""
    services = site.services
    draft = await services.quiz.post_question(console("me", admin=True), question=item)
    for n in range(members):
        await services.quiz.answer(console(f"m{n}"), draft.post.id, pick)


def _rows(page: str) -> list[str]:
    """The question ids in the table, top to bottom."""
    return re.findall(r'<td class="head"><a href="/w/\d+/questions/([^"?]+)', page)


async def test_the_table_sorts_and_flags_a_question_everybody_gets_right(
    site: Site, me: Browser
) -> None:
    client, csrf = me
    await _answers(site, 22)  # 22 of 22 right: too easy
    await _answers(site, 3, "A", item="d-mc-2")
    page = await client.get(f"/w/{site.a}/questions")
    assert page.status_code == 200, page.text
    assert _rows(page.text)[0] == "d-mc-1"  # flagged first by default
    assert "Almost everybody gets it right" in page.text
    by_answers = await client.get(f"/w/{site.a}/questions?sort=answers&order=asc")
    ids = _rows(by_answers.text)
    assert ids.index("d-mc-2") < ids.index("d-mc-1") and ids[-1] == "d-mc-1"
    assert 'aria-sort="ascending"' in by_answers.text
    bad = await client.get(f"/w/{site.a}/questions?days=ever")
    assert bad.status_code == 400 and "number of days" in html.unescape(bad.text)

    detail = await client.get(f"/w/{site.a}/questions/d-mc-1")
    text = html.unescape(detail.text)
    assert "22 from 22 members" in text and "As the forward pass runs" in text
    assert 'class="meter"' in detail.text and "Dismiss flags" in text
    assert "30 of 30" not in text and "22 of 22 answers were right" in text
    few = html.unescape((await client.get(f"/w/{site.a}/questions/d-mc-2")).text)
    assert "Fewer than 5 members answered" in few and 'class="meter"' not in few

    reports = html.unescape((await client.get(f"/w/{site.a}/reports")).text)
    assert "Flagged questions" in reports and "d-mc-1" in reports

    refused = await client.post(
        f"/w/{site.a}/questions/d-mc-1/flags", data={"csrf": "nope", "outcome": "dismissed"}
    )
    assert refused.status_code == 403
    done = await client.post(
        f"/w/{site.a}/questions/d-mc-1/flags", data={"csrf": csrf, "outcome": "dismissed"}
    )
    assert done.status_code == 303
    after = html.unescape((await client.get(done.headers["location"])).text)
    assert "Dismissed 1 flag on `d-mc-1`" in after and "Dismiss flags" not in after
    table = await client.get(f"/w/{site.a}/questions")
    assert "Almost everybody gets it right" not in html.unescape(table.text)


async def test_both_exports_download_and_stay_in_their_workspace(site: Site, me: Browser) -> None:
    client, _ = me
    services = site.services
    draft = await services.quiz.post_question(console("me", admin=True), question="d-mc-1")
    await services.quiz.answer(console(HOSTILE), draft.post.id, "B")
    got = await client.get(f"/w/{site.a}/export/gradebook.csv")
    assert got.status_code == 200 and got.headers["content-type"].startswith("text/csv")
    assert "attachment" in got.headers["content-disposition"]
    rows = list(csv.reader(io.StringIO(got.text)))
    assert tuple(rows[0]) == GRADEBOOK_HEADER and rows[1][0] == HOSTILE  # text, not markup
    questions = await client.get(f"/w/{site.a}/export/questions.csv?days=7")
    assert questions.status_code == 200 and "d-mc-1" in questions.text
    assert (await client.get(f"/w/{site.a}/export/secrets.csv")).status_code == 404

    # Another workspace's admin reaches none of it.
    async with site.client() as other:
        await sign_in(site, other, ZOE, [site.b])
        for path in ("questions", "questions/d-mc-1", "export/gradebook.csv"):
            assert (await other.get(f"/w/{site.a}/{path}")).status_code == 404, path


async def test_the_group_mastery_page_shows_the_picture_with_its_words(
    site: Site, me: Browser
) -> None:
    client, _ = me
    await _answers(site, 6, item="d-mc-2")  # tag leaf: 6 members, all right
    page = await client.get(f"/w/{site.a}/mastery")
    assert page.status_code == 200, page.text
    text = html.unescape(page.text)
    assert "Group mastery" in text and "members have cards due" in text
    alt = re.search(r'<img class="mastery" src="([^"]+)" alt="([^"]+)"', page.text)
    assert alt is not None and "leaf" in html.unescape(alt[2])
    png = await client.get(html.unescape(alt[1]))
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG\r\n")
    assert (await client.get(f"/w/{site.a}/mastery?weeks=99")).status_code == 400
    async with site.client() as other:
        await sign_in(site, other, ZOE, [site.b])
        assert (await other.get(f"/w/{site.a}/mastery.png")).status_code == 404


async def test_a_slow_count_is_shown_as_counted_while_newer_answers_are_recounted(
    site: Site, me: Browser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big group's page never waits for a recount: it shows the figures last counted, says
    so, and the one recount in the background brings the new answers in."""
    from bot.services import item_analysis

    client, _ = me
    await _answers(site, 6)
    first = html.unescape((await client.get(f"/w/{site.a}/questions/d-mc-1")).text)
    assert "6 from 6 members" in first and "being counted" not in first
    monkeypatch.setattr(item_analysis, "SLOW_COUNT", 0.0)  # every count is now "slow"
    await _answers(site, 7)  # a second post of d-mc-1: 13 answers in all
    stale = html.unescape((await client.get(f"/w/{site.a}/questions/d-mc-1")).text)
    assert "6 from 6 members" in stale and "Newer answers are being counted" in stale
    table = html.unescape((await client.get(f"/w/{site.a}/questions")).text)
    assert "Newer answers are being counted" in table
    analysis = site.services.analysis
    await asyncio.gather(*analysis._recounts.values())
    fresh = html.unescape((await client.get(f"/w/{site.a}/questions/d-mc-1")).text)
    assert "13 from 7 members" in fresh and "being counted" not in fresh
    # Chat and the exports wait for current figures, whatever the page may show.
    await _answers(site, 5)
    stats = await analysis.statistics(console("me", admin=True))
    assert next(s for s in stats if s.question.item_id == "d-mc-1").answers == 18


async def test_an_admin_opens_a_report_from_the_question_page_and_a_bad_one_keeps_its_text(
    site: Site, me: Browser
) -> None:
    client, csrf = me
    await _answers(site, 2)
    short = await client.post(
        f"/w/{site.a}/questions/d-mc-1/report", data={"csrf": csrf, "reason": "  no "}
    )
    page = html.unescape(short.text)
    assert short.status_code == 400 and "Say what is wrong" in page
    assert ">  no </textarea>" in page  # the typed text comes back to be fixed
    assert "No open reports." in page
    reason = "The key says B, but choice A is what detach() does"
    done = await client.post(
        f"/w/{site.a}/questions/d-mc-1/report", data={"csrf": csrf, "reason": reason}
    )
    assert done.status_code == 303
    after = html.unescape((await client.get(done.headers["location"])).text)
    assert "Opened a report on `d-mc-1`" in after and reason in after
    listed = html.unescape((await client.get(f"/w/{site.a}/reports")).text)
    assert reason in listed
    again = await client.post(
        f"/w/{site.a}/questions/d-mc-1/report", data={"csrf": csrf, "reason": reason + "!"}
    )
    assert "Updated your open report" in html.unescape(
        (await client.get(again.headers["location"])).text
    )
    missing = await client.post(
        f"/w/{site.a}/questions/no-such-item/report", data={"csrf": csrf, "reason": reason}
    )
    assert missing.status_code == 404
    forged = await client.post(
        f"/w/{site.a}/questions/d-mc-1/report", data={"csrf": "nope", "reason": reason}
    )
    assert forged.status_code == 403


async def test_the_mastery_page_shows_the_groups_exam_readiness_by_tag(
    site: Site, me: Browser
) -> None:
    from datetime import timedelta

    from bot.core.requests import ExamSet

    client, _ = me
    assert "Exam readiness" not in (await client.get(f"/w/{site.a}/mastery")).text
    await _answers(site, 6, item="d-mc-2")  # tag leaf: 6 members' cards
    await _answers(site, 2, item="d-mc-3")  # tag retain-graph: only 2 members
    exams = site.services.exams
    day = exams._clock.now().date() + timedelta(days=10)
    admin = console("me", admin=True)
    await exams.command(admin, ExamSet(day.isoformat(), ("leaf", "retain-graph")))
    page = html.unescape((await client.get(f"/w/{site.a}/mastery")).text)
    assert "Exam readiness" in page and "in 10 days (leaf, retain-graph)" in page
    readiness = (await exams.group_readiness(admin)) or None
    assert readiness is not None
    leaf = next(t for t in readiness.tags if t.tag == "leaf")
    assert f'aria-label="{100 * leaf.mean:.0f}%"' in page
    assert "fewer than 5 members: withheld" in page  # retain-graph's 2 members
