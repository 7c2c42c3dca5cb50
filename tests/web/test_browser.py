"""The admin page in a real browser: Debian's chromium driven by Playwright (never a browser
that Playwright downloads), against `studybot web` started as an operator starts it.

Sign in by the printed link, add a schedule and see its next times, resolve a report, see the
boards; a screenshot of each page is saved under the test's tmp dir and checked non-blank.
Without chromium the test skips locally and fails under CI (`.ci/run` installs it).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.app import build_services
from bot.core.clock import SystemClock
from bot.questions.loader import load_packs
from bot.storage.database import open_database
from tests.conftest import TEST_PACKS
from tests.web.conftest import HOSTILE, console

ROOT = Path(__file__).resolve().parents[2]


def chromium() -> str:
    """The system chromium, or a clear skip (locally) / failure (CI)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        import playwright  # noqa: F401
    except ImportError:
        found = None
    if found is None:
        reason = "needs Debian's chromium and the playwright package (apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def follow(page: Any, selector: str) -> None:
    """Click a link or a submit button and wait for the page it leads to.

    Reading the page straight after a bare click races the navigation: it can read the page
    being left (and pass on the wrong page) or a document that is not there yet.
    """
    with page.expect_navigation(wait_until="load"):
        page.click(selector)


async def _prepare(db_path: Path) -> None:
    """A member's report and answer in the console workspace, as chat would leave them."""
    db = await open_database(db_path)
    try:
        services = build_services(db, SystemClock()).services
        await services.packs.sync(load_packs(TEST_PACKS).packs)
        ann = console(HOSTILE)
        draft = await services.quiz.post_question(ann, pack="mini", difficulty="medium")
        await services.quiz.answer(ann, draft.post.id, "B")
        await services.reports.report(ann, draft.post.id, f"the answer is wrong {HOSTILE}")
        # Channels with long names: the packs page gets a switch column for each.
        for channel in ("random", "lab-questions-for-week-3"):
            await services.quiz.post_question(console("bob", channel=channel), pack="mini")
        # A class answers d-mc-2 (file order: A is right): most get it, a few pick B, so the
        # Questions tab has a breakdown to chart.
        post = await services.quiz.post_question(console("me", admin=True), question="d-mc-2")
        for n in range(8):
            await services.quiz.answer(console(f"student{n}"), post.post.id, "A" if n < 6 else "B")
        # An exam on their tag in three weeks: the mastery page shows the group's readiness.
        from datetime import date, timedelta

        from bot.core.requests import ExamSet

        day = (date.today() + timedelta(days=21)).isoformat()
        await services.exams.command(console("me", admin=True), ExamSet(day, ("leaf",)))
    finally:
        await db.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """`studybot web` on a free loopback port; yields the sign-in link it printed."""
    db_path = tmp_path / "studybot.sqlite3"
    asyncio.run(_prepare(db_path))
    packs = tmp_path / "packs"  # a copy: the page installs uploads into it
    shutil.copytree(TEST_PACKS, packs)
    env = {**os.environ, "STUDYBOT_PACKS": str(packs), "PYTHONPATH": str(ROOT)}
    env.pop("DATABASE_URL", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "web", "--db", str(db_path), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        assert proc.stdout is not None
        link = None
        for _ in range(5):
            line = proc.stdout.readline()
            if match := re.search(r"(http://127\.0\.0\.1:\d+/signin\?token=\S+)", line):
                link = match[1]
                break
        assert link, proc.stderr.read() if proc.stderr else "no link printed"
        yield link
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def non_blank(path: Path) -> None:
    from PIL import Image

    with Image.open(path) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000)
    assert colours is not None and len(colours) > 20, f"{path} looks blank"


def test_an_admin_signs_in_adds_a_schedule_resolves_a_report_sees_the_board(
    server: str, tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    executable = chromium()
    # STUDYBOT_SCREENSHOTS keeps them (the README's pictures are taken this way).
    shots = Path(os.environ.get("STUDYBOT_SCREENSHOTS") or tmp_path / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=executable, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page(viewport={"width": 412, "height": 915})  # a phone
            alerts: list[str] = []
            page.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
            page.goto(server)
            page.screenshot(path=shots / "signin.png", full_page=True)
            follow(page, "#sign-in")
            page.wait_for_url(re.compile(r"/$"))
            assert page.locator("h1").inner_text() == "Your workspaces"
            assert "#general" in page.content()
            page.screenshot(path=shots / "home.png", full_page=True)

            follow(page, "text=Schedules")
            page.fill("input[name=time]", "08:15")
            page.fill("input[name=timezone]", "Europe/Berlin")
            page.fill("input[name=days]", "weekdays")
            follow(page, "#add-schedule")
            notice = page.locator(".notice").inner_text()
            assert "Schedule #1 added in #general: 08:15 Europe/Berlin on weekdays" in notice
            times = page.locator("#schedule-1 ol.times li").all_inner_texts()
            assert len(times) == 5
            assert all(re.search(r"08:15 CES?T", t) for t in times), times
            page.screenshot(path=shots / "schedules.png", full_page=True)

            follow(page, "text=Reports")
            assert "the answer is wrong <script>" in page.locator(".reason").inner_text()
            page.screenshot(path=shots / "reports.png", full_page=True)
            follow(page, "text=Resolve reports on d-mc-1")
            assert "Resolved 1 report on `d-mc-1`" in page.locator(".notice").inner_text()
            assert "No open reports." in page.content()

            follow(page, "text=Packs")
            broken = tmp_path / "broken.yaml"
            broken.write_text("pack: broken\ntitle: Broken\nitems:\n  - id: b-1\n    kind: x\n")
            page.set_input_files("input[name=file]", broken)
            follow(page, "text=Check and install")
            report = page.locator("pre.report").inner_text()
            assert "broken.yaml:4" in report and "Not installed" in report
            page.screenshot(path=shots / "packs-broken.png", full_page=True)
            good = tmp_path / "fresh.yaml"
            good.write_text((ROOT / "tests" / "data" / "uploads" / "fresh.yaml").read_text())
            page.set_input_files("input[name=file]", good)
            follow(page, "text=Check and install")
            assert (
                "fresh.yaml: pack fresh, 1 question, no problems"
                in page.locator("pre.report").inner_text()
            )
            assert "fresh" in page.locator("table").inner_text()  # installed and listed
            page.screenshot(path=shots / "packs.png", full_page=True)

            follow(page, "text=Boards")
            week = page.locator("#board-week table").inner_text()
            assert HOSTILE in week  # the member's name, shown as text
            page.screenshot(path=shots / "boards.png", full_page=True)

            follow(page, "text=Members")
            assert HOSTILE in page.locator("table").first.inner_text()
            page.screenshot(path=shots / "members.png", full_page=True)

            follow(page, "text=Questions")
            assert "d-mc-2" in page.locator("table.questions").inner_text()
            page.screenshot(path=shots / "questions.png", full_page=True)
            follow(page, "table.questions >> text=d-mc-2")
            chart = page.locator("table.choices").inner_text()
            assert "One you created yourself key\n6" in chart and "grad\n2" in chart
            assert "key" in chart
            # Each bar is as long as its count (6 against 2), not the full track: the page's
            # CSP refuses inline styles, so a width set in a style attribute was ignored.
            widths = [
                b["width"]
                for b in page.eval_on_selector_all(
                    "svg.meter rect", "rs => rs.map(r => r.getBoundingClientRect())"
                )
            ]
            assert len(widths) == 3 and widths[0] > 2.5 * widths[1] > 0, widths
            page.screenshot(path=shots / "question.png", full_page=True)
            page.fill("textarea#reason", "Choice B is also right since torch 2.1")
            follow(page, "form.report-form button")
            assert "Opened a report on `d-mc-2`" in page.locator("p.notice").inner_text()
            assert "also right since torch 2.1" in page.locator("ul.reports").inner_text()
            follow(page, "text=← All questions")
            follow(page, "text=Group mastery")
            picture = page.locator("img.mastery")
            picture.wait_for()
            assert page.evaluate("document.querySelector('img.mastery').naturalWidth") > 500
            assert "leaf" in (picture.get_attribute("alt") or "")
            readiness = page.locator("table.readiness").inner_text()
            assert "leaf" in readiness and "%" in readiness
            page.screenshot(path=shots / "mastery.png", full_page=True)

            follow(page, "text=Settings")
            page.screenshot(path=shots / "settings.png", full_page=True)
            follow(page, "text=Audit log")
            log = page.locator("table").inner_text()
            assert "pack upload" in log and "reports resolve" in log and "schedule add" in log
            page.screenshot(path=shots / "audit.png", full_page=True)
            follow(page, "text=Sign out")
            assert "Signed out" in page.content()
            page.goto(server.split("/signin", maxsplit=1)[0] + "/")
            assert "Not signed in" in page.content()
            assert alerts == []  # nothing members wrote ran as script
        finally:
            browser.close()
    for shot in sorted(shots.iterdir()):
        non_blank(shot)
    print(f"screenshots: {shots}")


PAGES = (
    "Schedules", "Reports", "Questions", "Packs", "Boards", "Members", "Settings", "Audit log",
)  # fmt: skip
_OFF_SCREEN = """() => [...document.querySelectorAll('button, input, select, textarea, a')]
    .filter(e => { const r = e.getBoundingClientRect();
                   return r.width > 0 && (r.left < -1 || r.right > window.innerWidth + 1); })
    .map(e => e.outerHTML.slice(0, 100))"""


@pytest.mark.parametrize("width", [360, 1280])
def test_every_page_keeps_every_control_on_screen_on_a_phone_and_a_laptop(
    server: str, tmp_path: Path, width: int
) -> None:
    from playwright.sync_api import sync_playwright

    executable = chromium()
    shots = Path(os.environ.get("STUDYBOT_SCREENSHOTS") or tmp_path / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=executable, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page(viewport={"width": width, "height": 800})
            page.goto(server)
            follow(page, "#sign-in")
            page.wait_for_url(re.compile(r"/$"))
            home = page.url
            for name in PAGES:
                page.goto(home)
                follow(page, f"main >> text={name}")  # the home page links every page
                assert page.url != home, name
                assert page.evaluate(_OFF_SCREEN) == [], name
                wide = page.evaluate("document.documentElement.scrollWidth")
                assert wide <= width, f"{name} is {wide} px wide in a {width} px window"
                page.screenshot(
                    path=shots / f"{width}-{name.split()[0].lower()}.png", full_page=True
                )
            page.goto(home)
            follow(page, "main >> text=Packs")
            switches = page.locator("form.switch button")
            assert switches.count() == 3 and switches.first.inner_text() == "Turn off"
            with page.expect_navigation(wait_until="load"):
                switches.first.click()
            assert "is off in #general" in page.locator(".notice").inner_text()
            assert page.locator("form.switch button").first.inner_text() == "Turn on"
        finally:
            browser.close()
    for shot in sorted(shots.glob(f"{width}-*.png")):
        non_blank(shot)
