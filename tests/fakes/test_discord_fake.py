"""Contract tests: the real discord.py 2.7.1 client, end to end against the local Discord fake.

Each test defines (or reuses) a ``commands.Bot`` with default intents, starts it against the fake
with ``fake.running(bot)``, drives it the way a user would and checks what reached the "API".
"""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import discord
import pytest
import yarl
from discord import app_commands
from discord.ext import commands
from discord.gateway import DiscordWebSocket

from tests.fakes.discord_api import (
    FakeDiscord,
    FakeGuild,
    FakeMember,
    assert_discord_quiet,
    point_discord_py,
    restore_discord_endpoints,
    use_discord_endpoints,
)

pytestmark = pytest.mark.timeout(60)

ANSWER_TEMPLATE = r"studybot:answer:(?P<post>[0-9]+):(?P<choice>[A-E])"


class AnswerButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=ANSWER_TEMPLATE):
    """A persistent answer button: everything it needs lives in its custom_id."""

    def __init__(self, post: int, choice: str) -> None:
        super().__init__(
            discord.ui.Button(
                label=choice,
                style=discord.ButtonStyle.primary,
                custom_id=f"studybot:answer:{post}:{choice}",
            )
        )
        self.post = post
        self.choice = choice

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
    ) -> AnswerButton:
        return cls(int(match["post"]), match["choice"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        bot = interaction.client
        assert isinstance(bot, StudyTestBot)
        key = (self.post, interaction.user.id)
        if key in bot.answers:
            await interaction.response.send_message("You already answered.", ephemeral=True)
            return
        bot.answers[key] = self.choice
        await interaction.response.send_message(f"Recorded {self.choice}.", ephemeral=True)


def answer_view(post: int) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for choice in "ABCDE":
        view.add_item(AnswerButton(post, choice))
    return view


class RunModal(discord.ui.Modal, title="Run a snippet"):
    code: discord.ui.TextInput[RunModal] = discord.ui.TextInput(
        label="Code", style=discord.TextStyle.paragraph, max_length=4000
    )

    async def on_submit(self, interaction: discord.Interaction[Any]) -> None:
        await interaction.response.defer(thinking=True, ephemeral=True)
        source = self.code.value
        await interaction.followup.send(
            f"ran {len(source)} chars",
            file=discord.File(io.BytesIO(source.upper().encode()), "output.txt"),
        )


class StudyTestBot(commands.Bot):
    """A minimal bot shaped like studybot's adapter: slash commands, buttons, a modal."""

    def __init__(self) -> None:
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=discord.Intents.default(),
            guild_ready_timeout=0.1,  # discord.py waits this long after the last GUILD_CREATE
            help_command=None,
        )
        self.answers: dict[tuple[int, int], str] = {}
        self.seen: list[tuple[str, Any]] = []
        self.ready_count = 0
        self.ready_event = asyncio.Event()
        self._install_commands()

    async def setup_hook(self) -> None:
        # What makes old buttons work after a restart: the template, not a stored view.
        self.add_dynamic_items(AnswerButton)

    async def on_ready(self) -> None:
        self.ready_count += 1
        self.ready_event.set()

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        # discord.py sleeps 5 s before every re-IDENTIFY (after INVALID_SESSION); not in tests.
        return None

    def _install_commands(self) -> None:
        tree = self.tree

        @tree.command(name="quiz", description="Start a quiz")
        @app_commands.describe(topic="What to ask about", count="How many questions")
        @app_commands.choices(
            level=[
                app_commands.Choice(name="Easy", value="easy"),
                app_commands.Choice(name="Hard", value="hard"),
            ]
        )
        async def quiz(
            interaction: discord.Interaction[Any],
            topic: str,
            count: int = 1,
            level: app_commands.Choice[str] | None = None,
        ) -> None:
            self.seen.append(("quiz", (topic, count, level.value if level else None)))
            await interaction.response.send_message(
                f"{count} question(s) on {topic}", ephemeral=True
            )

        @tree.command(name="reveal", description="Reveal the answer (admins)")
        @app_commands.default_permissions(manage_guild=True)
        @app_commands.checks.has_permissions(manage_guild=True)
        async def reveal(interaction: discord.Interaction[Any]) -> None:
            await interaction.response.send_message("Revealed.")

        @reveal.error
        async def reveal_error(
            interaction: discord.Interaction[Any], error: app_commands.AppCommandError
        ) -> None:
            if isinstance(error, app_commands.MissingPermissions):
                await interaction.response.send_message("Admins only.", ephemeral=True)

        @tree.command(name="run", description="Run a torch snippet")
        async def run(interaction: discord.Interaction[Any]) -> None:
            await interaction.response.send_modal(RunModal())

        @tree.command(name="export", description="Export your scores")
        async def export(interaction: discord.Interaction[Any]) -> None:
            data = io.BytesIO(f"user,{interaction.user.id}\n".encode())
            await interaction.response.send_message(
                "Your scores:", file=discord.File(data, "scores.csv"), ephemeral=True
            )

        @tree.command(name="pack", description="Choose a pack")
        async def pack(interaction: discord.Interaction[Any], name: str) -> None:
            await interaction.response.send_message(f"pack {name}", ephemeral=True)

        @pack.autocomplete("name")
        async def pack_names(
            interaction: discord.Interaction[Any], current: str
        ) -> list[app_commands.Choice[str]]:
            names = ["pytorch-basics", "python-basics", "linear-algebra"]
            return [app_commands.Choice(name=n, value=n) for n in names if n.startswith(current)]

        group = app_commands.Group(name="stats", description="Statistics")

        @group.command(name="user", description="A member's stats")
        async def stats_user(interaction: discord.Interaction[Any], member: discord.Member) -> None:
            self.seen.append(("stats user", (member.id, member.name)))
            await interaction.response.defer(ephemeral=True)
            await interaction.edit_original_response(content=f"stats for {member.display_name}")

        tree.add_command(group)


@pytest.fixture
async def fake(caplog: pytest.LogCaptureFixture) -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as fake:
        with use_discord_endpoints(fake.api_base, fake.gateway_url):
            yield fake
    assert_discord_quiet(fake, caplog.records)


@pytest.fixture
def guild(fake: FakeDiscord) -> FakeGuild:
    guild = fake.add_guild("Study Hall", channels=["general", "questions"])
    fake.add_role(guild, "Study Admin", permissions=discord.Permissions(manage_guild=True))
    return guild


@pytest.fixture
def alice(fake: FakeDiscord, guild: FakeGuild) -> FakeMember:
    return fake.add_member(guild, 1001, "alice")


@pytest.fixture
def admin(fake: FakeDiscord, guild: FakeGuild) -> FakeMember:
    return fake.add_member(guild, 1002, "grace", roles=["Study Admin"])


@pytest.fixture
async def bot(fake: FakeDiscord, guild: FakeGuild) -> AsyncIterator[StudyTestBot]:
    client = StudyTestBot()
    async with fake.running(client):
        await client.tree.sync()
        client.tree.copy_global_to(guild=discord.Object(guild.id))
        await client.tree.sync(guild=discord.Object(guild.id))
        yield client


def text_channel(bot: commands.Bot, channel_id: int) -> discord.TextChannel:
    channel = bot.get_channel(channel_id)
    assert isinstance(channel, discord.TextChannel)
    return channel


# --- connecting ----------------------------------------------------------------------------------


async def test_connects_with_ready_and_guild_create(fake: FakeDiscord, guild: FakeGuild) -> None:
    client = StudyTestBot()
    async with fake.running(client):
        assert client.user is not None
        assert client.user.id == fake.bot_user.id
        assert client.application_id == fake.application_id
        cached = client.get_guild(guild.id)
        assert cached is not None
        assert {c.name for c in cached.text_channels} == {"general", "questions"}
        assert cached.owner_id == guild.owner_id
        assert cached.default_role.permissions.send_messages
        assert cached.me is not None
        assert cached.me.guild_permissions.manage_messages
        assert client.ready_count == 1

        [session] = fake.sessions
        assert session.identify is not None
        assert session.identify["token"] == fake.token
        assert session.identify["intents"] == discord.Intents.default().value
        assert session.query["v"] == "10"
        assert session.query["encoding"] == "json"
        # discord.py asks for a compressed stream, but reads our text frames as they are.
        assert session.query["compress"] in ("zlib-stream", "zstd-stream")

    assert [c.path for c in fake.calls[:2]] == ["/users/@me", "/oauth2/applications/@me"]
    me = fake.calls[0]
    assert me.authorized
    assert "Authorization" not in me.headers
    assert me.headers["User-Agent"].startswith("DiscordBot")
    assert fake.unknown_calls == []


async def test_rest_answers_exact_json_content_type_and_404s_unknown_routes() -> None:
    async with FakeDiscord() as fake, aiohttp.ClientSession() as http:
        headers = {"Authorization": f"Bot {fake.token}"}
        async with http.get(f"{fake.api_base}/gateway/bot", headers=headers) as resp:
            assert resp.status == 200
            assert resp.headers["Content-Type"] == "application/json"
            assert (await resp.json())["url"] == fake.gateway_url
        async with http.get(f"{fake.api_base}/no/such/route", headers=headers) as resp:
            assert resp.status == 404
            assert resp.headers["Content-Type"] == "application/json"
            assert await resp.json() == {"message": "404: Not Found", "code": 0}
        async with http.get(f"{fake.api_base}/users/@me") as resp:
            assert resp.status == 401

        assert [c.path for c in fake.unknown_calls] == ["/no/such/route"]
        assert len(fake.calls_to("GET", "/gateway/bot")) == 1


async def test_running_explains_a_client_that_is_not_pointed_at_the_fake(
    fake: FakeDiscord, guild: FakeGuild
) -> None:
    with restore_discord_endpoints():
        point_discord_py("http://127.0.0.1:9/api/v10", None)  # nothing listens there
        with pytest.raises(RuntimeError, match="not pointed at the fake"):
            async with fake.running(StudyTestBot()):
                pass


async def test_wrong_token_fails_login(fake: FakeDiscord, guild: FakeGuild) -> None:
    client = StudyTestBot()
    with pytest.raises(discord.LoginFailure):
        await client.login("not-the-token")
    await client.close()


async def test_reconnect_resumes_without_a_second_ready(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild, alice: FakeMember
) -> None:
    first = fake.sessions[0]
    await fake.request_reconnect()
    resumed = await fake.gateway.wait_for_session(5, where=lambda s: s.resumed)
    assert resumed is not first
    assert resumed.session_id == first.session_id
    assert bot.ready_count == 1
    ix = await fake.slash_command(guild, "general", alice, "quiz", {"topic": "resume"})
    assert (await ix.response()).content == "1 question(s) on resume"


async def test_invalid_session_identifies_again_and_fires_on_ready_again(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild, alice: FakeMember
) -> None:
    first = fake.sessions[0]
    bot.ready_event.clear()
    await fake.invalidate_session()
    second = await fake.gateway.wait_for_session(5, where=lambda s: s is not first)
    assert second.identify is not None
    assert second.identify["token"] == fake.token
    assert second.session_id != first.session_id
    await asyncio.wait_for(bot.ready_event.wait(), 5)  # after guild_ready_timeout
    assert bot.ready_count == 2
    ix = await fake.slash_command(guild, "general", alice, "quiz", {"topic": "again"})
    assert (await ix.response()).content == "1 question(s) on again"


async def test_gateway_url_can_come_from_get_gateway_bot(
    fake: FakeDiscord, guild: FakeGuild
) -> None:
    """What the adapter does when DISCORD_API_BASE is set but DISCORD_GATEWAY_URL is not."""

    class DiscoveringBot(StudyTestBot):
        async def setup_hook(self) -> None:
            await super().setup_hook()
            _, url, _ = await self.http.get_bot_gateway()
            DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(url)

    with restore_discord_endpoints():
        point_discord_py(fake.api_base, None)
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL("ws://127.0.0.1:9/unused")
        client = DiscoveringBot()
        async with fake.running(client):
            assert client.get_guild(guild.id) is not None
    assert len(fake.calls_to("GET", "/gateway/bot")) == 1


# --- application commands ------------------------------------------------------------------------


async def test_tree_sync_payload_is_recorded_and_echoed_with_ids(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild
) -> None:
    global_put = fake.calls_to("PUT", "/applications/{app}/commands")[0]
    names = sorted(c["name"] for c in global_put.json)
    assert names == ["export", "pack", "quiz", "reveal", "run", "stats"]
    quiz = next(c for c in global_put.json if c["name"] == "quiz")
    assert quiz["description"] == "Start a quiz"
    options = {o["name"]: o for o in quiz["options"]}
    assert options["topic"] == {
        "type": 3,
        "name": "topic",
        "description": "What to ask about",
        "required": True,
    }
    assert options["count"]["type"] == 4
    assert not options["count"]["required"]
    assert [c["value"] for c in options["level"]["choices"]] == ["easy", "hard"]
    reveal = next(c for c in global_put.json if c["name"] == "reveal")
    manage_guild = discord.Permissions(manage_guild=True).value
    assert reveal["default_member_permissions"] == manage_guild  # discord.py sends an int...
    echoed = next(c for c in global_put.response if c["name"] == "reveal")
    assert echoed["default_member_permissions"] == str(manage_guild)  # ...Discord answers a string

    guild_put = await fake.wait_for_call("PUT", f"/applications/{{app}}/guilds/{guild.id}/commands")
    assert sorted(c["name"] for c in guild_put.json) == names
    assert all(c["guild_id"] == str(guild.id) for c in guild_put.response)

    fetched = await bot.tree.fetch_commands(guild=discord.Object(guild.id))
    assert sorted(c.name for c in fetched) == names
    assert all(c.id for c in fetched)

    # Re-syncing keeps command ids, as Discord does.
    before = {c["name"]: c["id"] for c in guild_put.response}
    again = await bot.tree.sync(guild=discord.Object(guild.id))
    assert {c.name: str(c.id) for c in again} == before


async def test_invalid_command_is_rejected_like_discord(
    fake: FakeDiscord, guild: FakeGuild
) -> None:
    client = StudyTestBot()
    command: app_commands.Command[Any, ..., None]
    command = app_commands.Command(name="ok", description="x", callback=_noop)
    client.tree.add_command(command)
    command.description = ""  # after construction, so discord.py's own check is bypassed
    async with fake.running(client):
        with pytest.raises(app_commands.CommandSyncFailure, match="description"):
            await client.tree.sync()


async def _noop(interaction: discord.Interaction[Any]) -> None:
    return None


async def test_slash_command_with_options_answered_ephemerally(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild, alice: FakeMember
) -> None:
    ix = await fake.slash_command(
        guild, "questions", alice, "quiz", {"topic": "tensors", "count": 3, "level": "hard"}
    )
    response = await ix.response()

    assert response.type == 4
    assert response.content == "3 question(s) on tensors"
    assert response.flags & 64
    assert response.ephemeral
    assert bot.seen == [("quiz", ("tensors", 3, "hard"))]
    # The interaction the bot received carries what discord.py 2.7.1 requires.
    for key in (
        "attachment_size_limit",
        "app_permissions",
        "entitlements",
        "authorizing_integration_owners",
        "context",
        "locale",
        "guild_locale",
        "version",
        "token",
        "application_id",
    ):
        assert key in ix.payload
    assert ix.payload["member"]["permissions"]
    # The callback was sent with ?with_response=1 and its message exists.
    assert response.call.query["with_response"] == "1"
    reply = await ix.reply()
    assert reply.ephemeral
    assert reply.channel_id == guild.channel("questions").id
    assert reply.payload["interaction_metadata"]["user"]["id"] == str(alice.id)


async def test_slash_command_fake_checks_options_against_the_synced_schema(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild, alice: FakeMember
) -> None:
    with pytest.raises(ValueError, match="missing required"):
        await fake.slash_command(guild, "general", alice, "quiz", {"count": 2})
    with pytest.raises(KeyError, match="no option"):
        await fake.slash_command(guild, "general", alice, "quiz", {"topic": "x", "nope": 1})
    with pytest.raises(ValueError, match="choices"):
        await fake.slash_command(guild, "general", alice, "quiz", {"topic": "x", "level": "mid"})


async def test_subcommand_with_member_option_and_deferred_edit(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild, alice: FakeMember, admin: FakeMember
) -> None:
    ix = await fake.slash_command(
        guild, "general", admin, "stats", {"member": alice}, subcommand="user"
    )
    response = await ix.response()
    assert response.type == 5
    assert response.deferred
    assert response.ephemeral
    reply = await ix.reply()
    assert reply.content == "stats for alice"
    assert reply.ephemeral
    assert not reply.loading
    assert bot.seen == [("stats user", (alice.id, "alice"))]
    assert len(fake.calls_to("PATCH", "/webhooks/{app}/{token}/messages/@original")) == 1


async def test_admin_refusal_uses_member_permissions(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild, alice: FakeMember, admin: FakeMember
) -> None:
    refused = await (await fake.slash_command(guild, "general", alice, "reveal")).response()
    assert refused.content == "Admins only."
    assert refused.ephemeral

    allowed = await (await fake.slash_command(guild, "general", admin, "reveal")).response()
    assert allowed.content == "Revealed."
    assert not allowed.ephemeral

    # An explicit override works too, regardless of roles.
    boss = fake.add_member(guild, 1003, "boss", permissions=discord.Permissions(manage_guild=True))
    assert (await (await fake.slash_command(guild, None, boss, "reveal")).response()).content == (
        "Revealed."
    )


async def test_callback_with_a_file_is_multipart(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild, alice: FakeMember
) -> None:
    ix = await fake.slash_command(guild, "general", alice, "export")
    response = await ix.response()
    assert response.content == "Your scores:"
    assert response.ephemeral
    assert [f.filename for f in response.files] == ["scores.csv"]
    assert response.attachments == [{"id": 0, "filename": "scores.csv"}]
    reply = await ix.reply()
    assert reply.files == {"scores.csv": f"user,{alice.id}\n".encode()}


async def test_slash_command_in_a_dm(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild, alice: FakeMember
) -> None:
    ix = await fake.slash_command(None, None, alice, "quiz", {"topic": "dm"})
    assert (await ix.response()).content == "1 question(s) on dm"
    assert ix.payload["context"] == 1
    assert ix.payload["user"]["id"] == str(alice.id)
    assert "member" not in ix.payload


async def test_autocomplete_returns_choices(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild, alice: FakeMember
) -> None:
    ix = await fake.autocomplete(guild, "general", alice, "pack", {"name": "py"}, focused="name")
    response = await ix.response()
    assert response.type == 8
    assert [c["value"] for c in response.choices] == ["pytorch-basics", "python-basics"]


# --- messages and components ---------------------------------------------------------------------


async def test_question_with_dynamic_buttons_and_an_ephemeral_answer(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild, alice: FakeMember
) -> None:
    channel = text_channel(bot, guild.channel("questions").id)
    sent = await channel.send(
        "Q1: what does `torch.zeros(2, 3).shape` return?", view=answer_view(post=42)
    )

    post = await fake.wait_for_call("POST", "/channels/{id}/messages")
    assert post.path == f"/channels/{channel.id}/messages"
    [row] = post.json["components"]
    assert [b["custom_id"] for b in row["components"]] == [
        f"studybot:answer:42:{c}" for c in "ABCDE"
    ]
    stored = fake.message(sent.id)
    assert stored.payload["author"]["id"] == str(fake.bot_user.id)
    assert stored.custom_ids == [f"studybot:answer:42:{c}" for c in "ABCDE"]
    assert len(sent.components) == 1  # discord.py parsed the echoed components

    click = await fake.click(stored, alice, label="B")
    response = await click.response()
    assert response.content == "Recorded B."
    assert response.ephemeral
    assert bot.answers == {(42, alice.id): "B"}
    callbacks = fake.calls_to("POST", f"/interactions/{click.id}/{{token}}/callback")
    assert len(callbacks) == 1

    again = await fake.click("studybot:answer:42:C", alice)
    assert (await again.response()).content == "You already answered."
    assert bot.answers == {(42, alice.id): "B"}


async def test_click_after_restart_is_handled_by_the_new_client(
    fake: FakeDiscord, guild: FakeGuild, alice: FakeMember
) -> None:
    first = StudyTestBot()
    async with fake.running(first):
        sent = await text_channel(first, guild.channel("questions").id).send(
            "Q7", view=answer_view(post=7)
        )
    assert first.is_closed()

    second = StudyTestBot()  # a fresh process: only add_dynamic_items in setup_hook
    async with fake.running(second):
        click = await fake.click(sent.id, alice, custom_id="studybot:answer:7:D")
        response = await click.response()
    assert response.content == "Recorded D."
    assert response.ephemeral
    assert second.answers == {(7, alice.id): "D"}
    assert first.answers == {}
    assert len(fake.gateway.history) == 2


async def test_click_can_update_the_message_in_place(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild, alice: FakeMember
) -> None:
    class Close(discord.ui.View):
        @discord.ui.button(label="Close", custom_id="studybot:close")
        async def close(
            self, interaction: discord.Interaction[Any], button: discord.ui.Button[Any]
        ) -> None:
            button.disabled = True
            await interaction.response.edit_message(content="Closed.", view=self)

    sent = await text_channel(bot, guild.channel("general").id).send("Open", view=Close())
    click = await fake.click(sent.id, alice)
    response = await click.response()
    assert response.type == 7
    message = await click.reply()
    assert message.id == sent.id
    assert message.content == "Closed."
    assert message.buttons[0]["disabled"] is True
    with pytest.raises(AssertionError, match="disabled"):
        await fake.click(sent.id, alice)


async def test_select_menu_values_reach_the_callback(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild, alice: FakeMember
) -> None:
    picked: list[list[str]] = []

    class Packs(discord.ui.View):
        @discord.ui.select(
            custom_id="studybot:packs",
            options=[discord.SelectOption(label=n) for n in ("torch", "numpy", "python")],
            max_values=2,
        )
        async def choose(
            self, interaction: discord.Interaction[Any], select: discord.ui.Select[Any]
        ) -> None:
            picked.append(select.values)
            await interaction.response.defer()

    sent = await text_channel(bot, guild.channel("general").id).send("Packs?", view=Packs())
    click = await fake.click(sent.id, alice, values=["torch", "python"])
    response = await click.response()
    assert response.type == 6
    assert picked == [["torch", "python"]]


async def test_run_modal_submit_to_result(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild, alice: FakeMember
) -> None:
    opened = await (await fake.slash_command(guild, "general", alice, "run")).response()
    assert opened.type == 9
    assert opened.is_modal
    assert opened.title == "Run a snippet"
    [code_input] = opened.text_inputs
    assert code_input["label"] == "Code"
    assert code_input["style"] == 2  # paragraph

    submit = await fake.submit_modal(opened.custom_id, alice, {"Code": "print(1)"})
    deferred = await submit.response()
    assert deferred.type == 5
    assert deferred.ephemeral

    result = await submit.reply()
    assert result.content == "ran 8 chars"
    assert result.ephemeral  # the defer decided; Discord ignores the follow-up's flags
    assert deferred.message is not None
    assert result.id == deferred.message.id  # the follow-up resolved the "thinking" message
    assert result.files == {"output.txt": b"PRINT(1)"}
    followup = await fake.wait_for_call("POST", "/webhooks/{app}/{token}")
    assert followup.query["wait"] == "1"
    assert followup.file("output.txt").data == b"PRINT(1)"
    assert followup.json["attachments"] == [{"id": 0, "filename": "output.txt"}]


async def test_multipart_message_with_attachment_is_recorded_and_downloadable(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild
) -> None:
    channel = text_channel(bot, guild.channel("general").id)
    sent = await channel.send(
        "results", file=discord.File(io.BytesIO(b"loss=0.01\n"), "metrics.txt")
    )
    call = await fake.wait_for_call("POST", f"/channels/{channel.id}/messages")
    assert call.headers["Content-Type"].startswith("multipart/form-data")
    assert call.json["content"] == "results"
    [upload] = call.files
    assert (upload.field, upload.filename, upload.data) == (
        "files[0]",
        "metrics.txt",
        b"loss=0.01\n",
    )

    [attachment] = sent.attachments
    assert attachment.filename == "metrics.txt"
    assert attachment.size == len(b"loss=0.01\n")
    assert await attachment.read() == b"loss=0.01\n"
    assert fake.message(sent.id).files == {"metrics.txt": b"loss=0.01\n"}


async def test_allowed_mentions_are_recorded_and_honoured(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild, alice: FakeMember
) -> None:
    channel = text_channel(bot, guild.channel("general").id)
    quiet = await channel.send(
        f"<@{alice.id}> @everyone output", allowed_mentions=discord.AllowedMentions.none()
    )
    loud = await channel.send(f"<@{alice.id}> your turn")

    first, second = fake.calls_to("POST", f"/channels/{channel.id}/messages")
    assert first.json["allowed_mentions"] == {"parse": []}
    assert "allowed_mentions" not in second.json
    assert quiet.mentions == []
    assert not quiet.mention_everyone
    assert [u.id for u in loud.mentions] == [alice.id]


async def test_edit_delete_and_thread(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild
) -> None:
    channel = text_channel(bot, guild.channel("questions").id)
    sent = await channel.send("Q9", embed=discord.Embed(title="Question 9"))
    assert sent.embeds[0].title == "Question 9"

    edited = await sent.edit(content="Q9 (closed)", embed=discord.Embed(title="Answer: B"))
    assert edited.content == "Q9 (closed)"
    stored = fake.message(sent.id)
    assert stored.edits == 1
    assert stored.embeds[0]["title"] == "Answer: B"

    thread = await sent.create_thread(name="Q9 discussion")
    assert thread.parent_id == channel.id
    call = await fake.wait_for_call("POST", f"/channels/{channel.id}/messages/{sent.id}/threads")
    assert call.json["name"] == "Q9 discussion"
    await thread.send("Solution steps...")
    assert fake.messages_in(thread.id)[0].content == "Solution steps..."

    fetched = await channel.fetch_message(sent.id)
    assert fetched.content == "Q9 (closed)"
    await sent.delete()
    with pytest.raises(discord.NotFound):
        await channel.fetch_message(sent.id)


async def test_guild_added_later_is_joined(fake: FakeDiscord, bot: StudyTestBot) -> None:
    joined = asyncio.Event()

    async def on_guild_join(guild: discord.Guild) -> None:
        joined.set()

    bot.add_listener(on_guild_join)
    late = fake.add_guild("Late Guild", channels=["lobby"])
    assert await fake.join_guild(late) == 1
    await asyncio.wait_for(joined.wait(), 5)
    cached = bot.get_guild(late.id)
    assert cached is not None
    assert [c.name for c in cached.text_channels] == ["lobby"]


async def test_guild_and_member_lookups(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild, admin: FakeMember
) -> None:
    fetched_guild = await bot.fetch_guild(guild.id)
    assert fetched_guild.name == "Study Hall"
    member = await fetched_guild.fetch_member(admin.id)
    assert [r.name for r in member.roles if not r.is_default()] == ["Study Admin"]
    channel = await bot.fetch_channel(guild.channel("general").id)
    assert isinstance(channel, discord.TextChannel)
    with pytest.raises(discord.NotFound):
        await fetched_guild.fetch_member(424242)


async def test_injected_failure_reaches_the_client(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild
) -> None:
    channel = text_channel(bot, guild.channel("general").id)
    fake.fail_next("POST", "/channels/{id}/messages")
    with pytest.raises(discord.Forbidden, match="Missing Permissions"):
        await channel.send("nope")
    assert (await channel.send("yes")).content == "yes"


async def test_messages_past_discords_limits_are_refused_whole(
    fake: FakeDiscord, bot: StudyTestBot, guild: FakeGuild
) -> None:
    """Discord answers 50035 to an embed past 6,000 characters in all (each part within its
    own limit), a description past 4,096, or content past 2,000; the fake does the same."""
    channel = text_channel(bot, guild.channel("general").id)
    total = discord.Embed(title="t" * 256, description="d" * 4096)
    for i in range(2):
        total.add_field(name=f"f{i}", value="v" * 1024)
    for embed in (total, discord.Embed(description="d" * 4097)):
        with pytest.raises(discord.HTTPException) as err:
            await channel.send(embed=embed)
        assert err.value.code == 50035
    with pytest.raises(discord.HTTPException):
        await channel.send("c" * 2001)
    assert (await channel.send("c" * 2000, embed=discord.Embed(description="d" * 4096))).id


def test_point_discord_py_sets_both_endpoints() -> None:
    from discord.gateway import DiscordWebSocket
    from discord.http import Route

    with restore_discord_endpoints():
        point_discord_py("http://127.0.0.1:1/api/v10/", "ws://127.0.0.1:1/gateway")
        assert Route.BASE == "http://127.0.0.1:1/api/v10"
        assert Route("GET", "/users/@me").url == "http://127.0.0.1:1/api/v10/users/@me"
        assert str(DiscordWebSocket.DEFAULT_GATEWAY) == "ws://127.0.0.1:1/gateway"
    assert Route.BASE == "https://discord.com/api/v10"
    assert str(DiscordWebSocket.DEFAULT_GATEWAY) == "wss://gateway.discord.gg/"
