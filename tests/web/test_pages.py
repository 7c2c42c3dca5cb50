"""The pages over HTTP: home, schedules, reports, boards and settings, with chat's rules and
words; one workspace's admin never reaches another's; nothing members wrote runs as script."""

from __future__ import annotations

import html

import httpx
import pytest

from bot.core.errors import Forbidden
from bot.core.models import ChatContext
from bot.core.schedule_spec import ScheduleForm
from tests.web.conftest import HOSTILE, ZOE, Site, channel_id, console, sign_in

Browser = tuple[httpx.AsyncClient, str]


async def add(
    client: httpx.AsyncClient, csrf: str, ws: int, channel: int, **fields: str
) -> httpx.Response:
    """Submit the add-schedule form."""
    data = {"csrf": csrf, "channel": str(channel), "action": "add", **fields}
    return await client.post(f"/w/{ws}/schedules", data=data)


async def test_home_lists_workspaces_channels_schedules_and_next_five_times(
    site: Site, me: Browser
) -> None:
    client, csrf = me
    general = await channel_id(site, site.a, "general")
    added = await add(client, csrf, site.a, general, time="09:00", timezone="Europe/Berlin")
    assert added.status_code == 200, added.text
    assert "Schedule #1 added in #general: 09:00 Europe/Berlin daily" in added.text
    home = await client.get("/")
    assert "Console chat" in home.text
    assert "#general" in home.text and "#random" in home.text
    assert "No schedules in #random" in home.text
    # The clock starts Wed 2026-03-04 09:00 UTC (10:00 in Berlin): the next five 09:00 CET.
    for day in ("Thu 2026-03-05", "Fri 2026-03-06", "Sat 2026-03-07", "Sun 2026-03-08"):
        assert f"{day} 09:00 CET" in home.text
    assert "Mon 2026-03-09 09:00 CET" in home.text
    assert "Tue 2026-03-10" not in home.text
    assert "other" not in home.text and "#lab" not in home.text  # not this person's workspace


async def test_schedules_add_preview_pause_resume_remove_in_the_pages_words(
    site: Site, me: Browser
) -> None:
    client, csrf = me
    general = await channel_id(site, site.a, "general")
    preview = await client.post(
        f"/w/{site.a}/schedules",
        data={
            "csrf": csrf,
            "channel": str(general),
            "time": "07:30",
            "days": "weekdays",
            "action": "preview",
        },
    )
    assert preview.status_code == 200
    assert "It would post in #general at:" in preview.text
    assert "Thu 2026-03-05 07:30 UTC" in preview.text and "Mon 2026-03-09 07:30 UTC" in preview.text
    assert "No schedules in #general" in preview.text  # a preview stores nothing

    # Each field is checked on submit, in the page's words, beside the field.
    bad_zone = await add(client, csrf, site.a, general, time="09:00", timezone="Europe/Berlni")
    assert bad_zone.status_code == 400
    assert "field-error" in bad_zone.text and "Europe/Berlin" in bad_zone.text
    bad_time = await add(client, csrf, site.a, general, time="25:00")
    shown = html.unescape(bad_time.text)
    assert bad_time.status_code == 400 and "Hour 25 in '25:00' is out of range 0-23" in shown
    assert "example: /schedule add" not in shown  # the page's own form is the example
    bad_pack = await add(client, csrf, site.a, general, time="09:00", pack="minii")
    assert "No pack called &#39;minii&#39; — did you mean mini?" in bad_pack.text
    assert 'value="minii"' in bad_pack.text  # what was typed stays in the form
    nothing = await add(client, csrf, site.a, general, time="09:00", tags="no-such-tag")
    assert "No questions match" in nothing.text

    ok = await add(client, csrf, site.a, general, time="09:00", pack="mini")
    assert "Schedule #1 added in #general" in ok.text
    twin = await add(client, csrf, site.a, general, time="09:00", pack="mini")
    assert twin.status_code == 400 and "already has this schedule: #1" in twin.text

    data = {"csrf": csrf, "channel": str(general)}
    paused = await client.post(f"/w/{site.a}/schedules/1/pause", data=data)
    assert "Schedule #1 in #general paused" in paused.text
    assert "once resumed" in paused.text and "Resume #1" in paused.text
    resumed = await client.post(f"/w/{site.a}/schedules/1/resume", data=data)
    assert "Schedule #1 in #general resumed" in resumed.text
    removed = await client.post(f"/w/{site.a}/schedules/1/remove", data=data)
    assert "Schedule #1 in #general removed" in removed.text
    again = await client.post(f"/w/{site.a}/schedules/1/remove", data=data)
    assert again.status_code == 404 and "There is no schedule #1 here" in again.text
    unknown = await client.post(f"/w/{site.a}/schedules/1/explode", data=data)
    assert unknown.status_code == 404


async def test_reports_queue_and_resolve(site: Site, me: Browser) -> None:
    client, csrf = me
    ann = console(HOSTILE)
    draft = await site.services.quiz.post_question(ann, pack="mini", difficulty="medium")
    await site.services.reports.report(ann, draft.post.id, f"wrong! {HOSTILE}")
    page = await client.get(f"/w/{site.a}/reports")
    assert page.status_code == 200
    assert "d-mc-1" in page.text and f"#{draft.post.id}" in page.text
    assert "<script>" not in page.text and "<img src=x" not in page.text
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page.text
    done = await client.post(f"/w/{site.a}/reports/resolve", data={"csrf": csrf, "item": "d-mc-1"})
    assert "Resolved 1 report on `d-mc-1`" in done.text
    assert "No open reports." in done.text
    none = await client.post(f"/w/{site.a}/reports/resolve", data={"csrf": csrf, "item": "d-mc-1"})
    assert none.status_code == 404 and "There are no open reports on `d-mc-1`" in none.text


async def test_boards_week_month_all_time(site: Site, me: Browser) -> None:
    client, _ = me
    ann = console(HOSTILE)
    draft = await site.services.quiz.post_question(ann, pack="mini", difficulty="medium")
    await site.services.quiz.answer(ann, draft.post.id, "B")
    page = await client.get(f"/w/{site.a}/boards")
    assert page.status_code == 200
    for title in ("This week", "This month", "All time"):
        assert title in page.text
    assert page.text.count("&lt;script&gt;alert") == 3  # ann is on each board, as text
    assert "<script>" not in page.text


async def test_settings_with_chats_rules_and_the_history(site: Site, me: Browser) -> None:
    client, csrf = me
    page = await client.get(f"/w/{site.a}/settings")
    assert 'name="timezone" value="UTC"' in page.text
    saved = await client.post(
        f"/w/{site.a}/settings",
        data={"csrf": csrf, "timezone": "Europe/Berlin", "points-easy": "3", "quiz-window": ""},
    )
    assert saved.status_code == 200, saved.text
    assert "timezone: UTC → Europe/Berlin" in saved.text
    assert "points-easy:" in saved.text and "→ 3" in saved.text
    assert 'name="points-easy" value="3"' in saved.text
    bad = await client.post(
        f"/w/{site.a}/settings", data={"csrf": csrf, "points-hard": "lots", "quiz-window": "9d"}
    )
    assert bad.status_code == 400
    assert "takes a whole number of points (0 to" in bad.text
    assert "quiz-window" in bad.text and "must be between" in bad.text
    history = await client.get(f"/w/{site.a}/settings")
    assert history.text.count("<td>me</td>") == 2  # two changes, by the signed-in person
    assert "points-hard" not in history.text.split("Change history")[1]


async def test_an_admin_of_one_workspace_never_reaches_another(site: Site, me: Browser) -> None:
    client, csrf = me
    lab = await channel_id(site, site.b, "lab")
    zoe_ctx = ChatContext(
        platform="console",
        workspace="other",
        channel="lab",
        member="zoe",
        member_name="zoe",
        is_admin=True,
        channel_name="lab",
    )
    await site.services.schedules.add(zoe_ctx, ScheduleForm(time="06:00"))
    secret_report = console("bob", workspace="other", channel="lab")
    post = await site.services.quiz.post_question(secret_report, pack="mini", difficulty="medium")
    await site.services.reports.report(secret_report, post.post.id, "B's secret report text")

    for path in ("schedules", "reports", "boards", "settings"):
        page = await client.get(f"/w/{site.b}/{path}")
        assert page.status_code == 404, path
        assert "B&#39;s secret" not in page.text and "06:00" not in page.text
    for path, data in (
        ("schedules", {"channel": str(lab), "time": "07:00", "action": "add"}),
        ("schedules/1/remove", {"channel": str(lab)}),
        ("schedules/1/pause", {"channel": str(lab)}),
        ("reports/resolve", {"item": "d-mc-1"}),
        ("settings", {"timezone": "Asia/Tokyo"}),
    ):
        refused = await client.post(f"/w/{site.b}/{path}", data={"csrf": csrf, **data})
        assert refused.status_code == 404, path
    # Through A's address, B's schedule id and channel are refused as well.
    general = await channel_id(site, site.a, "general")
    cross = await client.post(
        f"/w/{site.a}/schedules/1/remove", data={"csrf": csrf, "channel": str(general)}
    )
    assert cross.status_code == 404 and "There is no schedule #1 here" in cross.text
    foreign = await add(client, csrf, site.a, lab, time="07:00")
    assert foreign.status_code == 400 and "Choose a channel" in foreign.text

    # Nothing of B changed, and B's own admin still sees it all.
    b = (await site.services.schedules.channel_schedules(zoe_ctx)).schedules
    assert [s.id for s in b] == [1] and not b[0].paused
    async with site.client() as zoe:
        zcsrf = await sign_in(site, zoe, ZOE, [site.b])
        assert "B&#39;s secret report text" in (await zoe.get(f"/w/{site.b}/reports")).text
        assert (await zoe.get(f"/w/{site.a}/reports")).status_code == 404
        assert zcsrf != csrf
        # A session's form token is its own: A's token does not work in B's session.
        stolen = await zoe.post(f"/w/{site.b}/settings", data={"csrf": csrf, "timezone": "UTC"})
        assert stolen.status_code == 403


async def test_hostile_names_and_text_never_run(site: Site, me: Browser) -> None:
    client, _ = me
    nasty = console(HOSTILE, channel=HOSTILE)
    await site.services.places.channel(nasty)
    draft = await site.services.quiz.post_question(nasty, pack="mini", difficulty="medium")
    await site.services.quiz.answer(nasty, draft.post.id, "B")
    await site.services.reports.report(nasty, draft.post.id, HOSTILE)
    for path in ("/", f"/w/{site.a}/schedules", f"/w/{site.a}/reports", f"/w/{site.a}/boards"):
        page = await client.get(path)
        assert page.status_code == 200
        assert "<script>" not in page.text and "onerror=alert" not in page.text.replace(
            "onerror=alert(1)&gt;", ""
        )
        assert "&lt;script&gt;" in page.text, path


async def test_the_page_acts_only_as_an_admin_of_its_own_workspaces(site: Site) -> None:
    # The services still check: a context that is no admin is refused, whatever asks.
    with pytest.raises(Forbidden):
        await site.services.reports.open_reports(console("ann"))
