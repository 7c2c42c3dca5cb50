"""``/study run``: the modal, its submission, the "Run code block" message shortcut.

Most tests replace ``service.runs.run`` with a recording stub, to pin the Slack side in every
delivery mode: which code reaches the core, from whom and where, and how its output comes back
(a code block, a file for long output, private errors). The last tests run the real sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bot.adapters.slack import SlackAdapter
from bot.adapters.slack.manifest import RUN_MODAL_CALLBACK, RUN_SHORTCUT_CALLBACK
from bot.app import build_services
from bot.core.clock import SimulatedClock
from bot.core.errors import RateLimited
from bot.core.messages import Attachment, Message, Section, neutralise
from bot.core.models import ChatContext
from bot.sandbox import Sandbox
from bot.services.bundle import Services
from bot.storage.database import open_database
from tests.adapters.slack.conftest import slack_settings
from tests.adapters.slack.test_flows import private_replies
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_fixtures import DELIVERY_MODES, Delivery, DeliveryMode, bolt_delivery
from tests.sandbox.sandbox_helpers import sandbox_config

pytestmark = pytest.mark.timeout(30)

LONG = "".join(f"line {i}\n" for i in range(500))


@dataclass
class StubSandbox:
    """Stands in for ``SnippetRuns.run``: records calls, answers like the core would."""

    calls: list[tuple[ChatContext, str]] = field(default_factory=list)
    output: str = "tensor(6.)\n"
    ephemeral: bool = False
    error: Exception | None = None

    async def __call__(self, ctx: ChatContext, code: str) -> Message:
        self.calls.append((ctx, code))
        if self.error is not None:
            raise self.error
        attachments: tuple[Attachment, ...] = ()
        shown = self.output
        if len(self.output) > 1000:
            attachments = (Attachment("output.txt", self.output.encode(), "full output"),)
            shown = self.output[:200]
        return Message(
            title="▶️ Snippet · ok · 12 ms",
            sections=(Section(code=code), Section(heading="Output", code=neutralise(shown))),
            attachments=attachments,
            ephemeral=self.ephemeral,
        )


@pytest.fixture
def sandbox(slack_service: Services, monkeypatch: pytest.MonkeyPatch) -> StubSandbox:
    stub = StubSandbox()
    monkeypatch.setattr(slack_service.runs, "run", stub)
    monkeypatch.setattr(slack_service.runs, "check", lambda: None)
    return stub


async def open_modal(deliver: Delivery, fake: FakeSlack, text: str = "run") -> None:
    ack = await deliver(fake.slash_command(text=text))
    assert ack.status == 200 and ack.payload is None and ack.latency < 3
    call = await fake.wait_for_call("views.open")
    assert call.ok, call.response


@pytest.mark.parametrize("mode", DELIVERY_MODES)
async def test_run_modal_submit_posts_the_output(
    mode: DeliveryMode, adapter: SlackAdapter, slack_fake: FakeSlack, sandbox: StubSandbox
) -> None:
    async with bolt_delivery(mode, adapter.app, slack_fake) as deliver:
        await open_modal(deliver, slack_fake)
        modal = slack_fake.view(callback_id=RUN_MODAL_CALLBACK)
        assert modal.user_id == "U0ALICE" and modal.title == "Run a torch snippet"
        code = "x = torch.ones(2, 3)\nprint(x.sum() < 7)"
        submit = slack_fake.view_submission(RUN_MODAL_CALLBACK, {"code": {"code": code}})
        ack = await deliver(submit)
        assert ack.status == 200 and ack.payload is None  # the modal closes
        post = await slack_fake.wait_for_call("chat.postMessage")
    [(ctx, ran)] = sandbox.calls
    assert ran == code
    assert (ctx.platform, ctx.workspace, ctx.channel, ctx.member) == (
        "slack",
        "T0STUDY",
        "C0STUDY",
        "U0ALICE",
    )
    message = slack_fake.message(post.response["ts"], "C0STUDY")
    sections = [b["text"]["text"] for b in message.blocks if b["type"] == "section"]
    assert "```\nx = torch.ones(2, 3)\nprint(x.sum() &lt; 7)\n```" in sections
    assert "*Output*\n```\ntensor(6.)\n```" in sections


async def test_run_with_text_prefills_the_modal(
    adapter: SlackAdapter, slack_fake: FakeSlack, sandbox: StubSandbox
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await open_modal(deliver, slack_fake, "run print(1 &lt; 2)")
    element = slack_fake.view(callback_id=RUN_MODAL_CALLBACK).blocks[0]["element"]
    assert element["initial_value"] == "print(1 < 2)"


@pytest.mark.parametrize("mode", DELIVERY_MODES)
async def test_empty_code_keeps_the_modal_open_with_an_error(
    mode: DeliveryMode, adapter: SlackAdapter, slack_fake: FakeSlack, sandbox: StubSandbox
) -> None:
    async with bolt_delivery(mode, adapter.app, slack_fake) as deliver:
        await open_modal(deliver, slack_fake)
        ack = await deliver(slack_fake.view_submission(RUN_MODAL_CALLBACK, {"code": {"code": " "}}))
    assert ack.payload == {
        "response_action": "errors",
        "errors": {"code": "Write some code to run."},
    }
    assert sandbox.calls == []


async def test_long_output_is_uploaded_as_a_file(
    adapter: SlackAdapter, slack_fake: FakeSlack, sandbox: StubSandbox
) -> None:
    sandbox.output = LONG
    async with bolt_delivery("socket", adapter.app, slack_fake) as deliver:
        await open_modal(deliver, slack_fake)
        await deliver(slack_fake.view_submission(RUN_MODAL_CALLBACK, {"code": {"code": "spam()"}}))
        done = await slack_fake.wait_for_call("files.completeUploadExternal")
    assert done.ok, done.response
    [file] = slack_fake.files.values()
    assert file.completed and file.content == LONG.encode() and file.filename == "output.txt"
    assert file.channel_ids == ["C0STUDY"]
    post = slack_fake.calls_to("chat.postMessage")[0]
    assert file.thread_ts == post.response["ts"]  # in the thread of the output message


async def test_long_output_goes_to_the_members_dm_where_files_are_refused(
    adapter: SlackAdapter, slack_fake: FakeSlack, sandbox: StubSandbox
) -> None:
    # A public channel the bot never joined: posting works (chat:write.public), uploads don't.
    slack_fake.add_channel("C0STUDY", "study", bot_member=False)
    sandbox.output = LONG
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await open_modal(deliver, slack_fake)
        await deliver(slack_fake.view_submission(RUN_MODAL_CALLBACK, {"code": {"code": "spam()"}}))
        refused = await slack_fake.wait_for_call("files.completeUploadExternal")
        done = await slack_fake.wait_for_call("files.completeUploadExternal", count=2)
    assert refused.response == {"ok": False, "error": "not_in_channel"}
    assert done.ok, done.response
    shown, dm = slack_fake.calls_to("chat.postMessage")
    assert shown.args["channel"] == "C0STUDY" and "line 1" in shown.args["text"]
    assert dm.args["channel"] == "U0ALICE" and "/invite @studybot" in dm.args["text"]
    [file] = [f for f in slack_fake.files.values() if f.completed]
    assert file.content == LONG.encode() and file.channel_ids == [dm.response["channel"]]
    assert await adapter.idle()


async def test_a_refused_dm_still_leaves_the_cut_output_as_the_answer(
    adapter: SlackAdapter, slack_fake: FakeSlack, sandbox: StubSandbox
) -> None:
    slack_fake.add_channel("C0STUDY", "study", bot_member=False)
    slack_fake.override(  # the member's DMs with the bot are closed too
        "chat.postMessage",
        lambda call: (
            {"ok": False, "error": "cannot_dm_bot"}
            if str(call.args.get("channel", "")).startswith("U")
            else None
        ),
    )
    sandbox.output = LONG
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await open_modal(deliver, slack_fake)
        await deliver(slack_fake.view_submission(RUN_MODAL_CALLBACK, {"code": {"code": "spam()"}}))
        await slack_fake.wait_for_call("chat.postMessage", count=2)
        assert await adapter.idle()
    shown, dm = slack_fake.calls_to("chat.postMessage")
    assert shown.ok and "line 1" in shown.args["text"]
    assert not dm.ok
    assert slack_fake.ephemerals_for("U0ALICE") == []  # no apology: the output was shown


async def test_snippet_errors_are_private_even_without_a_response_url(
    adapter: SlackAdapter, slack_fake: FakeSlack, sandbox: StubSandbox
) -> None:
    sandbox.error = RateLimited("You can run 6 snippets a minute; try again in 20 s.")
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await open_modal(deliver, slack_fake)
        await deliver(slack_fake.view_submission(RUN_MODAL_CALLBACK, {"code": {"code": "1"}}))
        [reply] = await private_replies(slack_fake, "U0ALICE", 1)
    assert reply.via == "chat.postEphemeral" and reply.channel == "C0STUDY"
    assert reply.text == "You can run 6 snippets a minute; try again in 20 s."
    assert slack_fake.calls_to("chat.postMessage") == []


async def test_private_output_carries_long_output_inline(
    adapter: SlackAdapter, slack_fake: FakeSlack, sandbox: StubSandbox
) -> None:
    sandbox.ephemeral, sandbox.output = True, LONG
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await open_modal(deliver, slack_fake)
        await deliver(slack_fake.view_submission(RUN_MODAL_CALLBACK, {"code": {"code": "1"}}))
        [reply] = await private_replies(slack_fake, "U0ALICE", 1)
    assert "output.txt" in (reply.text or "") and "line 42" in (reply.text or "")
    assert slack_fake.files == {}


@pytest.mark.parametrize("mode", DELIVERY_MODES)
async def test_message_shortcut_runs_the_first_code_block(
    mode: DeliveryMode, adapter: SlackAdapter, slack_fake: FakeSlack, sandbox: StubSandbox
) -> None:
    text = "Why does this fail?\n```\nx = torch.ones(2)\nx.backward()\n```\nthanks"
    async with bolt_delivery(mode, adapter.app, slack_fake) as deliver:
        ack = await deliver(slack_fake.message_shortcut(RUN_SHORTCUT_CALLBACK, text))
        assert ack.status == 200 and ack.payload is None
        await slack_fake.wait_for_call("chat.postMessage")
    [(ctx, code)] = sandbox.calls
    assert code == "x = torch.ones(2)\nx.backward()" and ctx.channel == "C0STUDY"


async def test_message_shortcut_without_code_says_so(
    adapter: SlackAdapter, slack_fake: FakeSlack, sandbox: StubSandbox
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.message_shortcut(RUN_SHORTCUT_CALLBACK, "just words"))
        [reply] = await private_replies(slack_fake, "U0ALICE", 1)
    assert "no ``` code block" in (reply.text or "")
    assert sandbox.calls == []


async def test_with_the_sandbox_turned_off_members_are_told_before_typing(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.slash_command(text="run"))
        [reply] = await private_replies(slack_fake, "U0ALICE", 1)
        await deliver(slack_fake.message_shortcut(RUN_SHORTCUT_CALLBACK, "```print(1)```"))
        [_, again] = await private_replies(slack_fake, "U0ALICE", 2)
    assert slack_fake.calls_to("views.open") == []
    assert "Running snippets is turned off on this bot." in (reply.text or "")
    assert "turned off" in (again.text or "")


@pytest.mark.slow
async def test_the_modal_runs_real_torch_in_the_sandbox(
    slack_fake: FakeSlack, tmp_path: Path, clock: SimulatedClock
) -> None:
    """End to end: the modal's code runs in a real jail and its output reaches the channel."""
    config = sandbox_config(pool_size=1, memory_mb=1024)
    async with Sandbox(config) as sandbox, await open_database(tmp_path / "run.sqlite3") as db:
        assert sandbox.available, sandbox.unavailable_reason
        service = build_services(db, clock, runner=sandbox).services  # as the Wiring builds it
        adapter = SlackAdapter(service, slack_settings(slack_fake))
        code = (
            "import torch\nx = torch.tensor(3.0, requires_grad=True)\n"
            "y = x ** 2 if x > 0 else -x\ny.backward()\nprint('grad', x.grad.item())"
        )
        async with bolt_delivery("socket", adapter.app, slack_fake) as deliver:
            await deliver(slack_fake.view_submission(RUN_MODAL_CALLBACK, {"code": {"code": code}}))
            post = await slack_fake.wait_for_call("chat.postMessage", timeout=60)
        assert await adapter.idle(5)
    text = str(post.args.get("text"))
    assert "grad 6.0" in text and "Ran in" in text


@pytest.mark.slow
async def test_study_graph_uploads_the_autograd_picture(
    slack_fake: FakeSlack, tmp_path: Path, clock: SimulatedClock
) -> None:
    """``/study graph --of y``: the modal says what it draws; the graph comes back as a PNG."""
    config = sandbox_config(forks_ahead=1)
    async with Sandbox(config) as sandbox, await open_database(tmp_path / "run.sqlite3") as db:
        assert sandbox.available, sandbox.unavailable_reason
        service = build_services(db, clock, runner=sandbox).services  # as the Wiring builds it
        adapter = SlackAdapter(service, slack_settings(slack_fake))
        code = "import torch\nx = torch.ones(2, requires_grad=True)\ny = x * 2\nz = y.sum()\n"
        async with bolt_delivery("socket", adapter.app, slack_fake) as deliver:
            await open_modal(deliver, slack_fake, "graph --of y")
            modal = slack_fake.view(callback_id=RUN_MODAL_CALLBACK)
            assert modal.title == "Draw an autograd graph"
            submit = slack_fake.view_submission(RUN_MODAL_CALLBACK, {"code": {"code": code}})
            await deliver(submit)
            post = await slack_fake.wait_for_call("chat.postMessage", timeout=60)
            await slack_fake.wait_for_call("files.completeUploadExternal", timeout=30)
        assert await adapter.idle(5)
    text = str(post.args.get("text"))
    assert "MulBackward0" in text and "leaf x" in text and "SumBackward0" not in text
    [picture] = [f for f in slack_fake.files.values() if f.completed]
    assert picture.filename == "autograd-graph.png"
    assert picture.content is not None and picture.content.startswith(b"\x89PNG\r\n\x1a\n")
