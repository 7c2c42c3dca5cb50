"""Item analysis finds the broken questions a group's answers point at.

A group of 30 answers eight questions through the quiz, as members do. Strong members get the
six ordinary questions right and weak ones mostly wrong; on ``ia-broken`` the strong members
all pick "Bravo" while the weak ones pick the key, as happens when a key is wrong; and
everybody gets ``ia-easy`` right. Both must be flagged, with evidence an admin can act on, and
the ordinary ones must not be; the flags are held until an admin ends them.
"""

from __future__ import annotations

import csv
import io
import random
import shutil
from datetime import timedelta
from pathlib import Path

import pytest

from bot.app import build_services
from bot.core.clock import SimulatedClock
from bot.core.errors import Forbidden, NotFound
from bot.core.item_analysis import Rule
from bot.core.requests import SettingChange
from bot.core.workspace_settings import Setting
from bot.questions.loader import load_packs
from bot.services.bundle import Services
from bot.services.item_analysis import GRADEBOOK_HEADER, Period
from bot.storage.database import Database
from tests.conftest import TEST_PACKS
from tests.helpers import member

ADMIN = member("root", admin=True)
STRONG = [member(f"strong{i}") for i in range(15)]
WEAK = [member(f"weak{i}") for i in range(15)]

CHOICES = ("Alpha", "Bravo", "Charlie", "Delta")


def _mc(item_id: str, checks: str = "") -> str:
    return f"""\
  - id: {item_id}
    kind: multiple_choice
    difficulty: medium
    tags: [analysis]
    prompt: Which is it ({item_id})?
    choices:
      - text: Alpha
        correct: true
      - text: Bravo
      - text: Charlie
      - text: Delta
{checks}"""


BACKED = """\
    checks:
      - backs: choice 1
        code: print(1)
        expect_stdout: "1"
"""

PACK = (
    "pack: analysis\ntitle: Analysis pack\nitems:\n"
    + "".join(_mc(f"ia-f{i}") for i in range(6))
    + _mc("ia-broken", BACKED)
    + _mc("ia-easy")
    + _mc("ia-few")
)


async def _service(db: Database, clock: SimulatedClock, tmp_path: Path) -> Services:
    folder = tmp_path / "packs"
    shutil.copytree(TEST_PACKS, folder)
    (folder / "analysis.yaml").write_text(PACK)
    built = build_services(db, clock, default_timezone="UTC", rng=random.Random(5))
    result = load_packs(folder)
    assert not result.problems, result.problems
    await built.services.packs.sync(result.packs)
    return built.services


async def _ask(service: Services, item_id: str, picks: dict[int, str]) -> None:
    """Post ``item_id`` and have each member answer the choice text picked for them (the
    post shows its own order: the letter is looked up as a member reads it)."""
    draft = await service.quiz.post_question(ADMIN, question=item_id)
    shown = await service.catalogue.posted(draft.post)
    choices = getattr(shown.item, "choices", ())
    letter = {c.text: "ABCD"[i] for i, c in enumerate(choices)}
    everyone = STRONG + WEAK
    for index, text in picks.items():
        await service.quiz.answer(everyone[index], draft.post.id, letter[text])


async def _seed(service: Services) -> None:
    rng = random.Random(11)
    for i in range(6):
        picks = dict.fromkeys(range(15), "Alpha")  # the strong get the ordinary ones right
        picks |= {15 + n: ("Alpha" if rng.random() < 0.25 else "Charlie") for n in range(15)}
        await _ask(service, f"ia-f{i}", picks)
    await _ask(service, "ia-broken", {n: "Bravo" if n < 15 else "Alpha" for n in range(30)})
    await _ask(service, "ia-easy", dict.fromkeys(range(30), "Alpha"))
    await _ask(service, "ia-few", {0: "Alpha", 1: "Bravo", 16: "Alpha"})


async def test_a_key_the_strong_members_reject_and_a_giveaway_are_flagged_with_evidence(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    service = await _service(db, clock, tmp_path)
    await _seed(service)
    stats = {s.question.item_id: s for s in await service.analysis.statistics(ADMIN)}

    broken = stats["ia-broken"]
    assert broken.answers == 30 and broken.right == 15 and broken.facility == 0.5
    assert broken.discrimination is not None and broken.discrimination < -0.5
    assert broken.upper_facility == 0.0 and broken.lower_facility == 1.0
    by_text = {c.text: c for c in broken.choices}
    # The breakdown is in the file's order whatever order each post showed.
    assert [c.label for c in broken.choices] == ["A", "B", "C", "D"]
    assert by_text["Alpha"].key and by_text["Alpha"].count == 15
    assert by_text["Bravo"].count == 15 and by_text["Bravo"].upper >= 5
    assert by_text["Bravo"].lower == 0
    rules = {f.rule: f.evidence for f in broken.flags}
    assert set(rules) == {Rule.NEGATIVE_DISCRIMINATION, Rule.WRONG_CHOICE_PULLS}
    assert "B (Bravo)" in rules[Rule.WRONG_CHOICE_PULLS]
    assert "Check 1 backs the key (A)" in rules[Rule.WRONG_CHOICE_PULLS]
    assert "No check backs this choice (B)" in rules[Rule.WRONG_CHOICE_PULLS]

    easy = stats["ia-easy"]
    assert easy.facility == 1.0
    assert [f.rule for f in easy.flags] == [Rule.TOO_EASY]
    assert "30 of 30" in easy.flags[0].evidence

    for i in range(6):
        ordinary = stats[f"ia-f{i}"]
        assert ordinary.flags == (), ordinary.flags
        assert ordinary.discrimination is not None and ordinary.discrimination > 0.3

    # Three members: no breakdown of who picked what, and no flag from so few.
    few = stats["ia-few"]
    assert few.answers == 3 and few.withheld and few.choices == () and few.flags == ()
    assert stats["ia-f0"].median_seconds is not None


async def test_flags_reach_reports_and_stay_ended_once_an_admin_ends_them(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    service = await _service(db, clock, tmp_path)
    await _seed(service)
    listing = (await service.reports.listing(ADMIN)).plain_text()
    assert "ia-broken (analysis): Strong members pick a wrong answer over the key" in listing
    assert "ia-easy (analysis): Almost everybody gets it right" in listing
    assert "ia-f0" not in listing

    with pytest.raises(Forbidden):
        await service.reports.dismiss(STRONG[0], "ia-easy")
    reply = await service.reports.dismiss(ADMIN, "ia-easy")
    assert "Dismissed 1 flag" in reply.plain_text()
    # More answers do not raise a dismissed flag again for the same version, and the figures
    # follow them at once (kept figures are dropped when an answer is added).
    seen = {s.question.item_id: s for s in await service.analysis.statistics(ADMIN)}
    await _ask(service, "ia-easy", dict.fromkeys(range(30), "Alpha"))
    after = {s.question.item_id: s for s in await service.analysis.statistics(ADMIN)}
    assert (seen["ia-easy"].answers, after["ia-easy"].answers) == (30, 60)
    listing = (await service.reports.listing(ADMIN)).plain_text()
    assert "ia-easy" not in listing
    assert "ia-broken" in listing

    resolved = await service.reports.resolve(ADMIN, "ia-broken")
    assert "Resolved 2 flags" in resolved.plain_text()
    assert (
        "No open reports. 🎉 No flagged questions either."
        in (await service.reports.listing(ADMIN)).plain_text()
    )
    with pytest.raises(NotFound):
        await service.reports.dismiss(ADMIN, "ia-broken")


async def test_statistics_are_for_admins_and_a_period_counts_only_its_answers(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    service = await _service(db, clock, tmp_path)
    with pytest.raises(Forbidden):
        await service.analysis.statistics(STRONG[0])
    await _seed(service)
    clock.advance(timedelta(days=10))
    await _ask(service, "ia-f0", dict.fromkeys(range(5), "Alpha"))
    week = {s.question.item_id: s for s in await service.analysis.statistics(ADMIN, Period(7))}
    assert week["ia-f0"].answers == 5
    assert week["ia-broken"].answers == 0 and week["ia-broken"].facility is None
    everything = {s.question.item_id: s for s in await service.analysis.statistics(ADMIN)}
    assert everything["ia-f0"].answers == 35


async def test_the_gradebook_export_has_a_row_per_member_with_importable_numbers(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    service = await _service(db, clock, tmp_path)
    await _seed(service)
    text = await service.analysis.gradebook_csv(ADMIN)
    rows = list(csv.reader(io.StringIO(text)))
    assert tuple(rows[0]) == GRADEBOOK_HEADER
    by_name = {r[0]: r for r in rows[1:]}
    assert len(by_name) == 30
    strong = by_name["strong0"]
    assert strong[2] == "id-strong0"
    assert float(strong[6]) == pytest.approx(100 * 8 / 9, abs=0.1)  # wrong only on ia-broken
    assert int(strong[7]) == 9 and int(strong[5]) > 0
    for row in rows[1:]:
        float(row[5]), float(row[6]), int(row[7]), int(row[8]), int(row[9])
    # analytics off: no per-member export, said in one line.
    await service.settings.command(ADMIN, SettingChange(Setting.ANALYTICS, "off"))
    with pytest.raises(Forbidden, match="analytics on"):
        await service.analysis.gradebook_csv(ADMIN)


async def test_hint_use_is_the_share_of_answers_given_after_a_hint(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    service = await _service(db, clock, tmp_path)
    draft = await service.quiz.post_question(ADMIN, question="d-prac-1")
    shown = await service.catalogue.posted(draft.post)
    right = "ABCD"[[c.correct for c in shown.item.choices or ()].index(True)]
    for who in STRONG[:4]:
        await service.quiz.answer(who, draft.post.id, right)
    await service.quiz.hint(STRONG[0], draft.post.id)
    await service.quiz.hint(STRONG[0], draft.post.id)  # a second look is one hint use
    await service.quiz.hint(WEAK[0], draft.post.id)  # saw it and never answered
    stats = {s.question.item_id: s for s in await service.analysis.statistics(ADMIN)}
    assert stats["d-prac-1"].hint_share == 0.25
