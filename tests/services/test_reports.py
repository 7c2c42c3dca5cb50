"""/report: members flag a wrong question; admins list and resolve; pack list counts them."""

from __future__ import annotations

import pytest

from bot.core.errors import BadInput, Forbidden, NotFound
from bot.services.bundle import Services
from tests.helpers import member

ANN, BOB = member("ann"), member("bob")
ADMIN = member("root", admin=True)


async def test_members_report_admins_see_them_grouped_and_pack_list_counts_them(
    service: Services,
) -> None:
    first = await service.quiz.post_question(ANN, pack="mini", difficulty="medium")
    thanks = await service.reports.report(ANN, None, "  the answer should be A,   not B ")
    assert thanks.ephemeral
    assert f"your report on #{first.post.id} (`d-mc-1` in Mini pack) reached the admins" in (
        thanks.plain_text()
    )
    again = await service.reports.report(ANN, first.post.id, "actually both are fine")
    assert "was updated" in again.plain_text()  # one open report per member and question
    await service.reports.report(BOB, first.post.id, "the explanation is vague")

    with pytest.raises(Forbidden, match="Only admins can see the reports"):
        await service.reports.listing(ANN)
    listing = (await service.reports.listing(ADMIN)).plain_text()
    assert "Open reports (2)" in listing
    assert "d-mc-1 (mini):" in listing
    assert f"• #{first.post.id} · ann, 2026-03-04: actually both are fine" in listing
    assert f"• #{first.post.id} · bob, 2026-03-04: the explanation is vague" in listing
    assert "the answer should be A" not in listing  # replaced by ann's update

    packs = (await service.packs.listing(ANN)).plain_text()
    assert "mini — Mini pack" in packs and "🚩 2 open reports" in packs

    with pytest.raises(Forbidden):
        await service.reports.resolve(ANN, "d-mc-1")
    done = await service.reports.resolve(ADMIN, "d-mc-1")
    assert "Resolved 2 reports on `d-mc-1`" in done.plain_text()
    assert "No open reports" in (await service.reports.listing(ADMIN)).plain_text()
    assert "open report" not in (await service.packs.listing(ANN)).plain_text()
    with pytest.raises(NotFound, match="no open reports on `d-mc-1`"):
        await service.reports.resolve(ADMIN, "d-mc-1")
    # Resolved reports are kept for the record; a new report opens again.
    await service.reports.report(ANN, first.post.id, "still wrong after the fix")
    assert "Open reports (1)" in (await service.reports.listing(ADMIN)).plain_text()


async def test_bad_reports_are_refused_with_what_to_do(service: Services) -> None:
    with pytest.raises(NotFound, match="no question in this channel to report"):
        await service.reports.report(ANN, None, "it is wrong somehow")
    draft = await service.quiz.post_question(ANN, pack="mini")
    with pytest.raises(BadInput, match="Say what is wrong"):
        await service.reports.report(ANN, draft.post.id, "bad")
    with pytest.raises(BadInput, match="under 500 characters"):
        await service.reports.report(ANN, draft.post.id, "x" * 501)
    with pytest.raises(NotFound, match="no question #999 here"):
        await service.reports.report(ANN, 999, "the answer is wrong")
    with pytest.raises(NotFound, match=f"no question #{draft.post.id} here"):
        await service.reports.report(member("eve", workspace="ws2"), draft.post.id, "wrong!!")
