"""Coding exercises through the services, with the real jail: verdicts, scoring, and cheats.

Every cheat the issue lists is submitted as a member would, and must score nothing: the
verdict is decided in the bot by comparing values with the reference's own run, so nothing
the member's code does inside its jail can make a wrong answer pass.
"""

from __future__ import annotations

import asyncio
import random
import re
import shutil
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from bot.app import build_services
from bot.core.clock import SimulatedClock
from bot.questions.loader import load_packs
from bot.sandbox import Sandbox
from bot.services.bundle import Services
from bot.storage.database import Database
from tests.helpers import member
from tests.sandbox.sandbox_helpers import sandbox_config

pytestmark = pytest.mark.slow

PACKS = Path(__file__).resolve().parents[1] / "data" / "exercise_packs"
ANN, BOB, ADMIN = member("ann"), member("bob"), member("root", admin=True)

RIGHT = "import torch\ndef affine(x):\n    return 3 * x + 1\n"
# Right on the examples' integers, wrong elsewhere: only values can tell.
WRONG = "import torch\ndef affine(x):\n    return 3 * x + 1.001\n"


@pytest.fixture
async def sandbox() -> AsyncIterator[Sandbox]:
    async with Sandbox(sandbox_config(pool_size=2, timeout=10.0)) as sb:
        assert sb.available, sb.unavailable_reason
        yield sb


@pytest.fixture
async def svc(db: Database, clock: SimulatedClock, tmp_path: Path, sandbox: Sandbox) -> Services:
    packs = tmp_path / "packs"
    shutil.copytree(PACKS, packs)
    built = build_services(
        db, clock, default_timezone="UTC", rng=random.Random(3), packs_dir=packs, runner=sandbox
    )
    await built.services.packs.sync(load_packs(packs).packs)
    return built.services


async def _post(svc: Services) -> int:
    draft = await svc.quiz.post_question(ADMIN, kinds=["exercise"])
    return draft.post.id


async def _points(svc: Services, who: object) -> int:
    report = await svc.standings.member_report(who)  # type: ignore[arg-type]
    return report.stats.points_all


async def test_a_right_solution_scores_once_and_a_wrong_one_is_told_why(
    svc: Services,
) -> None:
    post = await _post(svc)
    form = await svc.exercises.open_editor(ANN, post)
    assert "def affine(x)" in form.starter and form.post_id == post

    wrong = (await svc.exercises.submit(ANN, post, WRONG)).plain_text()
    assert "0 of 4 checks passed" in wrong
    assert "expected `torch.tensor([4.0, 7.0])`, got `tensor([4.0010, 7.0010])`" in wrong
    assert "hidden check 2 of 3 failed: wrong value" in wrong
    assert "worth 0 of" in wrong

    right = await svc.exercises.submit(ANN, post, RIGHT)
    assert right.ephemeral
    assert right.title is not None and right.title.startswith("✅ Solved: 4 of 4 checks passed.")
    points = await _points(svc, ANN)
    assert points > 0

    again = (await svc.exercises.submit(ANN, post, RIGHT)).plain_text()
    assert "You solved this one already" in again
    assert await _points(svc, ANN) == points
    stats = (await svc.standings.stats(ANN, picture=False)).plain_text()
    assert "Exercises: 1 solved of 1 tried (3 submissions)" in stats

    await svc.quiz.reveal(ADMIN, post)
    history = (await svc.history.recent(ANN, 5)).plain_text()
    assert f"#{post}" in history and "exercise: 1 tried, 1 solved" in history


async def test_partial_credit_at_close_and_the_card_is_due_for_review(
    svc: Services, clock: SimulatedClock
) -> None:
    post = await _post(svc)
    # Right for the example and the gradient, wrong on values away from zero.
    half = (
        "import torch\n"
        "def affine(x):\n"
        "    out = 3 * x + 1\n"
        "    return torch.where(x.abs() < 2.5, out, out + 1)\n"
    )
    reply = (await svc.exercises.submit(BOB, post, half)).plain_text()
    assert "Your best so far:" in reply
    assert await _points(svc, BOB) == 0
    edit = await svc.quiz.reveal(ADMIN, post)
    assert "A reference solution" in edit.message.plain_text()
    assert "3 * x + 1" in edit.message.plain_text()
    earned = await _points(svc, BOB)
    base = 10  # easy
    passed = int(reply.split(" of 4 checks passed")[0].split()[-1])
    assert 0 < passed < 4
    assert earned == base * passed // 4

    clock.advance(timedelta(days=1))
    turn = await svc.review.next(BOB)
    assert "3 * x + 1" in turn.message.plain_text() or "affine" in turn.message.plain_text()

    after = (await svc.exercises.submit(BOB, post, RIGHT)).plain_text()
    assert "The post has closed: practice, no points." in after
    assert await _points(svc, BOB) == earned


CHEATS: dict[str, str] = {
    "prints that every check passed": (
        "import torch\n"
        "print('all checks passed')\n"
        'print(\'{"exit_code": 0, "exercise": {"results": []}}\')\n'
        "def affine(x):\n    print('PASS'); return x\n"
    ),
    "sys.exit(0) before the checks": "import sys\nsys.exit(0)\ndef affine(x):\n    return x\n",
    "os._exit(0) during the checks": ("import os\ndef affine(x):\n    os._exit(0)\n"),
    "kills itself during the checks": ("import os\ndef affine(x):\n    os.kill(os.getpid(), 9)\n"),
    "patches torch.allclose, torch.testing, Tensor.__eq__ and builtins": (
        "import builtins, torch, torch.testing\n"
        "torch.allclose = lambda *a, **k: True\n"
        "torch.equal = lambda *a, **k: True\n"
        "torch.testing.assert_close = lambda *a, **k: None\n"
        "torch.Tensor.__eq__ = lambda self, other: True\n"
        "builtins.isinstance = lambda *a: True\n"
        "builtins.type = lambda *a: torch.Tensor\n"
        "def affine(x):\n    return x\n"
    ),
    "reads the reference from disk, memory and the environment": (
        "import gc, os, sys\n"
        "found = [k for k, v in os.environ.items() if '3 * x + 1' in v]\n"
        "for root, dirs, files in os.walk('/', topdown=True):\n"
        "    dirs[:] = [d for d in dirs if d not in ('proc', 'sys', 'dev', 'usr', 'lib')]\n"
        "    for f in files:\n"
        "        try:\n"
        "            if b'return 3 * x + 1' in open(os.path.join(root, f), 'rb').read(1 << 20):\n"
        "                found.append(f)\n"
        "        except OSError:\n"
        "            pass\n"
        "for o in gc.get_objects():\n"
        "    if type(o) is str and 'return 3 * x + 1' in o and 'found' not in o:\n"
        "        found.append('memory')\n"
        "print('FOUND' if found else 'NOT FOUND', found[:3])\n"
        "def affine(x):\n    return x\n"
    ),
    "returns an object whose __eq__ is always true": (
        "class Yes:\n"
        "    def __eq__(self, other): return True\n"
        "    def __ne__(self, other): return False\n"
        "def affine(x):\n    return Yes()\n"
    ),
    "returns a Tensor subclass that lies": (
        "import torch\n"
        "class Liar(torch.Tensor):\n"
        "    def __eq__(self, other): return torch.ones((), dtype=torch.bool)\n"
        "    def tolist(self): return [4.0, 7.0]\n"
        "def affine(x):\n    return (3 * x + 1).as_subclass(Liar)\n"
    ),
    "returns the right values in the wrong dtype": (
        "import torch\ndef affine(x):\n    return (3 * x + 1).double()\n"
    ),
    "a forbidden name through getattr": (
        "import torch\ndef affine(x):\n    return getattr(torch, 'mul')(x, 3) + 1\n"
    ),
    "a forbidden name through importlib and string building": (
        "import importlib\n"
        "def affine(x):\n"
        "    t = importlib.import_module('to' + 'rch')\n"
        "    return getattr(t, ''.join(['m', 'u', 'l']))(x, 3) + 1\n"
    ),
    "a forbidden name through __import__ and eval": (
        "def affine(x):\n    torch = __import__('torch')\n    return eval('torch.mul(x, 3)') + 1\n"
    ),
    "a forbidden method": "def affine(x):\n    return x.mul(3) + 1\n",
    "a forbidden name caught and swallowed": (
        "import torch\n"
        "def affine(x):\n"
        "    try:\n"
        "        torch.mul(x, 3)\n"
        "    except BaseException:\n"
        "        pass\n"
        "    return 3 * x + 1\n"
    ),
    "a result too large to send back": (
        "import torch\ndef affine(x):\n    return torch.zeros(400_000)\n"
    ),
}


async def test_no_cheat_scores(svc: Services, clock: SimulatedClock) -> None:
    post = await _post(svc)
    scored: list[str] = []
    replies: dict[str, str] = {}
    for name, code in CHEATS.items():
        clock.advance(timedelta(seconds=15))  # within /run's rate limit, as a member would be
        reply = await svc.exercises.submit(BOB, post, code)
        text = reply.plain_text()
        replies[name] = text
        if (reply.title or "").startswith("✅") or await _points(svc, BOB) != 0:
            scored.append(name)
    assert not scored, f"these cheats scored: {scored}"
    assert "NOT FOUND []" in replies["reads the reference from disk, memory and the environment"]
    for name in [n for n in CHEATS if "forbidden" in n]:
        assert "`torch.mul`" in replies[name] or "`torch.Tensor.mul`" in replies[name], name
        assert "which this exercise forbids: it scores nothing" in replies[name], name
    assert "wrong dtype" in replies["returns the right values in the wrong dtype"]
    assert "a Tensor subclass (Liar)" in replies["returns a Tensor subclass that lies"]
    assert (
        "Yes: return a tensor or a plain value"
        in replies["returns an object whose __eq__ is always true"]
    )
    assert "too large to compare" in replies["a result too large to send back"]
    assert "ended the run before every check had run" in replies["os._exit(0) during the checks"]
    # After every cheat, the real solution still scores: nothing above was held against it.
    clock.advance(timedelta(seconds=15))
    right = await svc.exercises.submit(BOB, post, RIGHT)
    assert (right.title or "").startswith("✅ Solved")


async def test_two_members_get_different_hidden_inputs(svc: Services) -> None:
    post = await _post(svc)
    spy = (
        "import torch\ndef affine(x):\n    print(round(float(x.sum()), 6))\n    return 3 * x + 1\n"
    )
    ann = (await svc.exercises.submit(ANN, post, spy)).plain_text()
    bob = (await svc.exercises.submit(BOB, post, spy)).plain_text()
    ann_again = (await svc.exercises.submit(ANN, post, spy)).plain_text()

    def printed(text: str) -> list[str]:
        after = text.split("Your output")[1]
        return re.findall(r"-?\d+\.\d+", after)[:4]

    assert printed(ann) == printed(ann_again)
    assert printed(ann)[0] == printed(bob)[0] == "3.0"  # the example is the same for all
    assert printed(ann)[1:] != printed(bob)[1:]


async def test_solutions_after_solving_or_closing_with_only_shared_ones(
    svc: Services, clock: SimulatedClock
) -> None:
    from bot.adapters.commands import settings_request
    from bot.core.errors import BadInput

    post = await _post(svc)
    carl = member("carl")
    short = "import torch\ndef affine(x): return 3*x+1\n"
    on = settings_request("console", ["share-solutions", "on"])
    assert "share-solutions: on" in (await svc.settings.command(ANN, on)).plain_text()
    shown = await svc.settings.command(ANN, settings_request("console", ["share-solutions"]))
    assert "on: others see your passing solutions" in shown.plain_text()
    await svc.exercises.submit(ANN, post, RIGHT)
    clock.advance(timedelta(seconds=20))
    await svc.exercises.submit(ANN, post, short)
    await svc.exercises.submit(carl, post, short + "# carl's, not shared\n")

    with pytest.raises(BadInput, match="no spoilers"):
        await svc.exercises.solutions(BOB, post)
    mine = (await svc.exercises.solutions(ANN, post)).plain_text()
    assert "The reference solution" in mine and "return 3 * x + 1" in mine
    assert "ann (" in mine and "return 3*x+1" in mine
    assert "carl" not in mine

    await svc.quiz.reveal(ADMIN, post)
    after = (await svc.exercises.solutions(BOB, post)).plain_text()
    assert "The reference solution" in after and "ann (" in after and "carl" not in after
    bad = settings_request("console", ["share-solutions", "maybe"])
    with pytest.raises(BadInput, match="on or off"):
        await svc.settings.command(ANN, bad)


async def test_item_analysis_counts_attempts_solvers_and_the_checks_that_fail_most(
    svc: Services,
) -> None:
    post = await _post(svc)
    await svc.exercises.submit(ANN, post, WRONG)
    await svc.exercises.submit(ANN, post, RIGHT)
    await svc.exercises.submit(BOB, post, WRONG)
    stats = {s.question.item_id: s for s in await svc.analysis.statistics(ADMIN)}
    (exercise,) = [s.exercise for s in stats.values() if s.exercise is not None]
    assert (exercise.attempts, exercise.tried, exercise.solved) == (3, 2, 1)
    assert exercise.solve_rate == 0.5
    # Both wrong submissions failed all four checks: each counted twice, by name.
    assert exercise.most_failed(5) == [
        ("example 1", 2), ("hidden check 1", 2), ("hidden check 2", 2), ("hidden check 3", 2),
    ]  # fmt: skip


async def test_extra_time_lengthens_a_members_time_limit(
    db: Database, clock: SimulatedClock, tmp_path: Path, sandbox: Sandbox
) -> None:
    """A 1.5 s exercise (a run's wall clock is the limit and a 5 s margin; the sandbox here
    cuts any run at 10 s). Code taking 7 s runs past bob's 1.5 s, and inside ann's with x4,
    which the cap makes 5 s, not 6; carl's, also x4, taking 10.5 s, is told his limit is 5 s."""
    from bot.core.requests import AccommodationSet

    packs = tmp_path / "packs"
    packs.mkdir()
    text = (PACKS / "affine.yaml").read_text()
    (packs / "affine.yaml").write_text(
        text.replace("    entry: affine\n", "    entry: affine\n    time_limit: 1.5\n")
    )
    built = build_services(
        db, clock, default_timezone="UTC", rng=random.Random(3), packs_dir=packs, runner=sandbox
    )
    svc = built.services
    await svc.packs.sync(load_packs(packs).packs)
    post = await _post(svc)
    carl = member("carl")
    for who in (ANN, BOB, carl):
        await svc.exercises.open_editor(who, post)  # they are members here now
    for name in ("ann", "carl"):
        said = await svc.accommodations.command(ADMIN, AccommodationSet(name, "4"))
        assert "x4 time" in said.plain_text()
    slow = "import time\ntime.sleep(7)\n" + RIGHT
    slower = "import time\ntime.sleep(10.5)\n" + RIGHT
    bob, ann, late = await asyncio.gather(
        svc.exercises.submit(BOB, post, slow),
        svc.exercises.submit(ANN, post, slow),
        svc.exercises.submit(carl, post, slower),
    )
    assert "ran past this exercise's 1.5 s limit" in bob.plain_text()
    assert ann.title is not None and ann.title.startswith("✅ Solved"), ann.plain_text()
    assert "ran past this exercise's 5 s limit" in late.plain_text()
