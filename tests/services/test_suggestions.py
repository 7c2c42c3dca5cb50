"""The suggestion queue on both engines: a member's valid /write waits for an admin; approved,
it joins `community` credited to its author; rejected, its author is told why."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
import yaml

from bot.app import build_services
from bot.core.clock import SimulatedClock
from bot.core.errors import BadInput, Forbidden, NotFound
from bot.core.messages import Message
from bot.core.requests import SuggestionApprove, SuggestionReject, SuggestionsList
from bot.questions.loader import load_packs
from bot.questions.written import WrittenQuestion
from bot.services.bundle import Services
from bot.services.suggestions import MAX_PENDING
from bot.storage.database import Database
from tests.conftest import TEST_PACKS
from tests.helpers import member

ANN = member("ann")
BOB = member("bob")
ADMIN = member("root", admin=True)
LEAF = WrittenQuestion(
    prompt="Which tensor is a leaf?",
    choices="* one you created\nthe result of x * 2",
    explanation="Results of tracked operations are not leaves.",
)
GRAPH = WrittenQuestion(prompt="When is the graph freed?", answer="After backward().")


class Chat:
    """A gateway that records what the service sends; ``closed``: members without DMs."""

    def __init__(self, closed: set[str] | None = None) -> None:
        self.dms: list[tuple[str, str, Message]] = []
        self.posts: list[tuple[str, Message]] = []
        self.closed = closed or set()

    async def send_post(self, channel: str, message: Message) -> str:
        self.posts.append((channel, message))
        return str(len(self.posts))

    async def edit_post(self, channel: str, message_id: str, message: Message) -> None:
        self.posts.append((channel, message))

    async def send_dm(self, workspace: str, member: str, message: Message) -> bool:
        if member in self.closed:
            return False
        self.dms.append((workspace, member, message))
        return True


@pytest.fixture
async def svc(db: Database, clock: SimulatedClock, tmp_path: Path) -> Services:
    packs = tmp_path / "packs"
    packs.mkdir()
    shutil.copy(TEST_PACKS / "mini.yaml", packs / "mini.yaml")
    built = build_services(db, clock, rng=random.Random(3), packs_dir=packs)
    await built.services.packs.sync(load_packs(packs).packs)
    return built.services


async def test_an_approved_suggestion_joins_community_credited_to_its_author(
    svc: Services, tmp_path: Path
) -> None:
    queued = await svc.suggestions.write(ANN, LEAF)
    assert queued.ephemeral and queued.title == "✍️ Suggestion #1: valid, waiting for an admin"
    assert not (tmp_path / "packs" / "community.yaml").exists()  # nothing added yet
    with pytest.raises(Forbidden):
        await svc.suggestions.command(ANN, SuggestionsList(), Chat())  # ids and rights, no names

    chat = Chat()
    listing = await svc.suggestions.command(ADMIN, SuggestionsList(), chat)
    assert "#1" in listing.plain_text() and "ann" in listing.plain_text()
    approved = await svc.suggestions.command(ADMIN, SuggestionApprove(1), chat)
    assert "Installed community" in approved.plain_text()
    assert "Suggestion #1 by ann is `community-1` now; ann was told by direct message." in (
        approved.plain_text()
    )
    [(workspace, author, notice)] = chat.dms
    assert (workspace, author) == ("ws1", "id-ann")
    assert "`community-1` in the `community` pack" in notice.plain_text()
    saved = yaml.safe_load((tmp_path / "packs" / "community.yaml").read_text())
    assert [i["id"] for i in saved["items"]] == ["community-1"]

    draft = await svc.quiz.post_question(BOB, pack="community")
    assert draft.message.byline is not None
    assert (draft.message.byline.member, draft.message.byline.name) == ("id-ann", "ann")
    assert "Suggested by @ann" in draft.message.plain_text()
    edit = await svc.quiz.reveal(ADMIN, draft.post.id)
    assert "Suggested by @ann" in edit.message.plain_text()  # the reveal keeps the credit

    with pytest.raises(BadInput, match="already approved"):
        await svc.suggestions.command(ADMIN, SuggestionApprove(1), chat)
    with pytest.raises(NotFound, match="no suggestion #7"):
        await svc.suggestions.command(ADMIN, SuggestionApprove(7), chat)
    # Another workspace's admin cannot decide (or see) this workspace's suggestions.
    other = member("root", admin=True, workspace="ws2")
    with pytest.raises(NotFound):
        await svc.suggestions.command(other, SuggestionApprove(1), chat)


async def test_a_rejected_suggestion_tells_its_author_why(svc: Services, tmp_path: Path) -> None:
    await svc.suggestions.write(BOB, GRAPH)
    chat = Chat(closed={"id-bob"})  # bob takes no DMs: told in the channel he wrote in
    with pytest.raises(BadInput, match="Say why"):
        await svc.suggestions.command(ADMIN, SuggestionReject(1, " "), chat)
    reply = await svc.suggestions.command(
        ADMIN, SuggestionReject(1, "the answer needs more detail"), chat
    )
    assert "Rejected suggestion #1 by bob" in reply.plain_text()
    assert "told in the channel they wrote it in" in reply.plain_text()
    [(channel, notice)] = chat.posts
    assert channel == "general" and not notice.ephemeral
    assert "@bob" in (notice.title or "")
    assert "the answer needs more detail" in notice.plain_text()
    assert not (tmp_path / "packs" / "community.yaml").exists()
    empty = await svc.suggestions.command(ADMIN, SuggestionsList(), chat)
    assert "No suggested questions are waiting" in empty.plain_text()
    with pytest.raises(BadInput, match="already rejected"):
        await svc.suggestions.command(ADMIN, SuggestionApprove(1), chat)


async def test_an_admins_question_is_added_at_once_and_credits_nobody(svc: Services) -> None:
    added = await svc.suggestions.write(ADMIN, LEAF)
    assert "Installed community" in added.plain_text()
    draft = await svc.quiz.post_question(BOB, pack="community")
    assert draft.message.byline is None
    listing = await svc.suggestions.command(ADMIN, SuggestionsList(), Chat())
    assert "No suggested questions are waiting" in listing.plain_text()


async def test_a_member_has_at_most_a_few_suggestions_waiting(svc: Services) -> None:
    for n in range(MAX_PENDING):
        await svc.suggestions.write(ANN, WrittenQuestion(prompt=f"Question {n}?", answer="yes"))
    with pytest.raises(BadInput, match="waiting for an admin already"):
        await svc.suggestions.write(ANN, WrittenQuestion(prompt="One more?", answer="yes"))
    await svc.suggestions.write(BOB, GRAPH)  # another member is not held up
    await svc.suggestions.command(ADMIN, SuggestionReject(1, "not a question"), Chat())
    await svc.suggestions.write(ANN, WrittenQuestion(prompt="One more?", answer="yes"))


async def test_a_member_reads_only_what_they_can_fix_in_their_own_question(
    svc: Services,
) -> None:
    # Valid, with choices the linter warns about (values no check backs): the warnings are
    # the reviewing admin's, not the author's.
    values = WrittenQuestion(prompt="What is 2 + 2 in torch?", choices="* `4`\n`5`")
    queued = (await svc.suggestions.write(ANN, values)).plain_text()
    assert "Suggestion #1: valid" in queued
    assert "community.yaml" not in queued and "backs:" not in queued and "Warning" not in queued
    # Invalid: the problem in the form's own words, without the file or its lines.
    twice = WrittenQuestion(prompt="Which one?", choices="* same\nsame")
    refused = (await svc.suggestions.write(BOB, twice)).plain_text()
    assert "needs a fix" in refused and "• choices: two choices have the same text" in refused
    assert "community.yaml" not in refused and "community-" not in refused
    # The admin who reviews the first still sees the linter's full report.
    approved = await svc.suggestions.command(ADMIN, SuggestionApprove(1), Chat())
    assert "backs: choice" in approved.plain_text()
