"""Benchmark: rounds for a class and the exam date (issue 44's targets).

    .venv/bin/python bench/bench_round_class.py [--members 200] [--teams 8] [--rounds 3]
        [--cards 500]

1. **Team round answers**: ``--members`` members answer a round question of an
   ``--teams``-team round within 2 s (each first answer also places the member on a team),
   then the second question (already placed); each private reply's latency (target: p95
   within 50 ms). Baseline in the same run: the same crowd in a round without teams.
2. **Team board**: the round's end message with the team board and its picture (target: the
   team board drawn within 200 ms). Baseline: the players' board picture alone.
3. **Exam readiness**: ``--members`` members with ``--cards`` review cards each, written in
   bulk over a generated pack of as many questions; the group's readiness by tag on the exam
   day (target: within 1 s), and one member's ``/exam``. Baseline: the group mastery's recall
   by tag now (the same set-based sum).

Figures are medians (and p95 for replies); the machine and date are printed first.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_rounds import NOW, Chat, crowd, p95, person, right_letter  # noqa: E402
from bench.common import machine_line  # noqa: E402
from bot.app import Built, build_services, due_sources, timer_loop  # noqa: E402
from bot.core.clock import SimulatedClock  # noqa: E402
from bot.core.exams import Exam  # noqa: E402
from bot.core.requests import ExamSet, RoundStart, SettingChange  # noqa: E402
from bot.core.workspace_settings import Setting  # noqa: E402
from bot.questions.loader import load_packs  # noqa: E402
from bot.services.roundchart import BoardBar, draw_round_board  # noqa: E402
from bot.services.rounds import READY  # noqa: E402
from bot.storage.database import Database, open_database  # noqa: E402
from bot.storage.timefmt import to_db  # noqa: E402

TAGS = ("graph", "leaf", "grad", "backward", "detach", "hooks", "no-grad", "inplace")


async def team_round(
    built: Built, clock: SimulatedClock, members: int, teams: int, n: int
) -> dict[str, float]:
    """One round of two questions (``teams`` 0: no teams); reply latencies and the board."""
    services = built.services
    chat = Chat()
    scheduler = timer_loop(built.timed, chat, clock, timedelta(hours=2), concurrency=1)
    for source in due_sources(services, chat):
        scheduler.add_source(source)
    channel = f"class{teams}-{n}"
    starter = person(0, channel)
    base = 1_000_000 * (n + 1) + 10_000 * teams
    out: dict[str, float] = {}
    async with scheduler.running():
        await services.rounds.start(
            starter, RoundStart(questions=2, seconds=20, teams=teams or None)
        )
        for step in (1, 2):
            await scheduler.advance(clock, clock.now() + READY + timedelta(seconds=6))
            question = chat.sent[-1][1]
            assert question.post_id is not None
            letter = await right_letter(built, question)
            ms = await crowd(built, question.post_id, letter, members, base=base)
            out[f"q{step}_p95"] = p95(ms)
            await scheduler.advance(clock, clock.now() + timedelta(seconds=21))
        await scheduler.advance(clock, clock.now() + timedelta(seconds=10))
        found = await built.timed.db.fetchval(
            "SELECT count(*) FROM round_team_members t JOIN rounds r ON r.id = t.round_id "
            "JOIN channels c ON c.id = r.channel_id WHERE c.external_id = ?",
            (channel,),
        )
        assert int(found or 0) == (members if teams else 0), found
        last = await built.timed.db.fetchval("SELECT max(id) FROM rounds")
        ended = await services.rounds._store.get(int(last))
        assert ended is not None
        channel_row = await built.timed.directory.channel_by_id(ended.channel_id)
        began = time.perf_counter()
        board = await services.rounds.board_message(ended, channel_row, None)
        out["board_ms"] = (time.perf_counter() - began) * 1000
        if teams:
            names = {a.filename for a in board.attachments}
            assert names == {"team-board.png", "round-board.png"}, names
    return out


async def seed_cards(db: Database, members: int, cards: int) -> int:
    """``members`` members with ``cards`` reviewed cards each (stabilities 1 to 60 days)."""
    ws = int(await db.fetchval("SELECT id FROM workspaces WHERE external_id = 'ws'"))
    rng = random.Random(44)
    questions = [
        int(r[0])
        for r in await db.fetchall(
            "SELECT q.id FROM questions q JOIN packs k ON k.id = q.pack_id "
            "WHERE k.slug = 'exam' ORDER BY q.id"
        )
    ][:cards]
    async with db.write() as conn:
        ids = await conn.reserve_ids("members", members)
        await conn.executemany(
            "INSERT INTO members (id, workspace_id, external_id, display_name, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            [(m, ws, f"e{i}", f"student{i}", to_db(NOW)) for i, m in enumerate(ids)],
        )
        rows, reviews = [], []
        review_ids = iter(await conn.reserve_ids("reviews", members * len(questions)))
        for m in ids:
            for q in questions:
                last = NOW - timedelta(days=rng.randint(1, 30))
                due = last + timedelta(days=rng.randint(1, 40))
                rid = next(review_ids)
                reviews.append((rid, ws, m, q, 3, to_db(last), 3.0))
                rows.append(
                    (m, q, ws, 2, None, rng.uniform(1, 60), rng.uniform(3, 8), to_db(due),
                     to_db(last), 3, rid)
                )  # fmt: skip
        await conn.executemany(
            "INSERT INTO reviews (id, workspace_id, member_id, question_id, rating, "
            "reviewed_at, elapsed_days) VALUES (?, ?, ?, ?, ?, ?, ?)",
            reviews,
        )
        await conn.executemany(
            "INSERT INTO cards (member_id, question_id, workspace_id, state, step, stability, "
            "difficulty, due, last_review, reviews, last_review_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    return ws


def exam_pack(questions: int) -> str:
    lines = ["pack: exam\ntitle: Exam pack\nitems:"]
    for n in range(questions):
        lines.append(
            f"  - id: e{n}\n    kind: flashcard\n    difficulty: medium\n"
            f"    tags: [{TAGS[n % len(TAGS)]}]\n    prompt: Card {n}?\n    answer: Answer {n}."
        )
    return "\n".join(lines) + "\n"


async def timed(call: object, times: int) -> list[float]:
    samples = []
    for _ in range(times + 1):
        began = time.perf_counter()
        await call()  # type: ignore[operator]
        samples.append((time.perf_counter() - began) * 1000)
    return samples[1:]  # the first warms the caches


async def main(args: argparse.Namespace) -> None:
    print(machine_line())
    databases: list[Database] = []
    try:
        await _main(args, databases)
    finally:  # a crash must not leave the database's threads holding the process open
        for db in databases:
            await db.close()


async def _main(args: argparse.Namespace, databases: list[Database]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = await open_database(Path(tmp) / "bench.sqlite3")
        databases.append(db)
        clock = SimulatedClock(NOW)
        built = build_services(db, clock, default_timezone="UTC", rng=random.Random(3))
        folder = Path(tmp) / "packs"
        folder.mkdir()
        (folder / "exam.yaml").write_text(exam_pack(args.cards))
        packs = [*load_packs(ROOT / "questions").packs, *load_packs(folder).packs]
        await built.services.packs.sync(packs)
        await built.services.standings.stats(person(0), picture=False)  # the workspace
        # Questions answered by a click: the crowd clicks the right letter (a typed
        # question's answer is typed, which the baseline /quiz crowd does not do either).
        await built.services.settings.command(person(0), SettingChange(Setting.ROUND_TYPED, "off"))
        runs = []
        for n in range(args.rounds):
            runs.append(
                (
                    await team_round(built, clock, args.members, args.teams, n),
                    await team_round(built, clock, args.members, 0, n),
                )
            )

        def med(index: int, key: str) -> float:
            return statistics.median(r[index][key] for r in runs)

        bars = [
            BoardBar(f"Team {t} ({args.members // args.teams})", 20 - t, 5, 10, None)
            for t in range(args.teams)
        ]
        players = [BoardBar(f"member{i}", 300 - i, 3, 4, 2.5) for i in range(args.members)]
        team_draw: list[float] = []
        player_draw: list[float] = []
        for _ in range(5):
            began = time.perf_counter()
            draw_round_board("Team board, #class: mean points a player", bars)
            team_draw.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            draw_round_board("Round board, #class", players)
            player_draw.append((time.perf_counter() - began) * 1000)

        # Exam readiness over members x cards.
        ws = await seed_cards(db, args.members, args.cards)
        exams = built.services.exams
        admin = person(0)
        day = (NOW + timedelta(days=20)).date().isoformat()
        await exams.command(admin, ExamSet(day, ()))
        workspace = await built.timed.directory.workspace_by_id(ws)
        group = await timed(lambda: exams.workspace_readiness(workspace), 5)
        found = await exams.workspace_readiness(workspace)
        assert found is not None
        assert sum(t.cards for t in found.tags) >= args.members * args.cards
        member = int(
            await db.fetchval("SELECT id FROM members WHERE external_id = 'e0'")  # a student
        )
        exam = Exam(clock.now().date() + timedelta(days=20))
        one = await timed(lambda: exams.readiness(workspace, member, exam), 5)
        settings = await built.services.review._reviews.settings(ws)
        mastery = built.services.mastery._store
        now_recall = await timed(lambda: mastery.cards(ws, clock.now(), settings), 5)

    print(f"{args.members} members, {args.teams} teams, median of {args.rounds} rounds:")
    print(
        f"  answers, first question (each also joins a team): p95 {med(0, 'q1_p95'):.1f} ms; "
        f"without teams {med(1, 'q1_p95'):.1f} ms; ratio {med(0, 'q1_p95') / med(1, 'q1_p95'):.2f}x"
        " (target p95 <= 50 ms)"
    )
    print(
        f"  answers, second question: p95 {med(0, 'q2_p95'):.1f} ms; without teams "
        f"{med(1, 'q2_p95'):.1f} ms; ratio {med(0, 'q2_p95') / med(1, 'q2_p95'):.2f}x"
    )
    print(
        f"  end of round message with both boards: {med(0, 'board_ms'):.0f} ms; players' board "
        f"only (no teams) {med(1, 'board_ms'):.0f} ms"
    )
    print(
        f"  team board picture: median {statistics.median(team_draw):.0f} ms (target <= 200 ms);"
        f" players' board picture ({args.members} rows, shown up to its limit) "
        f"{statistics.median(player_draw):.0f} ms"
    )
    print(
        f"exam readiness, {args.members} members x {args.cards} cards: group by tag median "
        f"{statistics.median(group):.0f} ms (target <= 1000 ms); baseline recall now "
        f"{statistics.median(now_recall):.0f} ms; ratio "
        f"{statistics.median(group) / statistics.median(now_recall):.2f}x; one member's /exam "
        f"{statistics.median(one):.0f} ms"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--members", type=int, default=200)
    parser.add_argument("--teams", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cards", type=int, default=500)
    asyncio.run(main(parser.parse_args()))
