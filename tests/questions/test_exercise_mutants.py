"""Every shipped exercise's grader, tested by its own mutants through the real jail and judge.

Each ``wrong`` solution is submitted as a member's would be and must not be solved, each for a
reason of its own (a wrong value, a graph, a count, a forbidden name), not because the jail
broke; each ``also_right`` one must be solved on two seeds. This is what ``questions check``
holds a pack to, one test per exercise so that a failure names it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot.questions.judge import Verdict, exercise_spec, judge
from bot.questions.loader import load_packs
from bot.questions.schema import Exercise
from bot.sandbox import Sandbox
from bot.sandbox.exercise import ExerciseReport
from tests.sandbox.sandbox_helpers import sandbox_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
module_loop = pytest.mark.asyncio(loop_scope="module")

PACKS = Path(__file__).resolve().parents[2] / "questions"
EXERCISES = [
    item
    for loaded in load_packs(PACKS).packs
    for item in loaded.pack.items
    if isinstance(item, Exercise)
]
#: Failures that say the jail, not the solution, went wrong.
_BROKEN = ("frames are not available", "report could not be read", "ended without")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sandbox() -> AsyncIterator[Sandbox]:
    async with Sandbox(sandbox_config(pool_size=2, timeout=30.0)) as sb:
        assert sb.available, sb.unavailable_reason
        yield sb


async def _verdict(
    sb: Sandbox, item: Exercise, code: str, ref: ExerciseReport, seed: int
) -> Verdict:
    result = await sb.run(code, timeout=item.time_limit + 5, exercise=exercise_spec(item, seed))
    return judge(item, result.exercise, ref, None if result.exercise else result.stderr[-300:])


async def _reference(sb: Sandbox, item: Exercise, seed: int) -> ExerciseReport:
    result = await sb.run(
        item.solution, timeout=item.time_limit + 5, exercise=exercise_spec(item, seed)
    )
    assert result.exercise is not None, result.stderr
    return result.exercise


def test_every_exercise_ships_mutants() -> None:
    assert len(EXERCISES) == 13
    for item in EXERCISES:
        assert len(item.wrong) >= 3, item.id
        assert item.also_right, item.id


@module_loop
@pytest.mark.parametrize("item", EXERCISES, ids=lambda item: item.id)
async def test_wrong_solutions_fail_and_other_right_ones_pass(
    sandbox: Sandbox, item: Exercise
) -> None:
    ref = await _reference(sandbox, item, 11)
    for number, wrong in enumerate(item.wrong):
        verdict = await _verdict(sandbox, item, wrong.code, ref, 11)
        assert not verdict.solved, f"wrong[{number}] passed: {wrong.why}"
        reasons = [c.reason or "" for c in verdict.checks if not c.passed]
        said = " ".join([*reasons, verdict.problem or ""])
        assert not any(b in said for b in _BROKEN), f"wrong[{number}]: {said}"
    for seed in (11, 12):
        ref = ref if seed == 11 else await _reference(sandbox, item, seed)
        for number, right in enumerate(item.also_right):
            verdict = await _verdict(sandbox, item, right.code, ref, seed)
            failed = [f"{c.label}: {c.reason}" for c in verdict.checks if not c.passed]
            assert verdict.solved, (
                f"also_right[{number}] ({right.why}) failed on seed {seed}: "
                f"{verdict.problem or verdict.forbidden or failed}"
            )


@pytest.mark.parametrize(
    ("exercise", "number", "reason"),
    [
        ("ex-silu-backward", 0, "holds SiluBackward0"),  # F.silu
        ("ex-silu-backward", 1, "holds SiluBackward0"),  # from torch.nn.functional import silu
        ("ex-silu-backward", 2, "holds SiluBackward0"),  # torch._C._nn.silu
        ("ex-silu-backward", 3, "holds MulBackward0, SigmoidBackward0"),  # x * sigmoid(x)
        ("ex-silu-backward", 4, "wrong gradient value"),
        ("ex-straight-through-clamp", 0, "wrong gradient value"),  # zero outside the range
        ("ex-straight-through-clamp", 1, "wrong gradient value"),  # autograd's own clamp
        ("ex-straight-through-clamp", 4, "has no ClampSTBackward node"),  # the detach trick
        ("ex-checkpoint-same-grads", 0, "ran 0 time(s) during backward, expected 1"),
        ("ex-zero-between-steps", 1, "wrong arguments after the call"),
        ("ex-leaves-without-grad", 0, "wrong value"),
        ("ex-sgd-in-place", 0, "wrong arguments after the call"),
        ("ex-sgd-in-place", 3, "wrong type"),
    ],
)
@module_loop
async def test_a_wrong_solution_fails_for_its_own_reason(
    sandbox: Sandbox, exercise: str, number: int, reason: str
) -> None:
    item = next(i for i in EXERCISES if i.id == exercise)
    ref = await _reference(sandbox, item, 11)
    verdict = await _verdict(sandbox, item, item.wrong[number].code, ref, 11)
    reasons = [c.reason or "" for c in verdict.checks if not c.passed]
    assert any(reason in r for r in reasons), reasons


@module_loop
async def test_the_silu_autograd_backward_is_refused_by_name(sandbox: Sandbox) -> None:
    item = next(i for i in EXERCISES if i.id == "ex-silu-backward")
    ref = await _reference(sandbox, item, 11)
    verdict = await _verdict(sandbox, item, item.wrong[5].code, ref, 11)
    assert verdict.forbidden == ("torch.Tensor.backward",)
