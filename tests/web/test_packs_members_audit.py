"""Packs, members and the audit log over HTTP: the same services as chat, one workspace's
admin never reaches another's, and one history of changes from chat and from the page."""

from __future__ import annotations

from pathlib import Path

import httpx

from bot.core.models import ChatContext
from bot.core.schedule_spec import ScheduleForm
from tests.helpers import FRESH
from tests.web.conftest import HOSTILE, Site, channel_id, console

Browser = tuple[httpx.AsyncClient, str]

SHEET = (
    Path(__file__).resolve().parents[1] / "data" / "import" / "spreadsheet-mc.csv"
).read_bytes()
BROKEN = "pack: broken\ntitle: Broken\nitems:\n  - id: b-1\n    kind: flashcard\n    prompt: Q\n"


async def test_packs_list_toggle_per_channel_and_upload(site: Site, me: Browser) -> None:
    client, csrf = me
    page = await client.get(f"/w/{site.a}/packs")
    assert page.status_code == 200
    assert "mini" in page.text and "#general" in page.text and "#random" in page.text
    general = await channel_id(site, site.a, "general")
    off = await client.post(
        f"/w/{site.a}/packs/toggle",
        data={"csrf": csrf, "channel": str(general), "pack": "mini", "enabled": "off"},
    )
    assert off.status_code == 200 and "mini" in off.text and "off in #general" in off.text
    ctx = console("me", admin=True)
    states = {s.slug: on for s, on in await site.services.packs.states(ctx)}
    assert states["mini"] is False  # the same switch chat's `pack disable` turns
    random_ctx = console("me", channel="random", admin=True)
    assert {s.slug: on for s, on in await site.services.packs.states(random_ctx)}["mini"]

    broken = await client.post(
        f"/w/{site.a}/packs/upload",
        data={"csrf": csrf},
        files={"file": ("broken.yaml", BROKEN.encode(), "application/yaml")},
    )
    assert broken.status_code == 200
    assert "broken.yaml:4: b-1.difficulty: required field is missing" in broken.text
    assert "Not installed" in broken.text
    good = await client.post(
        f"/w/{site.a}/packs/upload",
        data={"csrf": csrf},
        files={"file": ("fresh.yaml", FRESH.encode(), "application/yaml")},
    )
    assert good.status_code == 200
    assert "fresh.yaml: pack fresh, 1 question, no problems" in good.text
    # This bot has no packs folder to install into, and says so, as chat would.
    assert "installing packs from chat is off on this bot" in good.text
    nothing = await client.post(f"/w/{site.a}/packs/upload", data={"csrf": csrf})
    assert nothing.status_code == 400 and "Choose a pack file" in nothing.text
    forged = await client.post(
        f"/w/{site.a}/packs/toggle",
        data={"channel": str(general), "pack": "mini", "enabled": "on"},
    )
    assert forged.status_code == 403  # no form token: nothing changes
    assert {s.slug: on for s, on in await site.services.packs.states(ctx)}["mini"] is False


async def test_members_boards_per_channel_and_the_stats_picture(site: Site, me: Browser) -> None:
    client, _ = me
    ann = console(HOSTILE)
    draft = await site.services.quiz.post_question(ann, pack="mini", difficulty="medium")
    await site.services.quiz.answer(ann, draft.post.id, "B")
    page = await client.get(f"/w/{site.a}/members")
    assert page.status_code == 200
    assert "All time, everywhere" in page.text and "#general" in page.text
    assert "&lt;script&gt;" in page.text and "<script>" not in page.text
    link = page.text.split('href="')[-1].split('"')[0]
    assert link.endswith("/stats.png")
    picture = await client.get(link)
    assert picture.status_code == 200 and picture.headers["content-type"] == "image/png"
    assert picture.content.startswith(b"\x89PNG") and len(picture.content) > 2000
    # Another workspace's member, or no member at all, through this workspace's address: 404.
    bob = console("bob", workspace="other", channel="lab")
    other = await site.services.quiz.post_question(bob, pack="mini", difficulty="medium")
    await site.services.quiz.answer(bob, other.post.id, "B")
    board = await site.services.standings.board(bob)
    foreign = board.rows[0].member_id
    assert (await client.get(f"/w/{site.a}/members/{foreign}/stats.png")).status_code == 404
    assert (await client.get(f"/w/{site.b}/members")).status_code == 404


async def test_the_audit_log_has_chat_and_page_changes_with_who_and_where(
    site: Site, me: Browser
) -> None:
    client, csrf = me
    general = await channel_id(site, site.a, "general")
    admin_in_chat = ChatContext(
        platform="console",
        workspace="console",
        channel="general",
        member="root",
        member_name=HOSTILE,
        is_admin=True,
        channel_name="general",
    )
    await site.services.schedules.add(admin_in_chat, ScheduleForm(time="06:00"))
    await client.post(
        f"/w/{site.a}/schedules",
        data={"csrf": csrf, "channel": str(general), "time": "09:00", "action": "add"},
    )
    await client.post(f"/w/{site.a}/settings", data={"csrf": csrf, "points-easy": "12"})
    page = await client.get(f"/w/{site.a}/audit")
    assert page.status_code == 200
    rows = page.text.split("<tr>")[2:]  # newest first, after the header row
    assert len(rows) == 3
    assert "setting change" in rows[0] and "points-easy" in rows[0] and ">web<" in rows[0]
    assert "schedule add" in rows[1] and "Schedule #2 added" in rows[1] and ">me<" in rows[1]
    assert "✅" not in rows[1]  # the reply's pictograph is not kept: the log is read as text
    assert "schedule add" in rows[2] and ">chat<" in rows[2] and "&lt;script&gt;" in rows[2]
    assert "<script>" not in page.text
    # Workspace B's log is B's alone.
    zoe = ChatContext("console", "other", "lab", "zoe", "zoe", is_admin=True, channel_name="lab")
    await site.services.schedules.add(zoe, ScheduleForm(time="05:00"))
    assert "05:00" not in (await client.get(f"/w/{site.a}/audit")).text
    assert (await client.get(f"/w/{site.b}/audit")).status_code == 404


async def test_community_questions_edited_and_retired_from_the_page(
    db: object, clock: object, tmp_path: object
) -> None:
    import random
    from pathlib import Path

    from bot.app import build_services
    from bot.questions.written import WrittenQuestion
    from bot.services.web_access import Person
    from bot.web.app import create_app
    from bot.web.sessions import SignInLimiter
    from tests.web.conftest import SECRET, sign_in

    assert isinstance(tmp_path, Path)
    packs = tmp_path / "packs"
    packs.mkdir()
    services = build_services(
        db,
        clock,
        default_timezone="UTC",
        rng=random.Random(2),
        packs_dir=packs,  # type: ignore[arg-type]
    ).services
    root = console("me", admin=True)
    for prompt in ("What does detach() return?", "Is 2 + 2 four?"):
        written = WrittenQuestion(prompt=prompt, choices="*A new tensor\nThe same tensor")
        await services.packs.write_question(root, written)
    assert [i.id for i in (await services.packs.community(root))] == ["community-1", "community-2"]
    ws = (await services.places.channel(root))[0].id
    app = create_app(services, secret=SECRET, limiter=SignInLimiter(limit=10, per=600))
    site = Site(services, httpx.ASGITransport(app=app), ws, ws)
    async with site.client() as client:
        csrf = await sign_in(site, client, Person("console", "me", "me"), [ws])
        listed = await client.get(f"/w/{ws}/packs")
        assert "community-1" in listed.text and "Retire community-2" in listed.text
        form = await client.get(f"/w/{ws}/packs/community/community-1")
        assert "What does detach() return?" in form.text and "*A new tensor" in form.text
        saved = await client.post(
            f"/w/{ws}/packs/community/community-1",
            data={
                "csrf": csrf,
                "prompt": "What does tensor.detach() return?",
                "choices": "*A tensor cut from the graph\nA copy that still tracks gradients",
                "difficulty": "easy",
            },
        )
        assert saved.status_code == 200, saved.text
        edited = next(i for i in (await services.packs.community(root)) if i.id == "community-1")
        assert edited.prompt == "What does tensor.detach() return?"
        bad = await client.post(
            f"/w/{ws}/packs/community/community-1",
            data={"csrf": csrf, "prompt": "No choices", "difficulty": "easy"},
        )
        assert bad.status_code == 400 and "choices" in bad.text
        assert next(
            i for i in (await services.packs.community(root)) if i.id == "community-1"
        ).prompt == ("What does tensor.detach() return?")  # nothing changed

        member = console("ann")
        draft = await services.quiz.post_question(member, pack="community")
        await services.reports.report(member, draft.post.id, "unclear")
        reports = await client.get(f"/w/{ws}/reports")
        reported = draft.post.question_id
        assert f"Retire {reported}" in reports.text
        retired = await client.post(
            f"/w/{ws}/packs/retire", data={"csrf": csrf, "item": reported, "resolve": "yes"}
        )
        assert retired.status_code == 200
        assert [i.id for i in (await services.packs.community(root))] == [
            i for i in ("community-1", "community-2") if i != reported
        ]
        assert "No open reports." in (await client.get(f"/w/{ws}/reports")).text
        last = (await services.packs.community(root))[0].id
        refused = await client.post(f"/w/{ws}/packs/retire", data={"csrf": csrf, "item": last})
        assert refused.status_code == 400 and "last question cannot be retired" in refused.text
        log = (await client.get(f"/w/{ws}/audit")).text
        assert "question retire" in log and "question edit" in log and "question add" in log


async def test_another_workspaces_admin_cannot_see_edit_or_retire_its_community_questions(
    db: object, clock: object, tmp_path: object
) -> None:
    import random
    from pathlib import Path

    from bot.app import build_services
    from bot.questions.written import WrittenQuestion
    from bot.services.web_access import Person
    from bot.web.app import create_app
    from bot.web.sessions import SignInLimiter
    from tests.web.conftest import SECRET, sign_in

    assert isinstance(tmp_path, Path)
    packs = tmp_path / "packs"
    packs.mkdir()
    services = build_services(
        db,
        clock,
        default_timezone="UTC",
        rng=random.Random(2),
        packs_dir=packs,  # type: ignore[arg-type]
    ).services
    root = console("me", admin=True)
    zoe = console("zoe", workspace="other", admin=True)
    for who, prompt in ((root, "What does detach() return?"), (zoe, "Is 2 + 2 four?")):
        written = WrittenQuestion(prompt=prompt, choices="*A new tensor\nThe same tensor")
        await services.packs.write_question(who, written)
    assert [i.id for i in await services.packs.community(root)] == ["community-1"]
    assert [i.id for i in await services.packs.community(zoe)] == ["community-2"]
    mine = (await services.places.channel(root))[0].id
    theirs = (await services.places.channel(zoe))[0].id
    app = create_app(services, secret=SECRET, limiter=SignInLimiter(limit=10, per=600))
    site = Site(services, httpx.ASGITransport(app=app), theirs, mine)
    async with site.client() as client:
        csrf = await sign_in(site, client, Person("console", "zoe", "zoe"), [theirs])
        listed = await client.get(f"/w/{theirs}/packs")
        assert "community-2" in listed.text and "community-1" not in listed.text
        form = await client.get(f"/w/{theirs}/packs/community/community-1")
        assert form.status_code == 404
        edit = await client.post(
            f"/w/{theirs}/packs/community/community-1",
            data={"csrf": csrf, "prompt": "Hijacked?", "choices": "*Yes\nNo"},
        )
        assert edit.status_code == 404
        retire = await client.post(
            f"/w/{theirs}/packs/retire", data={"csrf": csrf, "item": "community-1"}
        )
        assert retire.status_code == 400
        assert "written in another workspace" in retire.text
    # Nothing changed in the file: the question is still root's, as written.
    kept = await services.packs.community(root)
    assert [(i.id, i.prompt) for i in kept] == [("community-1", "What does detach() return?")]


async def test_a_schedule_is_edited_with_adds_rules_and_keeps_its_number(
    site: Site, me: Browser
) -> None:
    client, csrf = me
    general = await channel_id(site, site.a, "general")
    await client.post(
        f"/w/{site.a}/schedules",
        data={"csrf": csrf, "channel": str(general), "time": "09:00", "action": "add"},
    )
    listed = await client.get(f"/w/{site.a}/schedules")
    assert f"/w/{site.a}/schedules/1/edit?channel={general}" in listed.text
    form = await client.get(f"/w/{site.a}/schedules/1/edit?channel={general}")
    assert form.status_code == 200 and 'value="09:00"' in form.text and 'value="UTC"' in form.text
    data = {"csrf": csrf, "channel": str(general), "time": "07:45", "days": "weekdays"}
    bad = await client.post(f"/w/{site.a}/schedules/1/edit", data={**data, "time": "7.45"})
    assert (
        bad.status_code == 400 and 'class="error"' in bad.text and "/schedule add" not in bad.text
    )
    saved = await client.post(f"/w/{site.a}/schedules/1/edit", data=data)
    assert saved.status_code == 200
    assert "Schedule #1 in #general is now 07:45 UTC on weekdays" in saved.text
    ctx = console("me", admin=True)
    [entry] = (await site.services.schedules.channel_schedules(ctx)).schedules
    assert entry.id == 1 and entry.schedule is not None
    assert entry.schedule.spec.describe().startswith("07:45 UTC on weekdays")
    assert "schedule edit" in (await client.get(f"/w/{site.a}/audit")).text


async def test_the_new_pages_never_reach_another_workspace(site: Site, me: Browser) -> None:
    client, csrf = me
    lab = await channel_id(site, site.b, "lab")
    zoe = ChatContext("console", "other", "lab", "zoe", "zoe", is_admin=True, channel_name="lab")
    await site.services.schedules.add(zoe, ScheduleForm(time="06:00"))
    for path in ("packs", "members", "audit", f"schedules/1/edit?channel={lab}"):
        assert (await client.get(f"/w/{site.b}/{path}")).status_code == 404, path
    for path, data in (
        ("packs/toggle", {"channel": str(lab), "pack": "mini", "enabled": "off"}),
        ("packs/retire", {"item": "community-1"}),
        ("schedules/1/edit", {"channel": str(lab), "time": "07:00"}),
    ):
        refused = await client.post(f"/w/{site.b}/{path}", data={"csrf": csrf, **data})
        assert refused.status_code == 404, path
    # Through A's address, B's schedule and channel are refused too.
    cross = await client.get(f"/w/{site.a}/schedules/1/edit?channel={lab}")
    assert cross.status_code == 404
    [still] = (await site.services.schedules.channel_schedules(zoe)).schedules
    assert still.schedule is not None and still.schedule.spec.describe().startswith("06:00")


async def test_a_schedule_with_a_mention_from_the_page(site: Site, me: Browser) -> None:
    client, csrf = me
    general = await channel_id(site, site.a, "general")
    data = {"csrf": csrf, "channel": str(general), "time": "09:00", "action": "add"}
    everyone = await client.post(f"/w/{site.a}/schedules", data={**data, "mention": "@everyone"})
    assert everyone.status_code == 400 and "pings everyone" in everyone.text
    added = await client.post(f"/w/{site.a}/schedules", data={**data, "mention": "@study-group"})
    assert "Schedule #1 added" in added.text
    [entry] = (await site.services.schedules.channel_schedules(console("me"))).schedules
    assert entry.schedule is not None and entry.schedule.spec.mention == "@study-group"
    form = await client.get(f"/w/{site.a}/schedules/1/edit?channel={general}")
    assert 'value="@study-group"' in form.text


async def test_a_csv_upload_becomes_a_pack_with_its_bad_rows_at_file_line(
    site: Site, me: Browser
) -> None:
    client, csrf = me
    sent = await client.post(
        f"/w/{site.a}/packs/upload",
        data={"csrf": csrf},
        files={"file": ("spreadsheet-mc.csv", SHEET, "text/csv")},
    )
    assert sent.status_code == 200
    # The row whose answer is `Z` could not become a question, and says so at its line; the
    # rest became a pack checked like a YAML upload.
    assert "spreadsheet-mc.csv:5:" in sent.text
    assert "spreadsheet-mc.yaml: pack spreadsheet-mc" in sent.text
    empty = await client.post(
        f"/w/{site.a}/packs/upload",
        data={"csrf": csrf},
        files={"file": ("empty.csv", b"", "text/csv")},
    )
    assert empty.status_code == 400 and "no question could be made of it" in empty.text
