"""Long messages reach a real (fake) Slack whole: none is refused, and none loses a line.

The fake refuses what Slack refuses (``msg_blocks_too_long`` past 12,000 characters of block
text, on ``chat.*`` and on a response_url), so each test here failed before the renderer
fitted messages: the member saw nothing at all. Now a long post continues in its thread, a long
private reply in further private replies, and a very long one as a file in the member's DM.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.adapters.slack import SlackAdapter
from bot.core.messages import Message, Section
from bot.core.models import ChatContext
from bot.services.bundle import Services
from tests.adapters.slack.test_flows import private_replies, quiz
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_blockkit import block_text_length
from tests.fakes.slack_fixtures import bolt_delivery

pytestmark = pytest.mark.timeout(60)

BUDGET = 10_000


def texts(blocks: list[dict[str, Any]]) -> str:
    out: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "text" and isinstance(value, str):
                    out.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(blocks)
    return "\n".join(out)


def names(n: int) -> list[str]:
    return [f"member_{i:03d}_with_a_long_display_name" for i in range(n)]


async def test_a_reveal_with_300_names_continues_in_its_thread(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    """The post shows the answer, the count and the fastest names; the thread has the rest."""
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        post = await quiz(deliver, slack_fake)
    shown = " · ".join(f"{name} +{300 - i}" for i, name in enumerate(names(300)))
    reveal = Message(
        title="🏁 Question 3 of 3 · closed",
        sections=(
            Section(heading="Answers", body="✅ **A.** the right one — 300 (100%)"),
            Section(heading="Who got it right (300)", body=shown),
        ),
        footer="Closed with 300 answers",
    )
    await adapter.edit_post(post.channel, post.ts, reveal)
    edited = slack_fake.message(post.ts)
    assert block_text_length(edited.blocks) <= BUDGET
    first = texts(edited.blocks)
    assert "Who got it right (300)" in first and "member_000" in first  # the fastest first
    assert "more lines in the thread under this message" in first
    thread = [m for m in slack_fake.channel_messages(post.channel) if m.thread_ts == post.ts]
    assert thread, "the rest of the names is in the post's thread"
    everything = first + "\n".join(texts(m.blocks) for m in thread)
    assert all(name in everything for name in names(300))
    assert all(block_text_length(m.blocks) <= BUDGET for m in thread)


async def add_reports(service: Services, post_id: int, count: int) -> None:
    for i, name in enumerate(names(count)):
        ctx = ChatContext("slack", "T0STUDY", "C0STUDY", f"U{i:05d}", name)
        await service.reports.report(ctx, post_id, f"reason {i} " + "the answer is wrong " * 24)


async def test_reports_a_few_screens_long_follow_in_more_private_replies(
    adapter: SlackAdapter, slack_fake: FakeSlack, slack_service: Services
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        post = await quiz(deliver, slack_fake)
        post_id = int(post.action_ids()[0].split(":")[1])
        await add_reports(slack_service, post_id, 40)
        await deliver(slack_fake.slash_command(text="reports", user_id="U0ADMIN"))
        replies = await private_replies(slack_fake, "U0ADMIN", 3)
    assert all(block_text_length(r.blocks) <= BUDGET for r in replies)
    assert "more lines in the next messages" in texts(replies[0].blocks)
    everything = "\n".join(texts(r.blocks) for r in replies)
    assert all(name in everything for name in names(40))
    assert not slack_fake.calls_to("files.completeUploadExternal")


async def test_200_open_reports_go_whole_as_a_file_in_the_admins_dm(
    adapter: SlackAdapter, slack_fake: FakeSlack, slack_service: Services
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        post = await quiz(deliver, slack_fake)
        post_id = int(post.action_ids()[0].split(":")[1])
        await add_reports(slack_service, post_id, 200)
        await deliver(slack_fake.slash_command(text="reports", user_id="U0ADMIN"))
        [listing] = await private_replies(slack_fake, "U0ADMIN", 1)
        await slack_fake.wait_for_call("files.completeUploadExternal")
    first = texts(listing.blocks)
    assert block_text_length(listing.blocks) <= BUDGET
    assert "🚩 Open reports (200)" in first
    assert "in the file `studybot-message.txt` in your direct messages with studybot" in first
    [whole] = [f for f in slack_fake.files.values() if f.filename == "studybot-message.txt"]
    assert all(name in whole.text for name in names(200))
    assert whole.channel_ids == ["D0ADMIN"] or whole.channel_ids[0].startswith("D")


async def test_graph_names_are_checked_before_the_modal_opens(
    adapter: SlackAdapter,
    slack_fake: FakeSlack,
    slack_service: Services,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Five long names would overflow the modal's 3,000-character metadata: say why, at once."""
    monkeypatch.setattr(slack_service.runs, "check", lambda: None)
    five = ",".join(f"t{i}_" + "x" * 600 for i in range(5))
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.slash_command(text=f"graph --of {five} y = x * 2"))
        [reply] = await private_replies(slack_fake, "U0ALICE", 1)
        four = ",".join(f"t{i}" for i in range(5))
        await deliver(slack_fake.slash_command(text=f"graph --of {four} y = x * 2"))
        [_, again] = await private_replies(slack_fake, "U0ALICE", 2)
    assert "too long for a variable name" in (reply.text or "")
    assert "At most 4 tensors" in (again.text or "")
    assert not slack_fake.calls_to("views.open")


async def test_run_code_cut_to_the_modal_says_so(
    adapter: SlackAdapter,
    slack_fake: FakeSlack,
    slack_service: Services,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(slack_service.runs, "check", lambda: None)
    code = "\n".join(f"print({i})" for i in range(500))  # 4,000 characters and more
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.slash_command(text=f"run {code}"))
        call = await slack_fake.wait_for_call("views.open")
    assert call.ok, call.response
    view = slack_fake.view(user_id="U0ALICE")
    shown = texts(view.blocks)
    assert f"The code was {len(code):,} characters" in shown and "was cut" in shown
