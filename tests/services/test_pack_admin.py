"""Pack commands and pack uploads through Services, on a real SQLite file and packs folder.

``pack enable|disable`` are checked by what ``quiz`` and schedules can then post; uploads are
checked against what ``studybot questions lint`` prints for the same file in the same folder.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.app import build_services
from bot.core.clock import SimulatedClock
from bot.core.errors import BadInput, Forbidden, NotFound
from bot.core.messages import Message
from bot.questions.loader import load_packs
from bot.services.bundle import Services
from bot.services.packs import MAX_UPLOAD_BYTES, SHOWN_PROBLEMS
from bot.storage.database import Database
from tests.conftest import TEST_PACKS
from tests.helpers import FRESH, member, schedule_command

ADMIN = member("root", admin=True)
ANN = member("ann")
ADMIN_RANDOM = member("root", admin=True, channel="random")

EXTRA = """\
pack: extra
title: Extra
items:
  - id: x-flash-1
    kind: flashcard
    difficulty: easy
    prompt: What does tensor.detach() return?
    answer: A tensor cut from the graph that shares storage.
  - id: x-flash-2
    kind: flashcard
    difficulty: medium
    prompt: What does torch.no_grad() switch off?
    answer: Recording operations for autograd.
"""


# Schema errors only: the linter stops at them, as for a file on disk.
BROKEN = """\
pack: zz
title: Broken
items:
  - id: zz-1
    kind: flashcard
    difficulty: ultra
    prompt: What?
    answer: x
    bogus: 1
  - id: zz-2
    kind: multiple_choice
    difficulty: easy
    prompt: Pick one
    choices:
      - text: only one
  - kind: riddle
"""

# Schema-valid, but it reuses an id and a pack's question: cross-pack errors and a warning.
CLASHING = """\
pack: zz
title: Clashing
items:
  - id: d-mc-1
    kind: flashcard
    difficulty: easy
    prompt: Something new entirely
    answer: fine
  - id: zz-dup
    kind: multiple_choice
    difficulty: medium
    prompt: When is the autograd graph built?
    choices:
      - text: Before the program runs
      - text: As the forward pass runs
        correct: true
"""

# Valid, with a near-duplicate warning: warnings do not stop an install.
WARNED = """\
pack: zz
title: Warned
items:
  - id: zz-dup
    kind: multiple_choice
    difficulty: medium
    prompt: When is the autograd graph built?
    choices:
      - text: Before the program runs
      - text: As the forward pass runs
        correct: true
"""


@pytest.fixture
def packs_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "packs"
    folder.mkdir()
    shutil.copy(TEST_PACKS / "mini.yaml", folder / "mini.yaml")
    (folder / "extra.yaml").write_text(EXTRA)
    return folder


@pytest.fixture
async def service(db: Database, clock: SimulatedClock, packs_dir: Path) -> Services:
    """The service as the Wiring builds it: it knows the packs folder and the loaded packs."""
    built = build_services(db, clock, rng=random.Random(7), packs_dir=packs_dir)
    svc = built.services
    result = load_packs(packs_dir)
    assert not result.problems, result.problems
    await svc.packs.sync(result.packs)
    return svc


async def _packs_posted(service: Services, who=ANN, times: int = 8) -> set[str]:  # type: ignore[no-untyped-def]
    packs = set()
    for _ in range(times):
        draft = await service.quiz.post_question(who)
        packs.add((await service.catalogue.question(draft.post.question_version_id)).pack)
    return packs


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _problem_lines(reply: Message) -> list[str]:
    """The problem lines of an upload report: the attached full list, else the code blocks."""
    if reply.attachments:
        return reply.attachments[0].content.decode().splitlines()
    return [
        line for s in reply.sections if s.code is not None for line in s.code.splitlines() if line
    ]


def _lint(folder: Path, name: str) -> tuple[list[str], list[str]]:
    """What ``studybot questions lint .`` prints about ``name`` in ``folder``: errors, warnings."""
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "questions", "lint", "."],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith(f"{name}:")]
    warnings = [line for line in proc.stdout.splitlines() if line.startswith(f"{name}:")]
    return errors, warnings


def _lint_as_added(packs_dir: Path, tmp_path: Path, name: str, text: str) -> list[str]:
    folder = tmp_path / "lint-copy"
    shutil.copytree(packs_dir, folder)
    (folder / name).write_text(text)
    errors, warnings = _lint(folder, name)
    return errors + warnings


# --- list, enable, disable -------------------------------------------------------------------


async def test_pack_list_shows_counts_and_the_state_in_this_channel(service: Services) -> None:
    await service.packs.disable(ADMIN, "extra")
    here = await service.packs.listing(ADMIN)
    assert here.ephemeral
    assert here.title == "📚 Question packs in #general"
    text = here.plain_text()
    assert "extra — Extra (2 questions) · off here" in text
    assert "mini — Mini pack (6 questions) · on" in text
    assert "pack enable NAME" in (here.footer or "")
    elsewhere = (await service.packs.listing(ADMIN_RANDOM)).plain_text()
    assert "extra — Extra (2 questions) · on" in elsewhere
    assert (await service.packs.listing(ANN)).footer is None  # admin hints for admins


async def test_disable_keeps_quiz_off_the_pack_in_that_channel_only(service: Services) -> None:
    assert await _packs_posted(service) == {"mini", "extra"}
    reply = await service.packs.disable(ADMIN, "mini")
    assert "mini is off in #general" in reply.plain_text()
    assert "Other channels are not affected" in reply.plain_text()
    assert await _packs_posted(service, times=12) == {"extra"}
    assert "mini" in await _packs_posted(service, member("ann", channel="random"), times=12)
    with pytest.raises(NotFound, match=r"Pack `mini` is off in this channel.*pack enable mini"):
        await service.quiz.post_question(ANN, pack="mini")

    again = await service.packs.enable(ADMIN, "MINI ")  # case and spaces are forgiven
    assert "mini is on in #general again" in again.plain_text()
    assert "mini" in await _packs_posted(service, times=12)


async def test_disabled_packs_are_never_posted_by_schedules_in_that_channel(
    service: Services,
) -> None:
    reply = await schedule_command(service, ADMIN, "add", ["09:00"])
    any_pack = int(reply.message.plain_text().split("#", 1)[1].split(" ", 1)[0])
    reply = await schedule_command(service, ADMIN, "add", ["10:00", "--pack", "mini"])
    only_mini = int(reply.message.plain_text().split("#", 1)[1].split(" ", 1)[0])

    off = (await service.packs.disable(ADMIN, "mini")).plain_text()
    assert f"Schedule #{only_mini} here asks for this pack" in off
    assert f"#{any_pack}" not in off.split("Schedule", 1)[1]
    for _ in range(6):
        draft = (await schedule_command(service, ADMIN, "now", [str(any_pack)])).draft
        assert draft is not None
        assert (await service.catalogue.question(draft.post.question_version_id)).pack == "extra"
    with pytest.raises(NotFound, match="off in this channel"):
        await schedule_command(service, ADMIN, "now", [str(only_mini)])


async def test_disabling_the_last_pack_is_allowed_and_says_quiz_finds_nothing(
    service: Services,
) -> None:
    first = (await service.packs.disable(ADMIN, "extra")).plain_text()
    assert "last pack" not in first
    last = (await service.packs.disable(ADMIN, "mini")).plain_text()
    assert "That was the last pack on here: `quiz` will find nothing" in last
    with pytest.raises(NotFound, match="No questions match"):
        await service.quiz.post_question(ANN)
    assert "Every pack is off in this channel" in (await service.packs.listing(ANN)).plain_text()
    await service.quiz.post_question(member("ann", channel="random"))  # other channels still work


async def test_switching_to_the_current_state_is_a_note_not_an_error(
    service: Services,
) -> None:
    assert (await service.packs.enable(ADMIN, "mini")).plain_text() == (
        "mini is already on in #general."
    )
    await service.packs.disable(ADMIN, "mini")
    assert (await service.packs.disable(ADMIN, "mini")).plain_text() == (
        "mini is already off in #general."
    )


async def test_members_cannot_switch_packs(service: Services) -> None:
    for switch in (service.packs.enable, service.packs.disable):
        with pytest.raises(Forbidden, match="Only admins can turn packs on or off"):
            await switch(ANN, "mini")
    assert "· off" not in (await service.packs.listing(ANN)).plain_text()
    assert await _packs_posted(service) == {"mini", "extra"}


async def test_an_unknown_pack_gets_a_suggestion(service: Services) -> None:
    with pytest.raises(NotFound, match=r"There is no pack called `minni`\. Did you mean `mini`\?"):
        await service.packs.disable(ADMIN, "minni")
    with pytest.raises(NotFound, match=r"no pack called `zzz`\. See `pack list`\."):
        await service.packs.enable(ADMIN, "zzz")
    with pytest.raises(NotFound, match="@\u200beveryone"):  # echoed, never a ping
        await service.packs.enable(ADMIN, "@everyone")


# --- uploads: the linter's words -------------------------------------------------------------


async def test_an_upload_with_errors_reports_exactly_what_lint_prints(
    service: Services, packs_dir: Path, tmp_path: Path
) -> None:
    reply = await service.packs.check_upload(ANN, "zz.yaml", BROKEN.encode())
    expected = _lint_as_added(packs_dir, tmp_path, "zz.yaml", BROKEN)
    assert len(expected) >= 4
    assert _problem_lines(reply) == expected
    assert reply.ephemeral
    assert reply.title == f"❌ zz.yaml: {len(expected)} errors"
    assert [s.heading for s in reply.sections if s.code] == [f"Errors ({len(expected)})"]
    assert "Fix the errors and upload the file again" in reply.plain_text()
    assert _names(packs_dir) == ["extra.yaml", "mini.yaml"]


async def test_cross_pack_errors_and_near_duplicates_match_lint_too(
    service: Services, packs_dir: Path, tmp_path: Path
) -> None:
    reply = await service.packs.check_upload(ADMIN, "zz.yaml", CLASHING.encode())
    expected = _lint_as_added(packs_dir, tmp_path, "zz.yaml", CLASHING)
    assert any("already used" in line for line in expected)
    assert any("warning: zz-dup: near-duplicate of d-mc-1 (mini.yaml:" in x for x in expected)
    assert _problem_lines(reply) == expected
    headings = [s.heading for s in reply.sections if s.code]
    assert headings == ["Errors (1)", "Warnings (1)"]
    assert "Not installed" in reply.plain_text()
    assert not (packs_dir / "zz.yaml").exists()


async def test_a_long_report_is_cut_with_the_full_list_attached(
    service: Services, packs_dir: Path, tmp_path: Path
) -> None:
    items = "".join(
        f"  - id: bad-{n}\n    kind: flashcard\n    difficulty: hard\n    prompt: Q{n}\n"
        for n in range(30)  # each misses its answer
    )
    text = f"pack: zz\ntitle: Many\nitems:\n{items}"
    reply = await service.packs.check_upload(ANN, "zz.yaml", text.encode())
    expected = _lint_as_added(packs_dir, tmp_path, "zz.yaml", text)
    assert len(expected) == 30  # 30 missing answers (not also "no items": there are 30)
    [attachment] = reply.attachments
    assert attachment.filename == "zz-problems.txt"
    assert attachment.content.decode().splitlines() == expected
    shown = [line for s in reply.sections if s.code for line in s.code.splitlines()]
    assert shown == expected[:SHOWN_PROBLEMS]
    assert f"… and {30 - SHOWN_PROBLEMS} more not shown: all 30 are in the attached" in (
        reply.plain_text()
    )


# --- uploads: installing ---------------------------------------------------------------------


async def test_an_admins_valid_upload_is_installed_under_its_slug_and_quizzable(
    service: Services, packs_dir: Path, db: Database, clock: SimulatedClock
) -> None:
    reply = await service.packs.check_upload(ADMIN, "My Upload (1).yaml", FRESH.encode())
    text = reply.plain_text()
    assert reply.title == "✅ My Upload (1).yaml: pack fresh, 1 question, no problems"
    assert "Installed fresh — Fresh questions (1 question) as `fresh.yaml`" in text
    assert (packs_dir / "fresh.yaml").read_bytes() == FRESH.encode()
    assert _names(packs_dir) == ["extra.yaml", "fresh.yaml", "mini.yaml"]
    draft = await service.quiz.post_question(ANN, pack="fresh")
    assert draft.message.question_id == "f-flash-1"
    assert (
        "fresh — Fresh questions (1 question) · on"
        in (await service.packs.listing(ANN)).plain_text()
    )
    # A restart loads the same file and finds nothing to change.
    again = build_services(db, clock, packs_dir=packs_dir).services
    report = await again.packs.sync(load_packs(packs_dir).packs)
    assert (report.packs, report.added, report.updated, report.retired) == (3, 0, 0, 0)


async def test_an_update_keeps_history_and_says_what_changed(
    service: Services, packs_dir: Path
) -> None:
    old = await service.quiz.post_question(ANN, pack="extra", difficulty="easy")
    edited = EXTRA.replace(
        "A tensor cut from the graph that shares storage.", "A new tensor, cut from the graph."
    ).replace("  - id: x-flash-2", "  - id: x-flash-3")
    reply = await service.packs.check_upload(ADMIN, "extra.yaml", edited.encode())
    assert "Updated extra: 1 new, 1 changed, 1 retired and 0 unchanged questions" in (
        reply.plain_text()
    )
    assert (packs_dir / "extra.yaml").read_text() == edited
    shown = await service.catalogue.question(old.post.question_version_id)
    assert shown.item.answer == "A tensor cut from the graph that shares storage."  # type: ignore[union-attr]
    same = await service.packs.check_upload(ADMIN, "extra.yaml", edited.encode())
    assert "already installed exactly like this; nothing changed" in same.plain_text()


async def test_warnings_do_not_stop_an_install(
    service: Services, packs_dir: Path, tmp_path: Path
) -> None:
    expected = _lint_as_added(packs_dir, tmp_path, "zz.yaml", WARNED)
    reply = await service.packs.check_upload(ADMIN, "zz.yaml", WARNED.encode())
    assert _problem_lines(reply) == expected and len(expected) == 1
    assert reply.title == "✅ zz.yaml: pack zz, 1 question, 1 warning"
    assert "Installed zz" in reply.plain_text()
    assert (packs_dir / "zz.yaml").exists()


async def test_a_members_valid_upload_is_checked_but_not_installed(
    service: Services, packs_dir: Path
) -> None:
    reply = await service.packs.check_upload(ANN, "fresh.yaml", FRESH.encode())
    assert "This pack is valid. Ask an admin to upload it to install it." in reply.plain_text()
    assert not (packs_dir / "fresh.yaml").exists()
    with pytest.raises(NotFound):
        await service.quiz.post_question(ANN, pack="fresh")


@pytest.mark.parametrize(
    "name",
    [
        "../evil.yaml",
        "../../etc/cron.d/x.yaml",
        "sub/dir.yaml",
        "..\\evil.yaml",
        ".hidden.yaml",
        "..",
        "",
        "tab\there.yaml",
    ],
)
async def test_path_like_names_are_refused_before_parsing(
    service: Services, packs_dir: Path, tmp_path: Path, name: str
) -> None:
    with pytest.raises(BadInput, match="is not a plain file name"):
        await service.packs.check_upload(ADMIN, name, FRESH.encode())
    assert _names(packs_dir) == ["extra.yaml", "mini.yaml"]
    assert not (tmp_path / "evil.yaml").exists()


async def test_a_slug_never_escapes_the_packs_folder(service: Services, packs_dir: Path) -> None:
    sneaky = FRESH.replace("pack: fresh", "pack: ../../escape")
    reply = await service.packs.check_upload(ADMIN, "fresh.yaml", sneaky.encode())
    assert "Not installed" in reply.plain_text()
    assert "fresh.yaml:1: pack:" in _problem_lines(reply)[0]
    assert sorted(p.name for p in packs_dir.parent.rglob("*.yaml")) == ["extra.yaml", "mini.yaml"]


@pytest.mark.parametrize("name", ["notes.txt", "pack.yaml.exe", "pack.json", "README"])
async def test_files_that_are_not_yaml_are_refused(service: Services, name: str) -> None:
    with pytest.raises(BadInput, match=r"is not a pack file: .*`\.yaml` or `\.yml`"):
        service.packs.check_file(name, 10)
    with pytest.raises(BadInput, match="is not a pack file"):
        await service.packs.check_upload(ADMIN, name, FRESH.encode())


async def test_big_files_are_refused_by_size_before_reading(service: Services) -> None:
    with pytest.raises(BadInput, match=r"`big\.yml` is 3 MiB; .* at most 1 MiB"):
        service.packs.check_file("big.yml", 3 * 1024 * 1024)
    service.packs.check_file("ok.YML", MAX_UPLOAD_BYTES)
    too_big = FRESH.encode() + b"#" * MAX_UPLOAD_BYTES
    with pytest.raises(BadInput, match="at most 1 MiB"):
        await service.packs.check_upload(ADMIN, "fresh.yaml", too_big)


async def test_packs_with_too_many_items_are_refused(service: Services, packs_dir: Path) -> None:
    service.packs.max_items = 3
    items = "".join(
        f"  - id: n-{n}\n    kind: flashcard\n    difficulty: easy\n    prompt: Question {n}?\n"
        f"    answer: Answer {n}.\n"
        for n in range(4)
    )
    with pytest.raises(
        BadInput, match="has 4 questions; a pack uploaded in chat can have at most 3"
    ):
        await service.packs.check_upload(
            ADMIN, "n.yaml", f"pack: n\ntitle: N\nitems:\n{items}".encode()
        )
    assert not (packs_dir / "n.yaml").exists()


async def test_a_pack_living_in_another_file_is_not_installed_twice(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    folder = tmp_path / "odd"
    folder.mkdir()
    shutil.copy(TEST_PACKS / "mini.yaml", folder / "mini-pack.yaml")  # pack mini, other name
    built = build_services(db, clock, packs_dir=folder)
    service = built.services
    await service.packs.sync(load_packs(folder).packs)
    raw = (TEST_PACKS / "mini.yaml").read_bytes().replace(b"Mini pack", b"Mini pack 2")
    reply = await service.packs.check_upload(ADMIN, "mini-pack.yaml", raw)
    assert reply.title == "✅ mini-pack.yaml: pack mini, 6 questions, no problems"
    assert "Not installed: pack `mini` lives in `mini-pack.yaml`" in reply.plain_text()
    assert "rename that file to `mini.yaml`" in reply.plain_text()
    assert _names(folder) == ["mini-pack.yaml"]


async def test_an_upload_named_like_another_packs_file_is_not_installed_beside_it(
    service: Services, packs_dir: Path
) -> None:
    reply = await service.packs.check_upload(ADMIN, "mini.yaml", FRESH.encode())
    assert (
        "Not installed: `mini.yaml` is the file of pack `mini`, but this file is pack `fresh`"
        in (reply.plain_text())
    )
    assert not (packs_dir / "fresh.yaml").exists()
    assert (packs_dir / "mini.yaml").read_bytes() == (TEST_PACKS / "mini.yaml").read_bytes()


async def test_an_unwritable_packs_folder_is_reported_not_raised(
    db: Database, clock: SimulatedClock, packs_dir: Path, tmp_path: Path
) -> None:
    built = build_services(db, clock, packs_dir=tmp_path / "gone")
    service = built.services
    await service.packs.sync(load_packs(packs_dir).packs)
    reply = await service.packs.check_upload(ADMIN, "fresh.yaml", FRESH.encode())
    assert "Not installed: the packs folder cannot be written on this host" in reply.plain_text()
    with pytest.raises(NotFound):
        await service.quiz.post_question(ANN, pack="fresh")


async def test_without_a_packs_folder_uploads_are_only_checked(
    db: Database, clock: SimulatedClock
) -> None:
    built = build_services(db, clock)
    service = built.services
    await service.packs.sync(load_packs(TEST_PACKS).packs)
    reply = await service.packs.check_upload(ADMIN, "fresh.yaml", FRESH.encode())
    assert "installing packs from chat is off on this bot" in reply.plain_text()


async def test_two_uploads_at_once_are_checked_against_each_other(
    service: Services, packs_dir: Path
) -> None:
    first = FRESH
    second = FRESH.replace("pack: fresh", "pack: other").replace(
        "prompt: Which attribute", "prompt: Quite different, which attribute"
    )
    # The checks run side by side, outside the install lock; whichever finishes first is
    # installed, and the other is checked again against it, so exactly one gets in.
    replies = await asyncio.gather(
        service.packs.check_upload(ADMIN, "fresh.yaml", first.encode()),
        service.packs.check_upload(ADMIN, "other.yaml", second.encode()),
    )
    names = {"fresh": "fresh.yaml", "other": "other.yaml"}
    winners = [slug for slug, reply in zip(names, replies, strict=True)
               if f"Installed {slug}" in reply.plain_text()]  # fmt: skip
    assert len(winners) == 1
    winner = winners[0]
    loser = next(slug for slug in names if slug != winner)
    refused = replies[list(names).index(loser)]
    assert (
        f"{names[loser]}:4: f-flash-1.id: id 'f-flash-1' is already used at {names[winner]}:4"
        in _problem_lines(refused)
    )
    assert _names(packs_dir) == sorted(["extra.yaml", names[winner], "mini.yaml"])


async def test_a_channel_name_with_markdown_cannot_become_a_link(service: Services) -> None:
    where = member("root", admin=True, channel="[free](https://evil.example)")
    reply = await service.packs.disable(where, "mini")
    assert reply.sections[0].body.startswith(
        r"⛔ **mini** is off in #\[free\](https://evil.example)"
    )
    assert "off in #[free](https://evil.example):" in reply.plain_text()  # plain text: as typed
