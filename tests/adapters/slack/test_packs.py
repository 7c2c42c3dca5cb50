"""``/study pack …`` and the "Check question pack" shortcut: the real AsyncApp, FakeSlack, a real
service on a SQLite file, and a packs folder of the test's own (so installs land there).

Uploads go the way a member's file does on Slack: the member posts a message with a .yaml file
attached (``fake.add_user_file``), runs the shortcut on it; the adapter acks, asks ``files.info``,
downloads ``url_private_download`` with the bot token and hands the bytes to the core.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot.adapters.slack import SlackAdapter
from bot.adapters.slack.files import SlackFile, download, may_carry_token
from bot.adapters.slack.manifest import PACK_SHORTCUT_CALLBACK
from bot.app import build_services
from bot.core.clock import SimulatedClock
from bot.core.errors import Unavailable
from bot.questions.loader import load_packs
from bot.storage.database import open_database
from tests.adapters.slack.conftest import SLACK_PACKS, slack_settings
from tests.adapters.slack.test_flows import private_replies, quiz
from tests.conftest import TEST_PACKS
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_fixtures import DELIVERY_MODES, DeliveryMode, bolt_delivery
from tests.helpers import FRESH

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def packs_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "packs"
    folder.mkdir()
    for source in (TEST_PACKS / "mini.yaml", *sorted(SLACK_PACKS.glob("*.yaml"))):
        shutil.copy(source, folder / source.name)
    return folder


@pytest_asyncio.fixture
async def pack_adapter(
    slack_fake: FakeSlack, tmp_path: Path, clock: SimulatedClock, packs_dir: Path
) -> AsyncIterator[SlackAdapter]:
    """The adapter over a service that knows its packs folder, as the Wiring builds it."""
    async with await open_database(tmp_path / "packs.sqlite3") as db:
        built = build_services(db, clock, rng=random.Random(7), packs_dir=packs_dir)
        service = built.services
        await service.packs.sync(load_packs(packs_dir).packs)
        adapter = SlackAdapter(service, slack_settings(slack_fake))
        yield adapter
        assert await adapter.idle(5), "a Slack listener was still running at the end of the test"


def _texts(fake: FakeSlack, user: str) -> list[str]:
    return [e.text or "" for e in fake.ephemerals_for(user)]


@pytest.mark.parametrize("mode", DELIVERY_MODES)
async def test_disable_and_enable_a_pack_in_a_channel(
    mode: DeliveryMode, pack_adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery(mode, pack_adapter.app, slack_fake) as deliver:
        ack = await deliver(
            slack_fake.slash_command(text="pack disable slack-mc", user_id="U0ADMIN")
        )
        assert ack.status == 200 and ack.payload is None and ack.latency < 3
        [off] = await private_replies(slack_fake, "U0ADMIN", 1)
        assert "slack-mc is off in #study" in (off.text or "")

        await deliver(slack_fake.slash_command(text="quiz slack-mc"))
        [refused] = await private_replies(slack_fake, "U0ALICE", 1)
        assert "Pack `slack-mc` is off in this channel" in (refused.text or "")
        other = slack_fake.slash_command(text="quiz slack-mc", channel_id="C0OTHER")
        await deliver(other)
        posted = await slack_fake.wait_for_call("chat.postMessage")
        assert posted.args["channel"] == "C0OTHER"

        await deliver(slack_fake.slash_command(text="pack list"))
        listing = (await private_replies(slack_fake, "U0ALICE", 2))[-1].text or ""
        assert "slack-mc — Slack test — one multiple choice (1 question) · off here" in listing

        await deliver(slack_fake.slash_command(text="pack enable slack-mc", user_id="U0ADMIN"))
        on = (await private_replies(slack_fake, "U0ADMIN", 2))[-1]
        assert "slack-mc is on in #study again" in (on.text or "")
        await quiz(deliver, slack_fake, count=2)


async def test_members_cannot_switch_packs_and_typos_get_a_suggestion(
    pack_adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery("in_process", pack_adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.slash_command(text="pack disable slack-mc"))
        await private_replies(slack_fake, "U0ALICE", 1)  # replies may arrive out of order
        await deliver(slack_fake.slash_command(text="pack disable slack-mcc", user_id="U0ADMIN"))
        ack = await deliver(slack_fake.slash_command(text="pack disable"))
        assert ack.payload is not None and "/study pack disable NAME" in ack.payload["text"]
        await deliver(slack_fake.slash_command(text="pack upload"))
        await private_replies(slack_fake, "U0ALICE", 2)
        await private_replies(slack_fake, "U0ADMIN", 1)
    refused, how = _texts(slack_fake, "U0ALICE")
    assert "Only admins can turn packs on or off" in refused
    assert "choose *Check question pack* from the message's ⋯ menu" in how
    assert _texts(slack_fake, "U0ADMIN") == [
        "There is no pack called `slack-mcc`. Did you mean `slack-mc`?"
    ]


@pytest.mark.parametrize("mode", DELIVERY_MODES)
async def test_an_admins_pack_file_is_checked_installed_and_quizzable(
    mode: DeliveryMode, pack_adapter: SlackAdapter, slack_fake: FakeSlack, packs_dir: Path
) -> None:
    message = slack_fake.add_user_file("fresh.yaml", FRESH, user_id="U0ADMIN", text="new pack")
    async with bolt_delivery(mode, pack_adapter.app, slack_fake) as deliver:
        shortcut = slack_fake.message_shortcut(
            PACK_SHORTCUT_CALLBACK, message_ts=message.ts, user_id="U0ADMIN"
        )
        ack = await deliver(shortcut)
        assert ack.status == 200 and ack.payload is None and ack.latency < 3
        [report] = await private_replies(slack_fake, "U0ADMIN", 1)
        assert "fresh.yaml: pack fresh, 1 question, no problems" in (report.text or "")
        assert "✅ Installed fresh — Fresh questions (1 question) as `fresh.yaml`" in (
            report.text or ""
        )
        assert (packs_dir / "fresh.yaml").read_text() == FRESH
        await quiz(deliver, slack_fake, "fresh")
    [info] = slack_fake.calls_to("files.info")
    assert info.args["file"] == message.files[0]["id"]
    [fetched] = slack_fake.file_downloads
    assert fetched.authorized and fetched.status == 200 and "/download/" in fetched.path


async def test_a_members_file_gets_the_linters_report_and_is_not_installed(
    pack_adapter: SlackAdapter, slack_fake: FakeSlack, packs_dir: Path
) -> None:
    broken = FRESH.replace("difficulty: easy", "difficulty: ultra")
    bad = slack_fake.add_user_file("fresh.yaml", broken)
    good = slack_fake.add_user_file("fresh.yaml", FRESH)
    async with bolt_delivery("socket", pack_adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.message_shortcut(PACK_SHORTCUT_CALLBACK, message_ts=bad.ts))
        await private_replies(slack_fake, "U0ALICE", 1)
        await deliver(slack_fake.message_shortcut(PACK_SHORTCUT_CALLBACK, message_ts=good.ts))
        await private_replies(slack_fake, "U0ALICE", 2)
    report, valid = _texts(slack_fake, "U0ALICE")
    assert "fresh.yaml: 1 error" in report  # the bad item (not also "no items at all")
    assert "fresh.yaml:6: f-flash-1.difficulty: expected one of" in report
    assert "Ask an admin to upload it to install it." in valid
    assert not (packs_dir / "fresh.yaml").exists()


async def test_a_long_report_sends_the_full_list_to_the_members_dm(
    pack_adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    items = "".join(
        f"  - id: bad-{n}\n    kind: flashcard\n    difficulty: hard\n    prompt: Q{n}\n"
        for n in range(20)
    )
    message = slack_fake.add_user_file("many.yaml", f"pack: many\ntitle: M\nitems:\n{items}")
    async with bolt_delivery("in_process", pack_adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.message_shortcut(PACK_SHORTCUT_CALLBACK, message_ts=message.ts))
        [reply] = await private_replies(slack_fake, "U0ALICE", 1)
    assert "`many-problems.txt` is in your direct messages with studybot" in (reply.text or "")
    [listed] = [f for f in slack_fake.files.values() if f.filename == "many-problems.txt"]
    assert listed.channel_ids == ["D0ALICE"]
    lines = listed.text.splitlines()
    assert len(lines) == 20 and lines[0] == "many.yaml:4: bad-0.answer: required field is missing"


@pytest.mark.parametrize(
    ("filename", "content", "says"),
    [
        ("notes.txt", "pack: x", "`notes.txt` is not a pack file"),
        ("big.yaml", "#" * (1024 * 1024 + 1), "`big.yaml` is 1 MiB; a pack file uploaded in chat"),
    ],
)
async def test_wrong_files_are_refused_before_they_are_downloaded(
    pack_adapter: SlackAdapter, slack_fake: FakeSlack, filename: str, content: str, says: str
) -> None:
    message = slack_fake.add_user_file(filename, content, user_id="U0ADMIN")
    async with bolt_delivery("in_process", pack_adapter.app, slack_fake) as deliver:
        shortcut = slack_fake.message_shortcut(
            PACK_SHORTCUT_CALLBACK, message_ts=message.ts, user_id="U0ADMIN"
        )
        await deliver(shortcut)
        [reply] = await private_replies(slack_fake, "U0ADMIN", 1)
    assert (reply.text or "").startswith(says)
    assert slack_fake.file_downloads == []


async def test_a_message_without_a_file_is_answered(
    pack_adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery("in_process", pack_adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.message_shortcut(PACK_SHORTCUT_CALLBACK, "just words"))
        [reply] = await private_replies(slack_fake, "U0ALICE", 1)
    assert (reply.text or "").startswith("That message has no file attached.")
    assert slack_fake.calls_to("files.info") == []


async def test_the_bot_token_only_goes_to_slacks_file_host(
    pack_adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    message = slack_fake.add_user_file("fresh.yaml", FRESH)
    file_id = message.files[0]["id"]
    stolen = {"id": file_id, "name": "fresh.yaml", "size": 10}
    stolen["url_private_download"] = "https://attacker.example/files-pri/x/fresh.yaml"
    slack_fake.override("files.info", lambda _call: {"ok": True, "file": stolen})
    async with bolt_delivery("in_process", pack_adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.message_shortcut(PACK_SHORTCUT_CALLBACK, message_ts=message.ts))
        [reply] = await private_replies(slack_fake, "U0ALICE", 1)
    assert "I can't download that file from Slack" in (reply.text or "")
    assert slack_fake.file_downloads == []

    api = "https://slack.com/api/"
    assert may_carry_token("https://files.slack.com/files-pri/T1-F1/download/p.yaml", api)
    assert not may_carry_token("http://files.slack.com/files-pri/T1-F1/p.yaml", api)
    assert not may_carry_token("https://files.slack.com.evil.example/p.yaml", api)
    assert not may_carry_token("https://slack.com@evil.example/p.yaml", api)
    assert may_carry_token(f"{slack_fake.url}/files-pri/x/p.yaml", slack_fake.api_url)
    assert not may_carry_token("http://127.0.0.1:1/files-pri/x/p.yaml", slack_fake.api_url)


async def test_a_sign_in_page_is_not_taken_for_the_file(slack_fake: FakeSlack) -> None:
    message = slack_fake.add_user_file("fresh.yaml", FRESH)
    entry = message.files[0]
    file = SlackFile(entry["id"], "fresh.yaml", entry["size"], entry["url_private_download"])
    with pytest.raises(Unavailable, match="would not let studybot download that file"):
        await download(file, token="xoxb-wrong", api_url=slack_fake.api_url, limit=1000)
    assert await download(file, token=slack_fake.bot_token, api_url=slack_fake.api_url, limit=10)
    assert (
        len(await download(file, token=slack_fake.bot_token, api_url=slack_fake.api_url, limit=10))
        == 11
    )
