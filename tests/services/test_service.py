"""The study loop through Services, on a real SQLite file and a simulated clock."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import replace
from datetime import timedelta

import pytest

from bot.app import build_services
from bot.core.clock import SimulatedClock
from bot.core.errors import AlreadyAnswered, BadInput, Forbidden, NotFound, PostClosed
from bot.core.messages import Action
from bot.services.bundle import Services
from bot.services.posting import PostDraft
from bot.storage.database import Database
from tests.helpers import member

ANN, BOB = member("ann"), member("bob")
ADMIN = member("root", admin=True)


async def _mc(service: Services, who=ANN) -> PostDraft:  # type: ignore[no-untyped-def]
    """The medium multiple-choice question of the test pack (correct answer: B)."""
    return await service.quiz.post_question(who, pack="mini", difficulty="medium")


async def test_no_question_repeats_in_a_channel_until_the_pool_is_exhausted(
    service: Services,
) -> None:
    first_round = [(await service.quiz.post_question(ANN)).message.question_id for _ in range(6)]
    assert len(set(first_round)) == 6
    second_round = [(await service.quiz.post_question(ANN)).message.question_id for _ in range(6)]
    assert sorted(second_round) == sorted(first_round)
    # Another channel has its own history.
    other = await service.quiz.post_question(member("ann", channel="random"))
    assert other.message.question_id in first_round


async def test_a_new_round_never_starts_with_the_question_just_posted(
    service: Services,
) -> None:
    # Two hard questions: every second post starts a new round.
    asked = [
        (await service.quiz.post_question(ANN, difficulty="hard")).message.question_id
        for _ in range(30)
    ]
    assert sorted(set(asked)) == ["d-mc-3", "d-prac-1"]
    assert all(a != b for a, b in itertools.pairwise(asked)), asked


async def test_question_post_has_buttons_that_carry_post_and_choice(service: Services) -> None:
    draft = await _mc(service)
    assert [b.custom_id for b in draft.message.buttons] == [
        f"answer:{draft.post.id}:A",
        f"answer:{draft.post.id}:B",
    ]
    assert draft.message.choices == ("A", "B")
    assert not draft.message.ephemeral


async def test_first_answer_counts_and_a_second_is_refused_privately(service: Services) -> None:
    draft = await _mc(service)
    reply = await service.quiz.answer(ANN, draft.post.id, "b")
    assert reply.ephemeral and "Correct" in reply.plain_text() and "+20" in reply.plain_text()
    with pytest.raises(AlreadyAnswered, match=r"already answered.*\(B\)"):
        await service.quiz.answer(ANN, draft.post.id, "A")
    wrong = (await service.quiz.answer(BOB, draft.post.id, "A")).plain_text()
    # Wrong, and told so, without the right letter before the reveal.
    assert wrong == (
        "❌ Not quite: you picked A. The answer is shown when the question closes. Streak: 1 day."
        "\n\nYour next review of this card: in 1 minute (`review`)."
    )


async def test_answers_are_validated(service: Services) -> None:
    draft = await _mc(service)
    with pytest.raises(BadInput, match="choose one of A, B"):
        await service.quiz.answer(ANN, draft.post.id, "E")
    with pytest.raises(NotFound):
        await service.quiz.answer(ANN, 9999, "A")


async def test_a_post_from_another_workspace_is_not_found(service: Services) -> None:
    draft = await _mc(service)
    with pytest.raises(NotFound):
        await service.quiz.answer(member("eve", workspace="elsewhere"), draft.post.id, "B")


async def test_reveal_shows_answer_breakdown_and_closes(service: Services) -> None:
    draft = await _mc(service)
    await service.quiz.answer(ANN, draft.post.id, "B")
    await service.quiz.answer(BOB, draft.post.id, "A")
    await service.quiz.answer(member("cy"), draft.post.id, "B")
    await service.quiz.answer(member("di"), draft.post.id, "B")
    edit = await service.quiz.reveal(ANN, draft.post.id)
    text = edit.message.plain_text()
    assert "✅ B. As the forward pass runs — 3 (75%)" in text
    assert "▫️ A. Before the program runs — 1 (25%)" in text
    assert "Each operation records itself" in text  # the choice's explanation
    assert "PyTorch builds the graph at run time." in text
    assert edit.message.buttons == ()
    with pytest.raises(PostClosed):
        await service.quiz.answer(member("late"), draft.post.id, "B")
    with pytest.raises(PostClosed, match="already closed"):
        await service.quiz.reveal(ADMIN, draft.post.id)


async def test_only_the_asker_or_an_admin_may_reveal(service: Services) -> None:
    draft = await _mc(service)
    with pytest.raises(Forbidden):
        await service.quiz.reveal(BOB, draft.post.id)
    await service.quiz.reveal(ADMIN, draft.post.id)


async def test_practice_reveal_has_steps_mistakes_and_hints(service: Services) -> None:
    draft = await service.quiz.post_question(ANN, pack="mini", difficulty="hard", tags=())
    while draft.message.question_id != "d-prac-1":
        draft = await service.quiz.post_question(ANN, pack="mini", difficulty="hard")
    assert Action.HINT in {b.action for b in draft.message.buttons}
    hint = await service.quiz.hint(BOB, draft.post.id)
    assert hint.ephemeral and "Differentiate 3x." in hint.plain_text()
    assert "    (x * 3).backward()" in draft.message.plain_text()
    await service.quiz.answer(BOB, draft.post.id, "A")
    edit = await service.quiz.reveal(ADMIN, draft.post.id)
    text = edit.message.plain_text()
    assert "Solution:\n1. d(3x)/dx = 3" in text
    assert "Common mistakes:\n• Confusing value and gradient" in text
    assert "Final answer:\n3.0" in text


async def test_flashcards_are_shown_privately_then_self_graded(service: Services) -> None:
    draft = await service.quiz.post_question(
        ANN, pack="mini", difficulty="easy", tags=("autograd",)
    )
    assert draft.message.question_id == "d-flash-1"
    assert [b.action for b in draft.message.buttons] == [Action.SHOW]
    back = await service.quiz.show_card(BOB, draft.post.id)
    assert back.ephemeral and "record operations" in back.plain_text()
    assert [b.custom_id for b in back.buttons] == [
        f"answer:{draft.post.id}:again",
        f"answer:{draft.post.id}:hard",
        f"answer:{draft.post.id}:good",
        f"answer:{draft.post.id}:easy",
    ]
    # knew/forgot stay as the words for Good and Again.
    assert "+5 points" in (await service.quiz.answer(BOB, draft.post.id, "knew")).plain_text()
    assert "+0" in (await service.quiz.answer(ANN, draft.post.id, "FORGOT")).plain_text()
    text = (await service.quiz.reveal(ADMIN, draft.post.id)).message.plain_text()
    assert "knew it: 1 (50%) · didn't: 1 (50%)" in text


async def test_open_prompts_are_not_scored(service: Services) -> None:
    draft = await service.quiz.post_question(ANN, pack="mini", tags=())
    while draft.message.question_id != "d-open-1":
        draft = await service.quiz.post_question(ANN, pack="mini")
    assert draft.message.choices == ()
    with pytest.raises(BadInput, match="not scored"):
        await service.quiz.answer(BOB, draft.post.id, "A")
    text = (await service.quiz.reveal(ADMIN, draft.post.id)).message.plain_text()
    assert "A model answer:\nBecause ordinary Python runs" in text


async def test_unknown_pack_gets_a_suggestion(service: Services) -> None:
    with pytest.raises(NotFound, match="Did you mean `mini`"):
        await service.quiz.post_question(ANN, pack="mimi")


async def test_an_answer_after_the_window_closes_is_refused(
    service: Services, clock: SimulatedClock
) -> None:
    draft = await service.quiz.post_question(
        ANN, pack="mini", difficulty="medium", closes_at=clock.now() + timedelta(minutes=30)
    )
    assert "Answers close at" in draft.message.plain_text()
    clock.advance(timedelta(minutes=31))
    with pytest.raises(PostClosed):
        await service.quiz.answer(BOB, draft.post.id, "B")


async def test_leaderboard_windows_and_ranks(service: Services, clock: SimulatedClock) -> None:
    draft = await _mc(service)  # medium: 20 points
    await service.quiz.answer(ANN, draft.post.id, "B")
    clock.advance(timedelta(days=7))  # next week
    hard = await service.quiz.post_question(BOB, pack="mini", difficulty="hard")
    while hard.message.question_id != "d-mc-3":
        hard = await service.quiz.post_question(BOB, pack="mini", difficulty="hard")
    await service.quiz.answer(BOB, hard.post.id, "A")
    week = (await service.standings.leaderboard(ANN, "week")).plain_text()
    assert "bob — 30 pts (1 answer)" in week and "ann" not in week.split("\n\n")[1]
    assert "ann, you have no points this week yet." in week
    everything = (await service.standings.leaderboard(ANN, "all")).plain_text()
    assert everything.index("bob — 30") < everything.index("ann — 20")
    with pytest.raises(BadInput, match="week, month or all"):
        await service.standings.leaderboard(ANN, "year")


async def test_stats_and_streak_over_days(service: Services, clock: SimulatedClock) -> None:
    for _ in range(3):
        draft = await service.quiz.post_question(ADMIN, pack="mini")
        while draft.message.choices in ((), ("again", "hard", "good", "easy")):
            draft = await service.quiz.post_question(ADMIN, pack="mini")
        await service.quiz.answer(ANN, draft.post.id, "A")
        clock.advance(timedelta(days=1))
    text = (await service.standings.stats(ANN)).plain_text()
    assert "Answered: 3" in text and "Streak: 3 days (best 3)" in text
    clock.advance(timedelta(days=2))
    text = (await service.standings.stats(BOB, "ann")).plain_text()
    assert text.startswith("📈 Stats for ann") and "Streak: 0 days (best 3)" in text
    with pytest.raises(NotFound):
        await service.standings.stats(ANN, "nobody")


async def test_two_hundred_members_answer_at_once_each_recorded_once(
    service: Services, db: Database
) -> None:
    draft = await _mc(service)
    members = [member(f"m{i}") for i in range(200)]
    # Everyone clicks twice at the same moment (a double click); the first one must count.
    results = await asyncio.gather(
        *(service.quiz.answer(m, draft.post.id, choice) for m in members for choice in ("B", "A")),
        return_exceptions=True,
    )
    recorded = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, AlreadyAnswered)]
    assert len(recorded) == 200 and len(refused) == 200
    assert all("Correct" in r.plain_text() for r in recorded)
    post = draft.post.id
    assert await db.fetchval("SELECT count(*) FROM answers WHERE post_id = ?", (post,)) == 200
    assert (
        await db.fetchval(
            "SELECT count(DISTINCT member_id) FROM answers WHERE post_id = ? AND choice = 'B'",
            (post,),
        )
        == 200
    )
    assert await db.fetchval("SELECT count(*) FROM score_events WHERE reason = 'answer'") == 200
    assert await db.fetchval("SELECT sum(points) FROM score_events") == 200 * 20


async def test_answers_racing_a_reveal_are_either_counted_or_refused(
    service: Services, db: Database
) -> None:
    draft = await _mc(service)
    members = [member(f"r{i}") for i in range(50)]
    answers = [service.quiz.answer(m, draft.post.id, "B") for m in members]
    results = await asyncio.gather(
        *answers[:25],
        service.quiz.reveal(ADMIN, draft.post.id),
        *answers[25:],
        return_exceptions=True,
    )
    accepted = sum(1 for r in results[:25] + results[26:] if not isinstance(r, BaseException))
    closed = sum(1 for r in results if isinstance(r, PostClosed))
    assert accepted + closed == 50
    assert await db.fetchval("SELECT count(*) FROM answers") == accepted


async def test_an_asked_for_question_closes_after_the_quiz_window(
    db: Database, clock: SimulatedClock
) -> None:
    from bot.questions.loader import load_packs
    from tests.conftest import TEST_PACKS

    built = build_services(db, clock, quiz_window=timedelta(minutes=30))

    svc = built.services
    await svc.packs.sync(load_packs(TEST_PACKS).packs)
    draft = await svc.quiz.post_question(ANN, pack="mini", difficulty="medium")
    assert draft.post.closes_at == clock.now() + timedelta(minutes=30)
    assert "Answers close at Wed 09:30 (UTC)." in draft.message.plain_text()
    clock.advance(timedelta(minutes=30))
    with pytest.raises(PostClosed):
        await svc.quiz.answer(BOB, draft.post.id, "B")


async def test_a_failed_answer_batch_leaves_no_member_id_behind(
    service: Services, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rolled-back batch must not cache the new member's id: SQLite gives it out again."""
    from bot.storage.answers import AnswerWriter

    draft = await _mc(service)
    real_score = AnswerWriter._score

    def boom(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("disk full")

    monkeypatch.setattr(AnswerWriter, "_score", boom)
    with pytest.raises(RuntimeError):
        await service.quiz.answer(member("zed"), draft.post.id, "B")
    monkeypatch.setattr(AnswerWriter, "_score", real_score)
    await service.quiz.answer(member("yan"), draft.post.id, "B")  # takes the id zed would have had
    await service.quiz.answer(member("zed"), draft.post.id, "A")
    zed = (await service.standings.stats(member("zed"))).plain_text()
    assert "Answered: 1 · correct: 0" in zed
    rows = await db.fetchall(
        "SELECT m.display_name, a.choice FROM answers a JOIN members m ON m.id = a.member_id"
    )
    assert sorted((r[0], r[1]) for r in rows) == [("yan", "B"), ("zed", "A")]


def test_bold_pairs_even_single_characters() -> None:
    from bot.core.messages import Message, Section

    text = Message(sections=(Section(body="Points: **5** all time, **12** this week"),))
    assert text.plain_text() == "Points: 5 all time, 12 this week"


async def test_names_cannot_inject_links_or_pings(service: Services) -> None:
    draft = await _mc(service)
    sly = member("[Free Nitro](https://evil.example) @everyone")
    await service.quiz.answer(sly, draft.post.id, "B")
    board = await service.standings.leaderboard(ANN, "all")
    body = board.sections[0].body
    assert "\\[Free Nitro\\](https://evil.example)" in body
    assert "@everyone" not in body


async def test_quiz_filters_are_validated_in_the_core(service: Services) -> None:
    with pytest.raises(BadInput, match="difficulty: 'extreme' is not one of easy, medium, hard"):
        await service.quiz.post_question(ANN, difficulty="extreme")
    with pytest.raises(BadInput, match="tags: '%' is not a tag"):
        await service.quiz.post_question(ANN, tags=("%",))
    with pytest.raises(BadInput) as refused:
        await service.quiz.post_question(ANN, difficulty="impossible")
    assert str(refused.value) == "difficulty: 'impossible' is not one of easy, medium, hard."
    draft = await service.quiz.post_question(ANN, difficulty="HARD", tags=("Retain-Graph",))
    assert draft.message.question_id == "d-mc-3"


async def test_no_open_question_names_quiz_as_members_type_it(service: Services) -> None:
    with pytest.raises(
        NotFound, match=r"no open question in this channel\. Ask for one with `quiz`\.$"
    ):
        await service.quiz.answer_latest(ANN, "A")
    console = replace(ANN, command_prefix="/")
    with pytest.raises(NotFound, match=r"Ask for one with `/quiz`\.$"):
        await service.quiz.hint(console, None)
    slack = replace(ANN, command_prefix="/study ")
    with pytest.raises(NotFound, match=r"Ask for one with `/study quiz`\.$"):
        await service.quiz.reveal(slack)
