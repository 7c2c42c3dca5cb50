"""Benchmark: typed answers under a crowd (issue 43's target: p95 <= 50 ms).

    .venv/bin/python bench/bench_typed.py [--members 200] [--rounds 5] [--repeat 20]

On a SQLite database with the shipped packs and the test pack of typed items, each round:

- **text**: ``--members`` members type an answer to a typed text question within 2 seconds
  (arrivals spread evenly): a third right, a third with a typo, a third wrong; every answer
  that is final must be recorded, and each private reply's latency from its arrival is measured.
- **number**: the same crowd on a typed number question (``12``, ``1.2e1``, ``12.5``...).
- **baseline**: the same crowd clicking a multiple-choice question's letter, in the same run.

Then, with the real fork-server sandbox (the bot's default settings): a **value-of-code**
answer (``torch.full((2,), 3.0)`` to a question whose key is ``x.grad``, the reference
already computed) against one warm ``/run`` of the same expression printed, median of
``--repeat`` each, alternating (target: no more than one warm ``/run`` added).

Figures are medians over rounds, with the ratio to the baseline; the machine and date are
printed with them. The grader alone (no database) is timed too, per call.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import machine_line  # noqa: E402
from bot.app import Built, build_services  # noqa: E402
from bot.core.clock import SimulatedClock  # noqa: E402
from bot.core.errors import StudyError  # noqa: E402
from bot.core.models import ChatContext  # noqa: E402
from bot.core.snippets import RunLimits  # noqa: E402
from bot.questions.loader import load_packs  # noqa: E402
from bot.questions.typed import TextRule, grade_text  # noqa: E402
from bot.sandbox import Sandbox, SandboxConfig  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.storage.database import open_database  # noqa: E402

NOW = datetime(2026, 3, 4, 18, 0, tzinfo=UTC)
SPREAD = 2.0
TYPED = ROOT / "tests" / "data" / "typed_packs"
TEXT_ANSWERS = ("backward", "bakcward", "forward", "loss.backward()", "step", "backwrd")
NUMBER_ANSWERS = ("12", "1.2e1", "12.5", "6", "12.0", "tensor(12.)")


def person(i: int, channel: str) -> ChatContext:
    return ChatContext("bench", "ws", channel, f"u{i}", f"member{i}", channel_name=channel)


def p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1]


async def crowd(
    built: Built, channel: str, post_id: int, answers: tuple[str, ...], members: int
) -> tuple[list[float], int]:
    """``members`` answers spread over :data:`SPREAD` s: latencies (ms) and final answers."""
    quiz = built.services.quiz
    final = 0

    async def type_one(i: int) -> float:
        nonlocal final
        await asyncio.sleep(SPREAD * i / members)
        began = time.perf_counter()
        try:
            await quiz.answer(person(i, channel), post_id, answers[i % len(answers)])
            final += 1
        except StudyError:  # "almost": a free try, not recorded
            pass
        return (time.perf_counter() - began) * 1000

    return list(await asyncio.gather(*(type_one(i) for i in range(members)))), final


async def one_round(built: Built, members: int, n: int) -> dict[str, float]:
    services, db = built.services, built.timed.db
    figures: dict[str, float] = {}
    for name, tag, answers in (
        ("text", "method", TEXT_ANSWERS),
        ("number", "number", NUMBER_ANSWERS),
    ):
        channel = f"{name}{n}"
        draft = await services.quiz.post_question(
            person(0, channel), pack="typed-mini", tags=(tag,)
        )
        ms, final = await crowd(built, channel, draft.post.id, answers, members)
        recorded = int(
            await db.fetchval("SELECT count(*) FROM answers WHERE post_id = ?", (draft.post.id,))
        )
        assert recorded == final, (recorded, final)
        figures[f"{name}_p95"] = p95(ms)
        figures[f"{name}_median"] = statistics.median(ms)
    channel = f"mc{n}"
    draft = await services.quiz.post_question(person(0, channel), kinds=("multiple_choice",))
    ms, _ = await crowd(built, channel, draft.post.id, ("A", "B"), members)  # right or wrong
    figures["mc_p95"] = p95(ms)
    return figures


def grader_us() -> float:
    """The grader alone: microseconds per answer, median of 5 runs of 10,000."""
    rule = TextRule(("loss.backward()", "backward"))
    runs = []
    for _ in range(5):
        began = time.perf_counter()
        for i in range(10_000):
            grade_text(rule, TEXT_ANSWERS[i % len(TEXT_ANSWERS)])
        runs.append((time.perf_counter() - began) / 10_000 * 1e6)
    return statistics.median(runs)


async def value_answers(repeat: int) -> tuple[float, float]:
    """Median ms of a value-of-code answer, and of a warm /run of the same expression."""
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    async with Sandbox(SandboxConfig.from_settings(settings)) as sandbox:
        assert sandbox.available, sandbox.unavailable_reason
        with tempfile.TemporaryDirectory() as tmp:
            db = await open_database(Path(tmp) / "value.sqlite3")
            built = build_services(
                db, SimulatedClock(NOW), rng=random.Random(5), runner=sandbox,
                run_limits=RunLimits(per_minute=100_000),
            )  # fmt: skip
            await built.services.packs.sync(load_packs(TYPED).packs)
            quiz, runs = built.services.quiz, built.services.runs
            await sandbox.wait_warm()
            answers, plain = [], []
            for n in range(repeat):
                channel = f"value{n}"
                asker = person(0, channel)
                draft = await quiz.post_question(asker, pack="typed-mini", tags=("value",))
                if n == 0:  # the reference, computed once per question version and kept
                    await quiz.answer(person(10_000, channel), draft.post.id, "None")
                await sandbox.wait_warm()
                began = time.perf_counter()
                reply = await quiz.answer(asker, draft.post.id, "torch.full((2,), 3.0)")
                answers.append((time.perf_counter() - began) * 1000)
                assert "Correct" in reply.plain_text(), reply.plain_text()
                await sandbox.wait_warm()
                began = time.perf_counter()
                await runs.run(person(1, channel), "import torch\nprint(torch.full((2,), 3.0))")
                plain.append((time.perf_counter() - began) * 1000)
            await db.close()
    return statistics.median(answers), statistics.median(plain)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--members", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--no-sandbox", action="store_true", help="skip the value-of-code part")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        db = await open_database(Path(tmp) / "bench.sqlite3")
        built = build_services(
            db, SimulatedClock(NOW), default_timezone="UTC", rng=random.Random(3)
        )
        packs = [*load_packs(ROOT / "questions").packs, *load_packs(TYPED).packs]
        await built.services.packs.sync(packs)
        for n in range(args.rounds):
            results.append(await one_round(built, args.members, n))
        await db.close()

    def med(key: str) -> float:
        return statistics.median(r[key] for r in results)

    print(machine_line())
    print(f"{args.members} members answer within {SPREAD:.0f} s (median of {args.rounds} rounds):")
    for name in ("text", "number"):
        print(
            f"  typed {name}: reply p95 {med(f'{name}_p95'):.1f} ms "
            f"(median {med(f'{name}_median'):.1f} ms); baseline multiple-choice p95 "
            f"{med('mc_p95'):.1f} ms; ratio {med(f'{name}_p95') / med('mc_p95'):.2f}x"
        )
    print(f"  the grader alone: {grader_us():.1f} us per answer")
    if not args.no_sandbox:
        value_ms, run_ms = await value_answers(args.repeat)
        print(
            f"value of code (median of {args.repeat}): answer {value_ms:.1f} ms; warm /run of "
            f"the same expression {run_ms:.1f} ms; ratio {value_ms / run_ms:.2f}x"
        )


if __name__ == "__main__":
    asyncio.run(main())
