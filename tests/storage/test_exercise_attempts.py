"""A member's best submission to an exercise, read for that member alone (on every engine)."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.services.bundle import Services
from bot.storage.database import Database
from bot.storage.directory import Directory
from bot.storage.exercises import Attempt, ExerciseStore
from tests.helpers import member

NOW = datetime(2026, 3, 5, 9, 0, tzinfo=UTC)


async def test_best_of_is_that_members_best_open_submission(
    service: Services, db: Database
) -> None:
    post = (await service.quiz.post_question(member("root"))).post
    directory = Directory(db, "UTC")
    workspace = await directory.workspace("console", "elsewhere", None, NOW)
    ann, bob, cid = [
        (await directory.member(workspace, name, name, NOW)).id for name in ("ann", "bob", "cid")
    ]
    store = ExerciseStore(db)

    async def attempt(
        who: int, passed: int, *, forbidden: tuple[str, ...] = (), still_open: bool = True
    ) -> None:
        solved = passed == 4 and not forbidden
        await store.add(Attempt(post.id, who, NOW, passed, 4, solved, forbidden, still_open, "c"))

    await attempt(ann, 1)
    await attempt(ann, 3)
    await attempt(ann, 4, forbidden=("torch.mul",))  # a forbidden name counts 0
    await attempt(bob, 4)
    await attempt(cid, 4, still_open=False)  # after the close: practice, not a best

    best = await store.best_of(post.id, ann)
    assert best is not None
    assert (best.member_id, best.passed, best.solved, best.attempts) == (ann, 3, False, 3)
    assert [b.member_id for b in await store.best(post.id)] == [ann, bob]
    assert await store.best_of(post.id, cid) is None
    for everyone in await store.best(post.id):  # the same rows as the read of everyone's
        assert await store.best_of(post.id, everyone.member_id) == everyone
