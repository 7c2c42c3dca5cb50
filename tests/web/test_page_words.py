"""The admin page speaks web, not chat (issue 41): buttons say what they do, errors and
notices name the page's fields and buttons instead of chat's commands, stored values read as
chat shows them, and the home page reaches every page."""

from __future__ import annotations

import re

from bot.core.requests import SettingChange
from bot.core.schedule_spec import ScheduleForm
from bot.core.workspace_settings import Setting
from tests.web.conftest import Site, console
from tests.web.test_packs_members_audit import Browser, channel_id


async def test_a_pack_switch_says_its_action_and_its_notice_no_chat_command(
    site: Site, me: Browser
) -> None:
    client, csrf = me
    page = (await client.get(f"/w/{site.a}/packs")).text
    assert re.search(r'<span class="state on">on</span>\s*<button[^>]*>Turn off</button>', page)
    general = await channel_id(site, site.a, "general")
    off = await client.post(
        f"/w/{site.a}/packs/toggle",
        data={"csrf": csrf, "channel": str(general), "pack": "mini", "enabled": "off"},
    )
    notice = re.search(r'<p class="notice"[^>]*>(.*?)</p>', off.text, re.S)
    assert notice is not None
    assert "mini is off in #general: quizzes and schedules here will not pick" in notice[1]
    assert "/pack" not in notice[1] and "`" not in notice[1]
    assert re.search(
        r'<span class="state off">off</span>\s*<button[^>]*>Turn on</button>', off.text
    )


async def test_settings_lists_every_workspace_setting_and_its_history_reads_as_chat(
    site: Site, me: Browser
) -> None:
    client, _ = me
    ctx = console("me", admin=True)
    await site.services.settings.command(ctx, SettingChange(Setting.QUIZ_WINDOW, "45m"))
    page = (await client.get(f"/w/{site.a}/settings")).text
    names = re.findall(r'<input name="([a-z-]+)"', page)
    assert names == [s.value for s in Setting if s is not Setting.SHARE_SOLUTIONS]
    history = page[page.index("Change history") :]
    assert "45m" in history and "2700" not in history


async def test_the_schedule_form_shows_the_window_as_it_is_listed(site: Site, me: Browser) -> None:
    client, _ = me
    ctx = console("me", admin=True)
    await site.services.schedules.add(ctx, ScheduleForm(time="09:00", window="2h"))
    general = await channel_id(site, site.a, "general")
    listed = (await client.get(f"/w/{site.a}/schedules")).text
    assert "2h" in listed
    form = (await client.get(f"/w/{site.a}/schedules/1/edit?channel={general}")).text
    assert 'name="window" value="2h"' in form and "120m" not in form


async def test_the_audit_log_shows_code_as_code_and_cuts_at_a_word(site: Site, me: Browser) -> None:
    client, _ = me
    ctx = console("me", admin=True)
    await site.services.packs.set_enabled(ctx, "mini", False)
    assert site.services.audit is not None
    await site.services.audit.record(ctx, "note", "word " * 100)
    page = (await client.get(f"/w/{site.a}/audit")).text
    assert "<code>/pack enable mini</code>" in page and "`/pack" not in page
    cut = re.search(r'<div class="reason">(word[^<]*)</div>', page)
    assert cut is not None and cut[1].endswith("word…") and len(cut[1]) <= 300


async def test_home_names_the_workspace_and_links_all_seven_pages(site: Site, me: Browser) -> None:
    client, _ = me
    home = (await client.get("/")).text
    assert "Console chat" in home and "console: console" not in home
    for page in ("schedules", "reports", "packs", "boards", "members", "settings", "audit"):
        assert f'href="/w/{site.a}/{page}"' in home
