"""Rounds for a class (issue 44): accuracy first, and skip votes, through the services and the
one timer loop on SQLite and PostgreSQL (a simulated clock; the gateway records posts)."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from bot.adapters.commands import round_request, settings_request
from bot.app import Built, build_services
from bot.core.clock import SimulatedClock
from bot.core.errors import BadInput, Forbidden, NotFound, PostClosed
from bot.core.requests import RoundSkip, RoundStart
from bot.questions.loader import load_packs
from bot.services.bundle import Services
from bot.services.rounds import READY
from bot.storage.database import Database
from tests.conftest import TEST_PACKS
from tests.helpers import member
from tests.services.test_rounds import ANN, BOB, CARL, DAVE, ROOT, Chat, _points, _right, running

ERIN = member("erin")


async def test_accuracy_first_scores_every_right_answer_alike_and_ranks_ties_by_time(
    built: Built, service: Services, clock: SimulatedClock
) -> None:
    chat = Chat()
    asked = clock.now() + READY
    async with running(built, clock, chat) as sched:
        hello = await service.rounds.command(
            ROOT, round_request("console", ["start", "--questions", "2", "--scoring", "accuracy"])
        )
        assert "Accuracy first: every right answer scores its points" in hello.plain_text()
        await sched.advance(clock, asked)
        [first] = chat.questions()
        assert first.post_id is not None
        right, wrong = await _right(service, first)
        await sched.advance(clock, asked + timedelta(seconds=2))
        quick = await service.quiz.answer(BOB, first.post_id, right)
        await sched.advance(clock, asked + timedelta(seconds=19))
        slow = await service.quiz.answer(ANN, first.post_id, right)
        await service.quiz.answer(CARL, first.post_id, wrong)
        assert _points(quick) == _points(slow)  # the last second scores as the first
        await sched.advance(clock, asked + timedelta(seconds=26))
        second = chat.questions()[1]
        assert second.post_id is not None
        right, _ = await _right(service, second)
        await sched.advance(clock, asked + timedelta(seconds=28))
        await service.quiz.answer(CARL, second.post_id, right)  # carl: one right, quick
        await sched.advance(clock, asked + timedelta(minutes=3))
    [board] = chat.boards()
    text = board.plain_text()
    # bob and ann tie on points (one easy question each); bob's right answer took 2 s and
    # ann's 19 s, so bob is second and ann third: the tie does not share a place.
    lines = [line for line in text.splitlines() if " pts · " in line]
    assert lines[1:] == [
        f"🥈 bob — {_points(quick)} pts · 1/2 right · 2.0 s on right answers",
        f"🥉 ann — {_points(slow)} pts · 1/2 right · 19.0 s on right answers",
    ], lines
    assert lines[0].startswith("🥇 carl — ")
    assert "equal points are ranked by the time taken" in text


async def test_round_scoring_is_a_workspace_setting_and_a_bad_value_is_refused(
    built: Built, service: Services, clock: SimulatedClock
) -> None:
    async def setting(*words: str) -> str:
        reply = await service.settings.command(ROOT, settings_request("console", list(words)))
        return reply.plain_text()

    assert "round-scoring: speed" in await setting()
    with pytest.raises(BadInput, match="`round-scoring` is speed or accuracy, not `fast`"):
        await setting("round-scoring", "fast")
    assert "round-scoring: speed → accuracy" in await setting("round-scoring", "accuracy")
    hello = await service.rounds.start(ROOT, RoundStart(questions=1))
    assert "Accuracy first" in hello.plain_text()
    await service.rounds.stop(ROOT)
    with pytest.raises(BadInput, match="scoring is `speed` or `accuracy`, not `fastest`"):
        await service.rounds.start(ROOT, RoundStart(scoring="fastest"))
    speed = await service.rounds.start(ROOT, RoundStart(questions=1, scoring="speed"))
    assert "Faster correct answers score more" in speed.plain_text()


async def test_a_question_the_players_vote_to_skip_is_revealed_and_scores_nothing(
    db: Database, built: Built, service: Services, clock: SimulatedClock
) -> None:
    chat = Chat()
    asked = clock.now() + READY
    async with running(built, clock, chat) as sched:
        with pytest.raises(NotFound, match="No round is running here"):
            await service.rounds.command(ANN, RoundSkip())
        await service.rounds.start(ROOT, RoundStart(questions=3, seconds=20))
        await sched.advance(clock, asked)
        [first] = chat.questions()
        assert first.post_id is not None
        right, wrong = await _right(service, first)
        await sched.advance(clock, asked + timedelta(seconds=3))
        replies = [
            await service.quiz.answer(who, first.post_id, pick)
            for who, pick in ((ANN, right), (BOB, wrong), (CARL, wrong))
        ]
        kept = _points(replies[0])  # ann's points for question 1
        await sched.advance(clock, asked + timedelta(seconds=21))
        with pytest.raises(BadInput, match="No question is open to skip"):
            await service.rounds.command(ANN, RoundSkip())  # in the pause
        await sched.advance(clock, asked + timedelta(seconds=26))
        second = chat.questions()[1]
        assert second.post_id is not None
        right, _ = await _right(service, second)
        with pytest.raises(Forbidden, match="Only players vote to skip"):
            await service.rounds.command(DAVE, RoundSkip())
        scored = await service.quiz.answer(ANN, second.post_id, right)
        assert _points(scored) > 0
        vote = await service.rounds.command(BOB, RoundSkip())
        assert vote.ephemeral
        assert "Your vote to skip question 2 is in: 1 of the 2 needed" in vote.plain_text()
        again = await service.rounds.command(BOB, RoundSkip())  # a second vote counts once
        assert "1 of the 2 needed" in again.plain_text()

    # Another process (or the bot after a restart) counts the vote already cast.
    other = build_services(db, clock, default_timezone="UTC", rng=random.Random(3))
    await other.services.packs.sync(load_packs(TEST_PACKS).packs)
    after = Chat()
    async with running(other, clock, after) as sched:
        skipped = await other.services.rounds.command(CARL, RoundSkip())
        assert not skipped.ephemeral
        assert skipped.title == "⏭ Question 2 is skipped"
        assert "2 players voted to skip it (2 were needed)" in skipped.plain_text()
        await sched.settle()
        [reveal] = [e for e in after.edits if e.post_id == second.post_id]
        assert "The players voted to skip it: this question scores nothing." in (
            reveal.plain_text()
        )
        with pytest.raises(PostClosed, match="Too late"):
            await other.services.quiz.answer(ERIN, second.post_id, right)
        # The next question follows after the pause, not at the skipped one's deadline.
        await sched.advance(clock, clock.now() + timedelta(seconds=6))
        assert len(after.questions()) == 1
        await sched.advance(clock, clock.now() + timedelta(minutes=3))
    [board] = after.boards()
    text = board.plain_text()
    assert f"ann — {kept} pts · 1/2 right" in text  # of the two questions that counted
    # ann's points for the skipped question were taken back, on every board.
    assert _points(scored) > 0
    week = (await service.standings.leaderboard(ROOT)).plain_text()
    assert f"ann — {kept} pts" in week
    assert await _consistent(db)


async def _consistent(db: Database) -> bool:
    from bot.storage.scores import ScoreStore

    return await ScoreStore(db).consistency_problems() == []


async def _history(service: Services, right: tuple[object, ...], wrong: tuple[object, ...]) -> None:
    """Earlier questions: ``right`` members got them right, ``wrong`` ones wrong."""
    for item in ("d-mc-2", "d-mc-3"):
        draft = await service.quiz.post_question(ROOT, question=item)
        assert draft.post is not None
        post = draft.post.id
        letter, other = await _right(service, draft.message)
        for who in right:
            await service.quiz.answer(who, post, letter)  # type: ignore[arg-type]
        for who in wrong:
            await service.quiz.answer(who, post, other)  # type: ignore[arg-type]


async def test_teams_are_balanced_by_mastery_score_their_mean_and_survive_a_restart(
    db: Database, built: Built, service: Services, clock: SimulatedClock
) -> None:
    await _history(service, right=(ANN, BOB), wrong=(CARL, DAVE))
    for teams, reason in ((1, "2 to 8 teams, not 1"), (50, "2 to 8 teams, not 50")):
        with pytest.raises(BadInput, match=reason):
            await service.rounds.start(ROOT, RoundStart(teams=teams))
    with pytest.raises(BadInput, match="not `many`"):
        round_request("console", ["start", "--teams", "many"])
    chat = Chat()
    asked = clock.now() + READY
    async with running(built, clock, chat) as sched:
        hello = await service.rounds.command(
            ROOT, round_request("console", ["start", "--questions", "2", "--teams", "2"])
        )
        assert "**2 teams** (🔴 Red, 🔵 Blue)" in hello.plain_text() or "2 teams" in (
            hello.plain_text()
        )
        await sched.advance(clock, asked)
        [first] = chat.questions()
        assert first.post_id is not None
        right, wrong = await _right(service, first)
        # Strong ann and bob, weak carl and dave, joining in this order: a plain alternation
        # would put both strong players on Red. Balanced by mastery, each team gets one.
        await sched.advance(clock, asked + timedelta(seconds=2))
        for who, pick in ((ANN, right), (CARL, wrong), (BOB, right), (DAVE, right)):
            await service.quiz.answer(who, first.post_id, pick)
        await sched.advance(clock, asked + timedelta(seconds=21))
        reveal = chat.edits[-1].plain_text()
        assert "ann (🔴)" in reveal and "bob (🔵)" in reveal and "dave (🔴)" in reveal

    # The bot restarts mid-round: assignments are rows, so a late joiner sees them all.
    other = build_services(db, clock, default_timezone="UTC", rng=random.Random(9))
    await other.services.packs.sync(load_packs(TEST_PACKS).packs)
    after = Chat()
    async with running(other, clock, after) as sched:
        await sched.advance(clock, asked + timedelta(seconds=26))
        [second] = after.questions()
        assert second.post_id is not None
        right, _ = await _right(other.services, second)
        # Red (ann, dave) has two right answers, Blue (carl, bob) one: erin joins Blue, the
        # weaker team by mean points, though both have two players.
        await other.services.quiz.answer(ERIN, second.post_id, right)
        await sched.advance(clock, asked + timedelta(minutes=3))
    [board] = after.boards()
    text = board.plain_text()
    teams = text.split("Teams:")[1].split("\n\n")[0] if "Teams:" in text else text
    assert "🔴 Red — " in teams and "· 2 players" in teams
    assert "🔵 Blue — " in teams and "· 3 players" in teams
    red = float(teams.split("🔴 Red — ")[1].split(" pts")[0])
    blue = float(teams.split("🔵 Blue — ")[1].split(" pts")[0])
    rows = await db.fetchall(
        "SELECT m.display_name, t.team FROM round_team_members t "
        "JOIN members m ON m.id = t.member_id ORDER BY m.display_name"
    )
    assert [(str(r[0]), int(r[1])) for r in rows] == [
        ("ann", 0), ("bob", 1), ("carl", 1), ("dave", 0), ("erin", 1),
    ]  # fmt: skip
    assert red > 0 and blue > 0
    names = {a.filename for a in board.attachments}
    assert names == {"team-board.png", "round-board.png"}
    team_alt = next(a.description for a in board.attachments if a.filename == "team-board.png")
    assert f"Red {red:.1f} points a player" in team_alt


async def test_a_team_talk_comes_before_each_question_once_even_across_a_restart(
    db: Database, built: Built, service: Services, clock: SimulatedClock
) -> None:
    with pytest.raises(BadInput, match="A team talk is for team rounds: add --teams N"):
        await service.rounds.start(ROOT, RoundStart(talk=20))
    with pytest.raises(BadInput, match="A team talk lasts 5 to 120 seconds, not 2"):
        await service.rounds.start(ROOT, RoundStart(teams=2, talk=2))
    chat = Chat()
    start = clock.now()
    async with running(built, clock, chat) as sched:
        hello = await service.rounds.start(
            ROOT, RoundStart(questions=2, seconds=20, teams=2, talk=10)
        )
        assert "each question follows a 10 s team talk" in hello.plain_text()
        await sched.advance(clock, start + READY)
        [talk] = [m for m in chat.sent if (m.title or "").startswith("🗣")]
        assert talk.title == "🗣 Team talk: question 1 of 2 in 10 s"
        assert "Nobody is on a team yet" in talk.plain_text()
        assert chat.questions() == []  # the question waits for the talk
        await sched.advance(clock, start + READY + timedelta(seconds=10))
        [first] = chat.questions()
        assert first.post_id is not None
        right, _ = await _right(service, first)
        for who in (ANN, BOB):
            await service.quiz.answer(who, first.post_id, right)
        # Past the reveal and the pause: the second talk names the teams.
        await sched.advance(clock, start + READY + timedelta(seconds=10 + 20 + 6))
    talks = [m for m in chat.sent if (m.title or "").startswith("🗣")]
    assert [t.title for t in talks] == [
        "🗣 Team talk: question 1 of 2 in 10 s",
        "🗣 Team talk: question 2 of 2 in 10 s",
    ]
    assert "🔴 Red: ann" in talks[1].plain_text() and "🔵 Blue: bob" in talks[1].plain_text()
    # A restart during the talk neither repeats it nor skips the question.
    other = build_services(db, clock, default_timezone="UTC", rng=random.Random(5))
    await other.services.packs.sync(load_packs(TEST_PACKS).packs)
    after = Chat()
    async with running(other, clock, after) as sched:
        await sched.settle()
        assert not [m for m in after.sent if (m.title or "").startswith("🗣")]
        await sched.advance(clock, clock.now() + timedelta(seconds=11))
        [second] = after.questions()
        assert (second.title or "").startswith("🏁 Question 2 of 2")


async def test_an_accommodated_member_keeps_their_own_deadline_and_full_points(
    db: Database, built: Built, service: Services, clock: SimulatedClock
) -> None:
    from bot.core.requests import AccommodationClear, AccommodationSet, AccommodationShow

    acc = service.accommodations
    await _history(service, right=(ANN, BOB, CARL), wrong=())  # they are members now
    for typed, reason in (
        ("0", "not x0"),
        ("x100", "not x100"),
        ("lots", "not `lots`"),
    ):
        with pytest.raises(BadInput, match=reason):
            await acc.command(ROOT, AccommodationSet("carl", typed))
    with pytest.raises(BadInput, match="Give extra time"):
        await acc.command(ROOT, AccommodationSet("carl"))
    with pytest.raises(Forbidden, match="Only admins set accommodations"):
        await acc.command(ANN, AccommodationSet("carl", "2"))
    with pytest.raises(NotFound, match="No member called `zed`"):
        await acc.command(ROOT, AccommodationSet("zed", "2"))
    done = await acc.command(ROOT, AccommodationSet("carl", "x2"))
    assert done.ephemeral and "carl: x2 time" in done.plain_text()
    assert "x2 time" in (await acc.command(CARL, AccommodationShow())).plain_text()
    assert "no accommodation" in (await acc.command(ANN, AccommodationShow())).plain_text()
    assert "carl: x2 time" in (await acc.command(ROOT, AccommodationShow())).plain_text()

    chat = Chat()
    asked = clock.now() + READY
    async with running(built, clock, chat) as sched:
        await service.rounds.start(ROOT, RoundStart(questions=2, seconds=20))
        await sched.advance(clock, asked)
        [first] = chat.questions()
        assert first.post_id is not None
        assert "20 s to answer, until 09:00:23" in (first.footer or "")  # the usual deadline
        right, _ = await _right(service, first)
        await sched.advance(clock, asked + timedelta(seconds=15))
        ann = await service.quiz.answer(ANN, first.post_id, right)  # 15 of her 20 s
        await sched.advance(clock, asked + timedelta(seconds=25))
        with pytest.raises(PostClosed, match="Too late"):
            await service.quiz.answer(BOB, first.post_id, right)  # his 20 s are over
        assert not chat.edits  # still open: carl has 40 s
        await sched.advance(clock, asked + timedelta(seconds=30))
        carl = await service.quiz.answer(CARL, first.post_id, right)  # 30 of his 40 s
        # Needing more time costs nothing: 75 % through his window scores as 75 % of hers.
        assert _points(carl) == _points(ann)
        # Every accommodated player has answered: the question closes now, not at 40 s.
        await sched.advance(clock, asked + timedelta(seconds=31))
        assert [e.post_id for e in chat.edits] == [first.post_id]
        await sched.advance(clock, asked + timedelta(seconds=38))
        assert len(chat.questions()) == 2  # the next one after the pause, not after 40 s
        await sched.advance(clock, clock.now() + timedelta(minutes=3))
    [board] = chat.boards()
    assert "x2" not in board.plain_text() and "accommodat" not in board.plain_text()
    cleared = await acc.command(ROOT, AccommodationClear("carl"))
    assert "no accommodation now" in cleared.plain_text()


async def test_a_round_survives_a_restart_mid_question_with_teams_accommodations_and_votes(
    db: Database, built: Built, service: Services, clock: SimulatedClock
) -> None:
    """The issue's done-when: everything a class round holds lives in the database."""
    from bot.core.requests import AccommodationSet

    await _history(service, right=(ANN, BOB), wrong=(CARL, DAVE))
    await service.accommodations.command(ROOT, AccommodationSet("carl", "2"))
    chat = Chat()
    asked = clock.now() + READY
    async with running(built, clock, chat) as sched:
        await service.rounds.start(ROOT, RoundStart(questions=3, seconds=20, teams=2))
        await sched.advance(clock, asked)
        [first] = chat.questions()
        assert first.post_id is not None
        right, wrong = await _right(service, first)
        for who, pick in ((ANN, right), (BOB, wrong), (CARL, right), (DAVE, right)):
            await service.quiz.answer(who, first.post_id, pick)
        await sched.advance(clock, asked + timedelta(seconds=26))
        [_, second] = chat.questions()
        assert second.post_id is not None
        await service.rounds.command(ANN, RoundSkip())  # one vote of the three needed
        teams_before = await db.fetchall(
            "SELECT member_id, team FROM round_team_members ORDER BY member_id"
        )
    # The bot stops mid-question 2 and another process takes over.
    other = build_services(db, clock, default_timezone="UTC", rng=random.Random(21))
    await other.services.packs.sync(load_packs(TEST_PACKS).packs)
    after = Chat()
    async with running(other, clock, after) as sched:
        await sched.advance(clock, asked + timedelta(seconds=28))
        vote = await other.services.rounds.command(BOB, RoundSkip())
        assert "2 of the 3 needed" in vote.plain_text()  # ann's vote was kept
        # carl's own deadline (x2) still holds after the restart: 45 s of his 40 s is late,
        # 30 s is not.
        right, _ = await _right(other.services, second)
        await sched.advance(clock, asked + timedelta(seconds=26 + 30))
        await other.services.quiz.answer(CARL, second.post_id, right)
        with pytest.raises(PostClosed):
            await other.services.quiz.answer(DAVE, second.post_id, right)  # his 20 s are up
        await sched.advance(clock, asked + timedelta(minutes=5))
    teams_after = await db.fetchall(
        "SELECT member_id, team FROM round_team_members ORDER BY member_id"
    )
    assert [tuple(r) for r in teams_after] == [tuple(r) for r in teams_before]
    [board] = after.boards()
    assert "🔴 Red — " in board.plain_text() and "🔵 Blue — " in board.plain_text()


async def test_fewer_choices_removes_one_wrong_choice_from_the_members_review_cards(
    built: Built, service: Services, clock: SimulatedClock
) -> None:
    from bot.core.requests import AccommodationSet

    draft = await service.quiz.post_question(ROOT, question="d-mc-3")  # four choices, A right
    assert draft.post is not None
    await service.quiz.answer(ANN, draft.post.id, "B")  # wrong: due again in a minute
    await service.quiz.answer(BOB, draft.post.id, "B")
    clock.advance(timedelta(minutes=2))
    await service.accommodations.command(ROOT, AccommodationSet("ann", fewer_choices=True))
    ann = await service.review.next(ANN)
    bob = await service.review.next(BOB)
    labels = [b.label for b in ann.message.buttons]
    assert len(labels) == 3 and len(bob.message.buttons) == 4
    text = ann.message.plain_text()
    assert "The saved tensors of the graph" in text  # the right one always stays
    removed = [
        t
        for t in ("The gradients of the leaves", "The optimizer state", "Nothing; it is ignored")
        if t not in text
    ]
    assert len(removed) == 1
    # Graded against the choices ann was shown: D is no answer on her card.
    with pytest.raises(BadInput, match="choose one of A, B, C"):
        await service.review.grade(ANN, ann.key or 0, "D", reviewed=0)
    right = next(b for b in ann.message.buttons if b.value.startswith("A"))
    after = await service.review.click(ANN, ann.key or 0, right.value)
    assert after.feedback is not None and "Correct" in after.feedback.plain_text()
