"""Benchmark: item analysis on a big group (issue 45's targets).

    .venv/bin/python bench/bench_item_analysis.py [--answers 100000] [--questions 500]
        [--members 1000] [--requests 20] [--db postgresql://...]

A workspace with ``--questions`` multiple-choice questions (a generated pack, synced as any
pack), asked in 4 posts each with a drawn choice order, and ``--answers`` answers of
``--members`` members written in bulk: each member has an ability and each question a
difficulty, so strong members are right more often; five questions have a wrong key (strong
members miss them). Then, through the real services and the real web app (httpx's ASGI
transport, signed in by a one-time link):

1. **Questions page**: ``GET /w/{ws}/questions``, ``--requests`` times after a warm-up; median
   and p95 (target: p95 within 100 ms). Baseline in the same run: the Boards page. Then five
   times after a change: the page (the figures last counted, a recount started) and how long
   until the recount is current.
2. **Group mastery picture**: the admins' picture of tags x weeks (target: within 500 ms).
   Baseline: one member's ``/stats`` picture.
3. **Gradebook export**: the CSV of every member (target: within 2 s). Baseline: the scores
   export (``studybot scores export``'s rows).

Figures are medians (and p95 for the page); the machine and date are printed first.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from bench.common import machine_line  # noqa: E402
from bot.app import build_services  # noqa: E402
from bot.core.choice_order import choice_order  # noqa: E402
from bot.core.clock import SimulatedClock  # noqa: E402
from bot.core.models import ChatContext  # noqa: E402
from bot.questions.loader import load_packs  # noqa: E402
from bot.services.web_access import Person  # noqa: E402
from bot.storage.database import Database, open_database  # noqa: E402
from bot.storage.postgres import PostgresDatabase  # noqa: E402
from bot.storage.timefmt import to_db  # noqa: E402
from bot.web.app import create_app  # noqa: E402

NOW = datetime(2026, 3, 30, 12, 0, tzinfo=UTC)
POSTS_PER_QUESTION = 4
WRONG_KEYS = 5
HOUR = timedelta(hours=1)
TAGS = ("graph", "leaf", "grad", "backward", "detach", "hooks", "no-grad", "inplace")


def admin() -> ChatContext:
    return ChatContext(
        "console", "console", "study", "me", "me", is_admin=True, channel_name="study",
        workspace_name="console", command_prefix="/",
    )  # fmt: skip


def pack_text(questions: int) -> str:
    lines = ["pack: bench\ntitle: Bench pack\nitems:"]
    for n in range(questions):
        lines.append(
            f"  - id: q{n}\n    kind: multiple_choice\n    difficulty: medium\n"
            f"    tags: [{TAGS[n % len(TAGS)]}]\n    prompt: Question {n}?\n    choices:\n"
            f"      - text: Right {n}\n        correct: true\n      - text: Wrong {n}a\n"
            f"      - text: Wrong {n}b\n      - text: Wrong {n}c"
        )
    return "\n".join(lines) + "\n"


async def seed(db: Database, ws: int, channel: int, args: argparse.Namespace) -> None:
    """Members, posts, answers, score events, and reviews with cards, written in bulk."""
    rng = random.Random(45)
    ability = [rng.gauss(0, 1) for _ in range(args.members)]
    versions = [
        int(r[0])
        for r in await db.fetchall(
            "SELECT current_version_id FROM questions q JOIN packs k ON k.id = q.pack_id "
            "WHERE k.slug = 'bench' ORDER BY q.id"
        )
    ]
    question_ids = [
        int(r[0])
        for r in await db.fetchall(
            "SELECT q.id FROM questions q JOIN packs k ON k.id = q.pack_id "
            "WHERE k.slug = 'bench' ORDER BY q.id"
        )
    ]
    difficulty = [rng.gauss(0, 1) for _ in versions]
    async with db.write() as tx:
        member_ids = await tx.reserve_ids("members", args.members)
        await tx.executemany(
            "INSERT INTO members (id, workspace_id, external_id, display_name, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            [(m, ws, f"u{i}", f"member{i}", to_db(NOW)) for i, m in enumerate(member_ids)],
        )
        posts = []
        post_ids = await tx.reserve_ids("posts", len(versions) * POSTS_PER_QUESTION)
        for index, post_id in enumerate(post_ids):
            q = index % len(versions)
            at = NOW - timedelta(days=rng.randint(0, 55), minutes=rng.randint(0, 600))
            posts.append((post_id, q, at, rng.getrandbits(40)))
        await tx.executemany(
            "INSERT INTO posts (id, channel_id, question_version_id, posted_at, closes_at, "
            "closed_at, choice_seed) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (p, channel, versions[q], to_db(at), to_db(at + HOUR), to_db(at + HOUR), seed_)
                for p, q, at, seed_ in posts
            ],
        )
        per_post = max(1, args.answers // len(posts))
        answer_ids = await tx.reserve_ids("answers", per_post * len(posts))
        answers, events = [], []
        next_id = iter(answer_ids)
        for post_id, q, at, seed_ in posts:
            key_at = choice_order(seed_, 4).index(0)  # where the right choice is shown
            for m in rng.sample(range(args.members), per_post):
                p = 1 / (1 + math.exp(difficulty[q] - ability[m]))
                right = rng.random() < p
                if q < WRONG_KEYS:
                    right = not right  # a wrong key: the strong "miss" it
                letter = "ABCD"[key_at] if right else "ABCD"[(key_at + rng.randint(1, 3)) % 4]
                answered = at + timedelta(seconds=rng.randint(3, 900))
                answer_id = next(next_id)
                answers.append(
                    (answer_id, post_id, member_ids[m], letter, int(right), to_db(answered),
                     answered.date().isoformat())
                )  # fmt: skip
                if right:
                    events.append((ws, member_ids[m], answer_id, "answer", 10, to_db(answered)))
        await tx.executemany(
            "INSERT INTO answers (id, post_id, member_id, choice, correct, answered_at, "
            "local_day) VALUES (?, ?, ?, ?, ?, ?, ?)",
            answers,
        )
        await tx.executemany(
            "INSERT INTO score_events (workspace_id, member_id, answer_id, reason, points, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?)",
            events,
        )
        # Each member reviews 20 cards: a review log row and the card it left.
        review_ids = await tx.reserve_ids("reviews", args.members * 20)
        reviews, cards = [], []
        ids = iter(review_ids)
        for m in member_ids:
            for q in rng.sample(question_ids, 20):
                rid = next(ids)
                last = NOW - timedelta(days=rng.randint(1, 30))
                reviews.append((rid, ws, m, q, rng.choice((1, 3, 3, 4)), to_db(last), 3.0))
                due = last + timedelta(days=rng.randint(1, 40))
                cards.append(
                    (m, q, ws, 2, None, rng.uniform(2, 40), rng.uniform(3, 8), to_db(due),
                     to_db(last), 2, rid)
                )  # fmt: skip
        await tx.executemany(
            "INSERT INTO reviews (id, workspace_id, member_id, question_id, rating, "
            "reviewed_at, elapsed_days) VALUES (?, ?, ?, ?, ?, ?, ?)",
            reviews,
        )
        await tx.executemany(
            "INSERT INTO cards (member_id, question_id, workspace_id, state, step, stability, "
            "difficulty, due, last_review, reviews, last_review_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            cards,
        )


async def timed(call: Callable[[], Awaitable[object]], times: int) -> list[float]:
    await call()  # warm-up
    samples = []
    for _ in range(times):
        began = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - began) * 1000)
    return samples


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def main(args: argparse.Namespace) -> None:
    print(machine_line())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "packs"
        folder.mkdir()
        (folder / "bench.yaml").write_text(pack_text(args.questions))
        db = await open_database(args.db or Path(tmp) / "bench.sqlite3")
        try:
            clock = SimulatedClock(NOW)
            services = build_services(db, clock, default_timezone="UTC").services
            loaded = load_packs(folder)
            assert not loaded.problems, loaded.problems
            await services.packs.sync(loaded.packs)
            workspace, channel = await services.places.channel(admin())
            began = time.perf_counter()
            await seed(db, workspace.id, channel.id, args)
            if isinstance(db, PostgresDatabase):
                # A group's answers come in over weeks and autovacuum has analysed them; a
                # bulk seed has no statistics yet (``db migrate-to`` analyses for the same
                # reason).
                await db.analyze()
            print(
                f"seeded {args.answers:,} answers, {args.questions} questions, "
                f"{args.members:,} members on {db.engine} in {time.perf_counter() - began:.1f} s"
            )
            app = create_app(services, secret=b"bench-secret-0123456789abcdef")
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as web:
                token = await services.web.make_link_token(
                    Person("console", "me", "me"), [workspace.id]
                )
                form = await web.get(f"/signin?token={token}")
                csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
                assert csrf
                done = await web.post("/signin", data={"csrf": csrf[1], "token": token})
                assert done.status_code == 303, done.text

                async def page(path: str) -> None:
                    got = await web.get(f"/w/{workspace.id}/{path}")
                    assert got.status_code == 200, got.text[:500]

                questions = await timed(lambda: page("questions"), args.requests)
                # After a change (a hint seen): the page shows the figures last counted and
                # starts one recount in the background; how long until the count is current.
                changed, recount = [], []
                posts = [int(r[0]) for r in await db.fetchall("SELECT id FROM posts LIMIT 5")]
                for post_id in posts:
                    async with db.write() as tx:
                        await tx.execute(
                            "INSERT INTO hint_views (post_id, member_id, shown_at) "
                            "SELECT ?, min(id), ? FROM members",
                            (post_id, to_db(NOW)),
                        )
                    began = time.perf_counter()
                    await page("questions")
                    changed.append((time.perf_counter() - began) * 1000)
                    await asyncio.gather(*services.analysis._recounts.values())
                    recount.append((time.perf_counter() - began) * 1000)
                boards = await timed(lambda: page("boards"), args.requests)
                shown = (await web.get(f"/w/{workspace.id}/questions")).text
                flagged = len(re.findall(r'class="flagged"', shown))
            ctx = admin()
            gradebook = await timed(lambda: services.analysis.gradebook_csv(ctx), 5)
            rows = (await services.analysis.gradebook_csv(ctx)).count("\n") - 1

            from bot.app import Wiring

            upkeep = Wiring().upkeep(db)
            scores_export = await timed(lambda: upkeep.export_scores(None, NOW), 5)
            mastery = services.mastery
            if mastery is not None:

                async def fresh_picture() -> object:
                    mastery._recent.clear()  # drawn afresh each time, not reused
                    return await mastery.workspace_picture(workspace.id)

                picture = await timed(fresh_picture, 5)
                member = ChatContext(
                    "console", "console", "study", "u1", "member1", channel_name="study",
                    workspace_name="console", command_prefix="/",
                )  # fmt: skip
                stats = await timed(lambda: services.standings.stats(member, None), 5)
            print(
                f"flagged rows on the Questions page: {flagged} (wrong keys seeded: {WRONG_KEYS})"
            )
            print(f"gradebook rows: {rows}")
            print(
                f"Questions page: median {statistics.median(questions):.0f} ms, "
                f"p95 {p95(questions):.0f} ms (target p95 <= 100 ms); Boards page p95 "
                f"{p95(boards):.0f} ms; ratio {p95(questions) / p95(boards):.2f}x"
            )
            print(
                f"Questions page right after a change (figures last counted, recount started): "
                f"median {statistics.median(changed):.0f} ms, max {max(changed):.0f} ms; "
                f"recount current after median {statistics.median(recount):.0f} ms, "
                f"max {max(recount):.0f} ms"
            )
            if mastery is not None:
                print(
                    f"group mastery picture: median {statistics.median(picture):.0f} ms "
                    f"(target <= 500 ms); one member's /stats picture "
                    f"{statistics.median(stats):.0f} ms; ratio "
                    f"{statistics.median(picture) / statistics.median(stats):.2f}x"
                )
            print(
                f"gradebook export: median {statistics.median(gradebook):.0f} ms "
                f"(target <= 2000 ms); scores export {statistics.median(scores_export):.0f} ms; "
                f"ratio {statistics.median(gradebook) / statistics.median(scores_export):.2f}x"
            )
        finally:
            await db.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--members", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--db", default=None, help="a postgresql:// URL (default: SQLite)")
    asyncio.run(main(parser.parse_args()))
