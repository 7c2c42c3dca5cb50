"""A member's pack upload cannot crowd out anyone's ``/run`` (issue 27, finding 10).

Three uploads of twelve slow code items once held all four sandbox slots, and another
member's one-line ``/run`` waited behind them. Now an upload's checks are runs of its
uploader's (one at a time with their own ``/run``, counted in their rate), run in the
background after members' runs, and every member's uploads together hold one slot at most.
These tests use the real sandbox.
"""

from __future__ import annotations

import asyncio

import pytest

from bot.core.errors import RateLimited
from bot.sandbox import Sandbox
from bot.sandbox.host.turns import Turns
from bot.services.bundle import Services
from tests.helpers import member

pytestmark = pytest.mark.slow

ITEM = """\
  - id: slow-{n}
    kind: practice
    difficulty: easy
    prompt: What does this print after a pause?
    code: |
      import time
      time.sleep(1.5)
      print({n})
    expect_stdout: |
      {n}
    choices:
      - text: "{n}"
        correct: true
      - text: "nothing"
    steps: [It sleeps, then prints {n}.]
    final_answer: "{n}"
"""


def slow_pack(name: str, items: int) -> bytes:
    body = "".join(ITEM.format(n=n) for n in range(items))
    return f"pack: {name}\ntitle: Slow {name}\nitems:\n{body}".encode()


@pytest.fixture
def sandbox_options() -> dict[str, object]:
    return {"pool_size": 2, "max_running": 4, "preload": ()}


async def test_members_uploads_hold_one_slot_and_a_run_goes_first(
    sandboxed_service: Services, sandbox: Sandbox
) -> None:
    uploaders = [member(name) for name in ("ann", "bob", "cy")]
    uploads = [
        asyncio.create_task(
            sandboxed_service.packs.check_upload(who, f"slow{i}.yaml", slow_pack(f"slow{i}", 4))
        )
        for i, who in enumerate(uploaders)
    ]
    most_checks = 0
    while (await sandbox.status())["running_checks"] == 0:  # noqa: ASYNC110 - polling a process
        await asyncio.sleep(0.05)
    # While the uploads check their code, another member's /run is served, not queued.
    run = asyncio.create_task(sandboxed_service.runs.run(member("dee"), "print('mine')"))
    while not run.done():
        status = await sandbox.status()
        most_checks = max(most_checks, int(status["running_checks"]))
        await asyncio.sleep(0.05)
    assert "mine" in (await run).plain_text()
    assert not all(u.done() for u in uploads)  # the run did not wait for the uploads
    while not all(u.done() for u in uploads):
        most_checks = max(most_checks, int((await sandbox.status())["running_checks"]))
        await asyncio.sleep(0.05)
    assert most_checks == 1  # once 4: every slot
    for upload in uploads:
        assert "no problems" in (await upload).plain_text()


async def test_an_upload_counts_against_its_uploaders_own_limits(
    sandboxed_service: Services, sandbox: Sandbox
) -> None:
    ann = member("ann")
    upload = asyncio.create_task(
        sandboxed_service.packs.check_upload(ann, "slow.yaml", slow_pack("slow", 2))
    )
    while not upload.done() and (await sandbox.status())["running_checks"] == 0:  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    with pytest.raises(RateLimited, match="still running"):
        await sandboxed_service.runs.run(ann, "print(1)")
    assert "no problems" in (await upload).plain_text()


async def test_runs_go_before_checks_and_checks_never_take_every_slot() -> None:
    turns = Turns(slots=2, max_background=1)
    await turns.acquire(background=True)
    await turns.acquire(background=False)  # the slot checks may not take
    order: list[str] = []

    async def wait(name: str, background: bool) -> None:
        await turns.acquire(background=background)
        order.append(name)

    waiting = [
        asyncio.create_task(wait("check", True)),
        asyncio.create_task(wait("run", False)),
    ]
    await asyncio.sleep(0)
    turns.release(background=True)  # a check's slot frees: the waiting run takes it
    await asyncio.sleep(0)
    assert order == ["run"]
    turns.release(background=False)
    await asyncio.sleep(0)
    assert order == ["run", "check"]
    assert turns.background == 1
    await asyncio.gather(*waiting)
