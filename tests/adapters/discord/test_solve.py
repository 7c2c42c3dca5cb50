"""An exercise on Discord: the Solve it button and /solve open a modal pre-filled with the
starter; a submission runs in the real jail and the verdict is private; the solve scores once.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.core.clock import SimulatedClock
from tests.adapters.discord.conftest import embed_text, make_settings, running
from tests.fakes.discord_api import FakeDiscord, FakeGuild, FakeMember

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

EXERCISES = Path(__file__).resolve().parents[2] / "data" / "exercise_packs"
RIGHT = "import torch\n\ndef affine(x):\n    return 3 * x + 1\n"


async def test_solve_it_opens_the_starter_and_a_solution_scores_once(
    fake: FakeDiscord,
    guild: FakeGuild,
    alice: FakeMember,
    admin: FakeMember,
    tmp_path: Path,
    packs_dir: Path,
    clock: SimulatedClock,
) -> None:
    shutil.copy(EXERCISES / "affine.yaml", packs_dir / "affine.yaml")
    settings = make_settings(
        fake, tmp_path, packs_dir, SANDBOX_ENABLED="true", SANDBOX_POOL_SIZE="2"
    )
    async with running(fake, settings, clock, guild) as studybot:
        posted = await studybot.quiz(admin, kind="exercise")
        text = embed_text(posted.payload)
        assert "Coding exercise" in text and "`affine(torch.tensor([1.0, 2.0]))`" in text
        [solve] = [c for c in posted.custom_ids if c.startswith("studybot:solve:")]

        opened = await (await fake.click(posted, alice, custom_id=solve)).response()
        assert opened.is_modal
        [code] = opened.text_inputs
        assert code["value"].startswith("import torch") and "def affine(x)" in code["value"]
        assert code["style"] == 2

        wrong = await fake.submit_modal(opened.custom_id, alice, {"Code": code["value"]})
        assert (await wrong.response()).ephemeral
        verdict = await wrong.followup(0, timeout=120)
        assert verdict.ephemeral
        told = embed_text(verdict.payload)
        assert "0 of 4 checks passed" in told
        assert "hidden check 1 of 3 failed: wrong value" in told

        post_id = int(solve.split(":")[2])
        elsewhere = await (await studybot.command(alice, "solve")).response()
        assert elsewhere.content.startswith("There is no open exercise in this channel")
        again = await (await studybot.command(alice, "solve", {"id": str(post_id)})).response()
        assert again.is_modal
        right = await fake.submit_modal(again.custom_id, alice, {"Code": RIGHT})
        solved = await right.followup(0, timeout=120)
        assert solved.ephemeral
        assert "✅ Solved: 4 of 4 checks passed. +10 points" in embed_text(solved.payload)

        once_more = await (await studybot.command(alice, "solve", {"id": str(post_id)})).response()
        repeat = await fake.submit_modal(once_more.custom_id, alice, {"Code": RIGHT})
        told = embed_text((await repeat.followup(0, timeout=120)).payload)
        assert "You solved this one already" in told

        board = await (await studybot.command(alice, "leaderboard")).response()
        assert "10" in embed_text(board.data)


async def test_try_it_after_an_answer_opens_the_snippet_in_a_run_modal(
    fake: FakeDiscord, studybot: object, alice: FakeMember
) -> None:
    from tests.adapters.discord.conftest import Studybot

    assert isinstance(studybot, Studybot)
    question = await studybot.quiz(alice, pack="drill")
    answered = await fake.click(question, alice, label="A")
    reply = await answered.response()
    assert reply.ephemeral
    assert reply.message is not None
    opened = await (await fake.click(reply.message, alice, label="Try it")).response()
    assert opened.is_modal
    [code] = opened.text_inputs
    assert "(x * 3).backward()" in code["value"]
    assert opened.title.startswith("Try the snippet of #")


async def test_solve_with_an_exercise_id_posts_it_here_and_opens_its_editor(
    fake: FakeDiscord,
    guild: FakeGuild,
    alice: FakeMember,
    tmp_path: Path,
    packs_dir: Path,
    clock: SimulatedClock,
) -> None:
    """``/solve id:ex-affine`` works on Discord as on Slack and the console: the option is the
    table's one text, a post number or an exercise's id (it was a number on Discord only)."""
    from tests.adapters.discord.conftest import public_messages

    shutil.copy(EXERCISES / "affine.yaml", packs_dir / "affine.yaml")
    settings = make_settings(
        fake, tmp_path, packs_dir, SANDBOX_ENABLED="true", SANDBOX_POOL_SIZE="1"
    )
    async with running(fake, settings, clock, guild) as studybot:
        general = guild.channel("general").id
        assert public_messages(fake, general) == []
        opened = await (await studybot.command(alice, "solve", {"id": "ex-affine"})).response()
        assert opened.is_modal
        [code] = opened.text_inputs
        assert "def affine(x)" in code["value"]
        posts = await fake.state.changes.until(
            lambda: public_messages(fake, general) or None,
            timeout=10,
            describe=lambda: "the exercise was not posted in #general",
        )
        assert len(posts) == 1
        assert "Coding exercise" in embed_text(posts[0].payload)

        bad = await (await studybot.command(alice, "solve", {"id": "#nope"})).response()
        assert bad.ephemeral
        assert "`#nope` is no #number or exercise id" in bad.content
