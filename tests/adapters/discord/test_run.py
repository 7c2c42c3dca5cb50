"""``/run`` (a modal with a code field) and the "Run snippet" message context menu.

Most tests give the service a stand-in ``run_snippet`` with the same signature, to pin what the
adapter does with each kind of result; the last test runs real torch in the real sandbox.
"""

from __future__ import annotations

import copy
import io
from pathlib import Path
from typing import Any

import pytest

from bot.adapters.discord.cogs.base import RAN_PUBLICLY, RUNNING
from bot.core.clock import SimulatedClock
from bot.core.errors import RateLimited
from bot.core.messages import Attachment, Message, Section, Tone, neutralise
from bot.core.models import ChatContext
from tests.adapters.discord.conftest import Studybot, embed_text, make_settings, running
from tests.fakes.discord_api import FakeDiscord, FakeGuild, FakeInteraction, FakeMember

pytestmark = pytest.mark.timeout(60)


class StandInRunner:
    """``service.runs.run(ctx, code) -> Message``, recording what it was asked to run."""

    def __init__(self, result: Message | Exception) -> None:
        self.result = result
        self.calls: list[tuple[ChatContext, str]] = []

    async def __call__(self, ctx: ChatContext, code: str) -> Message:
        self.calls.append((ctx, code))
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def output_message(stdout: str, *, attachment: bytes | None = None) -> Message:
    files = (Attachment("output.txt", attachment),) if attachment is not None else ()
    return Message(
        title="▶️ Snippet output · ok · 12 ms",
        sections=(Section(code=neutralise(stdout), language="text"),),
        attachments=files,
        tone=Tone.SUCCESS,
    )


@pytest.fixture
def runner(studybot: Studybot, monkeypatch: pytest.MonkeyPatch) -> StandInRunner:
    stand_in = StandInRunner(output_message("tensor([1., 1.])\n"))
    monkeypatch.setattr(studybot.service.runs, "run", stand_in)
    monkeypatch.setattr(studybot.service.runs, "check", lambda: None)
    return stand_in


async def _open_and_submit(
    fake: FakeDiscord, studybot: Studybot, member: FakeMember, code: str
) -> FakeInteraction:
    opened = await (await studybot.command(member, "run")).response()
    assert opened.is_modal
    return await fake.submit_modal(opened.custom_id, member, {"Code": code})


async def test_run_opens_a_modal_with_a_multiline_code_field(
    fake: FakeDiscord, studybot: Studybot, runner: StandInRunner, alice: FakeMember
) -> None:
    opened = await (await studybot.command(alice, "run")).response()
    assert opened.type == 9
    assert opened.title == "Run a Python snippet"
    [label] = opened.components
    assert label["type"] == 18  # a Label wrapping the input (discord.py 2.6+)
    assert label["label"] == "Code"
    [code] = opened.text_inputs
    assert code["type"] == 4
    assert code["style"] == 2  # paragraph: multi-line
    assert code["max_length"] == 4000
    assert code["custom_id"] == "studybot:run:code"


async def test_run_modal_to_result_posts_output_in_a_code_block(
    fake: FakeDiscord, studybot: Studybot, runner: StandInRunner, alice: FakeMember
) -> None:
    submit = await _open_and_submit(fake, studybot, alice, "import torch\nprint(torch.ones(2))")
    ack = await submit.response()
    assert ack.type == 4
    assert ack.ephemeral
    assert ack.content == RUNNING

    result = await submit.followup()
    assert not result.ephemeral
    assert "```\ntensor([1., 1.])\n```" in embed_text(result)
    [call] = fake.calls_to("POST", "/webhooks/{app}/{token}")
    assert call.json["allowed_mentions"] == {"parse": []}
    note = await submit.original_edit()
    assert note.content == RAN_PUBLICLY
    assert note.ephemeral

    [(ctx, code)] = runner.calls
    assert code == "import torch\nprint(torch.ones(2))"
    assert (ctx.platform, ctx.member, ctx.member_name) == ("discord", str(alice.id), "alice")


async def test_long_output_comes_as_a_file_and_pings_nobody(
    fake: FakeDiscord,
    studybot: Studybot,
    runner: StandInRunner,
    alice: FakeMember,
    bob: FakeMember,
) -> None:
    noisy = f"@everyone <@{bob.id}> " + "x" * 5000
    runner.result = output_message(noisy[:1500], attachment=noisy.encode())
    submit = await _open_and_submit(fake, studybot, alice, "print('@everyone')")
    result = await submit.followup()
    assert result.files == {"output.txt": noisy.encode()}
    assert result.mentioned_user_ids == []
    assert not result.payload["mention_everyone"]
    assert len(result.embeds[0]["description"]) <= 4096


async def test_a_private_result_replaces_the_running_note(
    fake: FakeDiscord, studybot: Studybot, runner: StandInRunner, alice: FakeMember
) -> None:
    runner.result = output_message("secret\n").private()
    submit = await _open_and_submit(fake, studybot, alice, "print('secret')")
    edited = await submit.original_edit()
    assert edited.ephemeral
    assert "secret" in embed_text(edited)
    assert edited.content == ""
    assert submit.followups == []


async def test_a_refusal_after_the_ack_stays_private(
    fake: FakeDiscord,
    guild: FakeGuild,
    studybot: Studybot,
    runner: StandInRunner,
    alice: FakeMember,
) -> None:
    runner.result = RateLimited("You can run 6 snippets a minute; try again in 20 s.")
    submit = await _open_and_submit(fake, studybot, alice, "print(1)")
    edited = await submit.original_edit()
    assert edited.ephemeral
    assert edited.content == "You can run 6 snippets a minute; try again in 20 s."
    assert submit.followups == []
    channel = guild.channel("general")
    assert [m for m in fake.messages_in(channel) if not m.ephemeral] == []


async def test_run_with_the_sandbox_off_says_so_before_opening_the_modal(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember
) -> None:
    """The test settings turn the sandbox off (SANDBOX_ENABLED=false), as an operator may."""
    response = await (await studybot.command(alice, "run")).response()
    assert response.type == 4
    assert response.ephemeral
    assert response.content == (
        "Running snippets is unavailable on this host: sandbox disabled (SANDBOX_ENABLED=false)."
    )


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_run_modal_runs_real_torch_in_the_sandbox(
    fake: FakeDiscord,
    guild: FakeGuild,
    alice: FakeMember,
    tmp_path: Path,
    packs_dir: Path,
    clock: SimulatedClock,
) -> None:
    """End to end with the real wiring: modal -> core -> jail with torch -> public follow-up."""
    settings = make_settings(
        fake, tmp_path, packs_dir, SANDBOX_ENABLED="true", SANDBOX_POOL_SIZE="1"
    )
    async with running(fake, settings, clock, guild) as studybot:
        code = (
            "import torch\n"
            "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
            "for _ in range(3):\n"
            "    (x * x).sum().backward()\n"
            "print(x.grad.tolist())"
        )
        submitted = await _open_and_submit(fake, studybot, alice, code)
        assert (await submitted.response()).content == RUNNING
        result = await submitted.followup(0, timeout=120)
    text = embed_text(result.payload) + str(result.payload.get("content") or "")
    assert "[6.0, 12.0]" in text  # three backward passes accumulate 3 * 2x
    assert "Ran in" in text
    assert result.payload.get("flags", 0) & 64 == 0  # public


# --- the "Run snippet" message context menu ------------------------------------------------------


async def message_command(
    fake: FakeDiscord, guild: FakeGuild, user: FakeMember, name: str, content: str, author: Any
) -> FakeInteraction:
    """A message context-menu invocation (the fake has a helper for slash commands only).

    The target is a message ``author`` wrote in #general; Discord sends it whole in
    ``data.resolved.messages``, content included, even without the message content intent.
    """
    command = next(c for c in fake.state.global_commands.values() if c["name"] == name)
    assert command["type"] == 3
    channel = guild.channel("general")
    target = fake.state.create_message(channel, {"content": content}, [])
    target.payload["author"] = author.user.to_payload()
    data = {
        "id": command["id"],
        "name": name,
        "type": 3,
        "target_id": str(target.id),
        "resolved": {"messages": {str(target.id): copy.deepcopy(target.payload)}},
    }
    g, ch, actor = fake._context(guild, channel, user)
    payload = fake._interaction_payload(2, g, ch, actor, data, locale="en-US")
    interaction = await fake._send_interaction(payload, f"message command {name!r}", 5.0)
    return await fake._deliver(interaction)


async def test_run_snippet_runs_the_first_python_block_of_a_message(
    fake: FakeDiscord,
    guild: FakeGuild,
    studybot: Studybot,
    runner: StandInRunner,
    alice: FakeMember,
    bob: FakeMember,
) -> None:
    content = "Why does this fail?\n```js\nconsole.log(1)\n```\n```python\nx = 1\nprint(x)\n```"
    ix = await message_command(fake, guild, alice, "Run snippet", content, author=bob)
    assert (await ix.response()).content == RUNNING
    result = await ix.followup()
    assert not result.ephemeral
    [(ctx, code)] = runner.calls
    assert code == "x = 1\nprint(x)"
    assert ctx.member == str(alice.id)  # who ran it, not who wrote it


async def test_run_snippet_on_a_message_without_code_is_refused_privately(
    fake: FakeDiscord,
    guild: FakeGuild,
    studybot: Studybot,
    runner: StandInRunner,
    alice: FakeMember,
) -> None:
    ix = await message_command(fake, guild, alice, "Run snippet", "no code here", author=alice)
    response = await ix.response()
    assert response.ephemeral
    assert response.content == "That message has no ```python code block to run."
    assert runner.calls == []


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_graph_modal_draws_the_autograd_graph_as_an_inline_picture(
    fake: FakeDiscord,
    guild: FakeGuild,
    alice: FakeMember,
    tmp_path: Path,
    packs_dir: Path,
    clock: SimulatedClock,
) -> None:
    """``/graph of:y``: modal -> jail walks and draws the graph -> a PNG shown in the embed."""
    settings = make_settings(
        fake, tmp_path, packs_dir, SANDBOX_ENABLED="true", SANDBOX_FORKS_AHEAD="1"
    )
    async with running(fake, settings, clock, guild) as studybot:
        opened = await (await studybot.command(alice, "graph", {"of": "y"})).response()
        assert opened.is_modal
        assert opened.title == "Draw an autograd graph"
        code = "import torch\nx = torch.ones(2, requires_grad=True)\ny = x * 2\nz = y.sum()\n"
        submitted = await fake.submit_modal(opened.custom_id, alice, {"Code": code})
        assert (await submitted.response()).content == RUNNING
        result = await submitted.followup(0, timeout=120)
    text = embed_text(result.payload)
    assert "MulBackward0" in text and "leaf x" in text
    assert "SumBackward0" not in text  # the graph of y, not of the last result z
    assert set(result.files) == {"autograd-graph.png"}
    assert result.files["autograd-graph.png"].startswith(b"\x89PNG\r\n\x1a\n")
    assert result.embeds[0]["image"]["url"] == "attachment://autograd-graph.png"


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_the_reveal_of_a_show_graph_item_shows_the_graph_in_the_post(
    fake: FakeDiscord, guild: FakeGuild, alice: FakeMember, tmp_path: Path, clock: SimulatedClock
) -> None:
    """A pack item with ``show_graph: true``: the reveal edits in the graph, drawn in the jail."""
    from tests.adapters.discord.test_questions import _post_id
    from tests.adapters.test_console import GRAPH_PACK

    packs = tmp_path / "graph-packs"
    packs.mkdir()
    (packs / "graphs.yaml").write_text(GRAPH_PACK)
    settings = make_settings(fake, tmp_path, packs, SANDBOX_ENABLED="true", SANDBOX_FORKS_AHEAD="1")
    async with running(fake, settings, clock, guild) as studybot:
        question = await studybot.quiz(alice, pack="graphs")
        assert question.files == {}
        post_id = await _post_id(studybot, question.id)
        edit = await studybot.service.quiz.reveal(None, post_id)
        await studybot.service.quiz.apply_edit(edit, studybot.adapter)
    assert set(question.files) == {"autograd-graph.png"}
    assert question.files["autograd-graph.png"].startswith(b"\x89PNG\r\n\x1a\n")
    assert question.embeds[0]["image"]["url"] == "attachment://autograd-graph.png"


async def test_a_reply_with_files_over_discords_limits_still_arrives(
    fake: FakeDiscord, studybot: Studybot, runner: StandInRunner, alice: FakeMember
) -> None:
    """Four 8 MiB files and one of 12 MiB once made a 30.5 MiB request, which Discord
    refuses whole (the fake does too): the output was lost with the files. Now the reply
    carries what fits (10 MiB a file, 25 MB a request) and names what it left out."""
    big = [Attachment(f"data{i}.bin", bytes([i]) * (8 * 2**20)) for i in range(4)]
    huge = Attachment("huge.bin", b"h" * (12 * 2**20))
    runner.result = Message(
        title="Snippet from alice",
        sections=(Section(code="made the files", language="text"),),
        attachments=(*big, huge),
    )
    submit = await _open_and_submit(fake, studybot, alice, "print('made the files')")
    result = await submit.followup()
    text = embed_text(result)
    assert "made the files" in text
    assert sorted(result.files) == ["data0.bin", "data1.bin"]
    assert "`huge.bin` (12.0 MiB: over Discord's 10.0 MiB limit per file)" in text
    assert (
        "`data2.bin` (8.0 MiB: the files together would go over Discord's 23.8 MiB per message)"
    ) in text
    assert not [c for c in fake.state.calls if c.status == 413]


async def test_the_fake_refuses_what_discord_refuses(
    fake: FakeDiscord, guild: FakeGuild, studybot: Studybot
) -> None:
    """The check above means something only if the fake refuses an oversized request."""
    import discord

    channel = studybot.bot.get_channel(guild.channel("general").id)
    assert isinstance(channel, discord.TextChannel)
    with pytest.raises(discord.HTTPException) as refused:
        await channel.send(file=discord.File(io.BytesIO(b"x" * (11 * 2**20)), "big.bin"))
    assert refused.value.status == 413


async def test_graph_names_are_refused_before_the_editor_opens(
    fake: FakeDiscord, studybot: Studybot, runner: StandInRunner, alice: FakeMember
) -> None:
    """Five tensors: "At most 4" at once, not after the member has typed their code."""
    reply = await (await studybot.command(alice, "graph", {"of": "a,b,c,d,e"})).response()
    assert not reply.is_modal
    assert reply.ephemeral
    assert "At most 4 tensors" in (reply.content or "") + embed_text(reply.message or {})
