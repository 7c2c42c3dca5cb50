"""``/schedule``: the form becomes the core's grammar; the core decides who may change what."""

from __future__ import annotations

from typing import Any

import discord
import pytest

from bot.adapters.discord.render import mention_target, render
from bot.adapters.text_commands import parse_schedule_args
from bot.core.messages import Message
from bot.core.schedule_spec import ScheduleForm
from tests.adapters.discord.conftest import Studybot, embed_text
from tests.fakes.discord_api import FakeDiscord, FakeGuild, FakeMember

pytestmark = pytest.mark.timeout(60)

VERBS = ["add", "list", "now", "pause", "preview", "remove", "resume", "skip"]


async def _schedule(
    studybot: Studybot, member: FakeMember, verb: str, options: dict[str, Any] | None = None
) -> Any:
    ix = await studybot.fake.slash_command(
        studybot.guild, "questions", member, "schedule", options or {}, subcommand=verb
    )
    return await ix.response()


async def _stored_schedules(studybot: Studybot) -> int:
    row = await studybot.runtime.db.fetchone(
        "SELECT count(*) FROM schedules WHERE deleted_at IS NULL"
    )
    assert row is not None
    return int(row[0])


async def test_schedule_group_is_synced_with_every_verb_and_its_options(
    fake: FakeDiscord, studybot: Studybot
) -> None:
    [put] = fake.calls_to("PUT", "/applications/{app}/commands")
    [group] = [c for c in put.json if c["name"] == "schedule"]
    assert "default_member_permissions" not in group or group["default_member_permissions"] is None
    verbs = {o["name"]: o for o in group["options"]}
    assert sorted(verbs) == VERBS
    assert all(v["type"] == 1 for v in verbs.values())
    add = {o["name"]: o for o in verbs["add"]["options"]}
    assert list(add) == [
        "time",
        "timezone",
        "days",
        "pack",
        "tags",
        "difficulty",
        "window",
        "mention",
        "cron",
        "kinds",
        "round",
    ]
    assert not any(o["required"] for o in add.values())
    assert add["timezone"]["autocomplete"] and add["pack"]["autocomplete"]
    assert add["mention"]["type"] == 8  # ROLE: Discord's role picker
    [schedule_id] = verbs["remove"]["options"]
    assert (schedule_id["name"], schedule_id["type"], schedule_id["required"]) == ("id", 4, True)
    assert schedule_id["min_value"] == 1
    preview = {o["name"]: o for o in verbs["preview"]["options"]}
    assert (preview["count"]["min_value"], preview["count"]["max_value"]) == (1, 25)
    assert verbs["list"].get("options") in (None, [])


async def test_a_member_without_admin_rights_is_refused(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember
) -> None:
    response = await _schedule(studybot, alice, "add", {"time": "09:00"})
    assert response.ephemeral
    assert response.content.startswith("Only admins can change schedules")
    assert await _stored_schedules(studybot) == 0
    for verb in ("remove", "pause", "resume", "skip", "now"):
        refused = await _schedule(studybot, alice, verb, {"id": 1})
        assert refused.ephemeral
        assert refused.content.startswith("Only admins"), verb


@pytest.mark.parametrize("who", ["admin", "quizmaster"])
async def test_manage_server_or_the_admin_role_may_add(
    fake: FakeDiscord, studybot: Studybot, who: str, request: pytest.FixtureRequest
) -> None:
    member: FakeMember = request.getfixturevalue(who)
    options = {"time": "09:00", "timezone": "Europe/Berlin", "days": "mon wed fri", "pack": "mini"}
    response = await _schedule(studybot, member, "add", options)
    assert response.ephemeral
    text = embed_text(response.data)
    assert "Schedule **#1** added" in text, text
    assert "Europe/Berlin" in text
    assert await _stored_schedules(studybot) == 1


async def test_everyone_may_list_and_preview(
    fake: FakeDiscord, studybot: Studybot, admin: FakeMember, alice: FakeMember
) -> None:
    await _schedule(studybot, admin, "add", {"time": "09:00", "days": "weekdays"})
    listed = await _schedule(studybot, alice, "list")
    assert listed.ephemeral
    assert "**#1**" in embed_text(listed.data)
    preview = await _schedule(studybot, alice, "preview", {"id": 1, "count": 3})
    assert preview.ephemeral
    assert embed_text(preview.data).count("• ") == 3


async def test_bad_input_is_answered_with_the_cores_words(
    fake: FakeDiscord, studybot: Studybot, admin: FakeMember
) -> None:
    response = await _schedule(studybot, admin, "add", {"time": "25:99"})
    assert response.ephemeral
    assert "time" in response.content
    missing = await _schedule(studybot, admin, "pause", {"id": 42})
    assert missing.ephemeral
    assert "42" in missing.content


async def test_pause_resume_skip_remove(
    fake: FakeDiscord, studybot: Studybot, admin: FakeMember
) -> None:
    await _schedule(studybot, admin, "add", {"time": "09:00"})
    for verb, expected in (
        ("pause", "paused"),
        ("resume", "resumed"),
        ("skip", "skips"),
        ("remove", "removed"),
    ):
        response = await _schedule(studybot, admin, verb, {"id": 1})
        assert response.ephemeral
        assert expected in embed_text(response.data), (verb, embed_text(response.data))
    assert await _stored_schedules(studybot) == 0


async def test_now_posts_publicly_and_pings_only_the_chosen_role(
    fake: FakeDiscord, guild: FakeGuild, studybot: Studybot, admin: FakeMember, alice: FakeMember
) -> None:
    role = fake.add_role(guild, "study-group")
    # Created after the bot connected (not in its cache): the picker's <@&id> still pings.
    added = await _schedule(
        studybot, admin, "add", {"time": "09:00", "difficulty": "medium", "mention": role}
    )
    assert "added" in embed_text(added.data)

    response = await _schedule(studybot, admin, "now", {"id": 1})
    assert response.ephemeral
    assert "Posting a question from schedule **#1** in #" in embed_text(response.data)

    channel = guild.channel("questions")
    call = await fake.wait_for_call("POST", f"/channels/{channel.id}/messages")
    assert call.json["content"] == f"<@&{role.id}>"
    assert call.json["allowed_mentions"] == {"parse": [], "roles": [role.id]}  # ints, as sent
    posted = fake.message(int(call.response["id"]))
    assert posted.payload["mention_roles"] == [str(role.id)]
    assert not posted.payload["mention_everyone"]
    assert "When is the autograd graph built?" in embed_text(posted)
    reply = await (await fake.click(posted, alice, label="B")).response()
    assert reply.ephemeral


async def test_everyone_is_not_a_role_to_notify(
    fake: FakeDiscord, guild: FakeGuild, studybot: Studybot, admin: FakeMember
) -> None:
    response = await _schedule(studybot, admin, "add", {"time": "09:00", "mention": guild.everyone})
    assert response.ephemeral
    assert "@everyone" in response.content
    assert await _stored_schedules(studybot) == 0


async def test_timezone_autocomplete(
    fake: FakeDiscord, guild: FakeGuild, studybot: Studybot, admin: FakeMember
) -> None:
    ix = await fake.autocomplete(
        guild,
        "questions",
        admin,
        "schedule",
        {"time": "09:00", "timezone": "berl"},
        focused="timezone",
        subcommand="add",
    )
    response = await ix.response()
    assert [c["value"] for c in response.choices] == ["Europe/Berlin"]
    first = await fake.autocomplete(
        guild,
        "questions",
        admin,
        "schedule",
        {"timezone": ""},
        focused="timezone",
        subcommand="add",
    )
    choices = (await first.response()).choices
    assert len(choices) == 25
    assert choices[0]["value"] == "UTC"  # the configured default comes first
    europe = await fake.autocomplete(
        guild,
        "questions",
        admin,
        "schedule",
        {"timezone": "europe/"},
        focused="timezone",
        subcommand="add",
    )
    assert all(c["value"].startswith("Europe/") for c in (await europe.response()).choices)


def test_the_discord_form_and_the_text_grammar_give_the_same_schedule() -> None:
    form = ScheduleForm.from_fields(
        {
            "time": "09:00",
            "timezone": "Europe/Berlin",
            "days": "mon wed, fri",
            "pack": "mini",
            "difficulty": "easy",
            "tags": "autograd, leaf",
            "window": "90m",
            "mention": "<@&5>",
            "cron": None,
        }
    )
    typed = parse_schedule_args(
        [
            "09:00",
            "Europe/Berlin",
            "mon,wed,fri",
            "--pack",
            "mini",
            "--difficulty",
            "easy",
            "--window",
            "90m",
            "--mention",
            "<@&5>",
            "--tag",
            "autograd",
            "--tag",
            "leaf",
        ],
        "UTC",
    )
    assert form.spec("UTC") == typed
    cron = ScheduleForm.from_fields({"time": " ", "days": "", "cron": "0 9 * * 1-5"})
    assert cron.spec("Asia/Tokyo") == parse_schedule_args(["--cron", "0 9 * * 1-5"], "Asia/Tokyo")


def test_mention_target_resolves_roles_only() -> None:
    roles = [(1, "@everyone"), (5, "Study Group")]
    text, allowed = mention_target("<@&5>", roles, everyone_id=1) or ("", None)
    assert text == "<@&5>"
    assert allowed is not None
    assert allowed.to_dict() == {"parse": [], "roles": [5], "replied_user": True}
    assert (mention_target("@study group", roles, everyone_id=1) or ("",))[0] == "<@&5>"
    assert (mention_target("5", roles, everyone_id=1) or ("",))[0] == "<@&5>"
    assert (mention_target("<@&9>", roles) or ("",))[0] == "<@&9>"  # not cached: trusted
    assert mention_target("<@!7>", roles) is None  # a schedule never pings a person
    assert mention_target("<@&1>", roles, everyone_id=1) is None
    assert mention_target("@everyone", roles, everyone_id=1) is None
    assert mention_target("@nobody", roles) is None
    assert mention_target("9", roles) is None


def test_an_unresolved_mention_is_shown_but_pings_nobody() -> None:
    rendered = render(Message(title="Q", mention="@study-group"))
    assert rendered.content == "@study-group"
    assert rendered.send_kwargs()["allowed_mentions"].to_dict() == {"parse": []}
    assert isinstance(rendered.embed, discord.Embed)
