"""Hostile files and text, run as an attacker would send them: through the real CLI and console.

Every hostile input runs in a child process under an address-space cap, and must finish
within a time bound with one clear line (``file:line`` where there is one), no traceback,
and the bot still answering afterwards. The files are generated here; none is committed.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.core.messages import defuse_fences, neutralise, terminal_safe
from bot.questions.untrusted import MAX_DEPTH, MAX_DIGITS, MAX_FILE_BYTES, MAX_ITEMS
from tests.conftest import TEST_PACKS
from tests.helpers import FRESH

ROOT = Path(__file__).parents[1]
MEMORY_CAP = 2 * 1024**3
TIME_BOUND_S = 30.0


def _alias_bomb(top: str = "items") -> str:
    """The 518-byte pack of the issue: nine levels of anchors, each repeating the last nine times."""
    lines = [
        "pack: bomb",
        "title: Bomb",
        'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    ]
    for level in range(1, 9):
        refs = ",".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    lines.append(f"{top}: [{','.join(['*a8'] * 9)}]")
    return "\n".join(lines) + "\n"


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def _studybot(*args: str, stdin: str = "") -> tuple[subprocess.CompletedProcess[str], float]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("STUDYBOT_", "DISCORD_", "SLACK_"))
    }
    env["OPENBLAS_NUM_THREADS"] = "1"
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "bot", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        env=env,
        preexec_fn=_capped,
    )
    return proc, time.monotonic() - started


def _refused(proc: subprocess.CompletedProcess[str], elapsed: float) -> str:
    assert elapsed < TIME_BOUND_S, f"took {elapsed:.1f}s"
    assert proc.returncode not in (0, -6, -11), (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr + proc.stdout
    return proc.stdout + proc.stderr


HOSTILE: dict[str, Callable[[], str]] = {
    "alias bomb": _alias_bomb,
    "recursive alias": lambda: "pack: x\ntitle: X\nitems: &x [*x]\n",
    "20,000 levels of nesting": lambda: (
        "pack: x\ntitle: X\nitems: " + "[" * 20000 + "]" * 20000 + "\n"
    ),
    "5,000-digit integer": lambda: "pack: x\ntitle: X\nn: " + "9" * 5000 + "\nitems: []\n",
}
EXPECTED = {
    "alias bomb": ":3: YAML anchors (&a0) are not accepted",
    "recursive alias": ":3: YAML anchors (&x) are not accepted",
    "20,000 levels of nesting": f":3: nested more than {MAX_DEPTH} levels deep",
    "5,000-digit integer": f":3: a number with 5,000 digits (at most {MAX_DIGITS:,})",
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_questions_lint_refuses_hostile_packs_in_one_line(tmp_path: Path, case: str) -> None:
    pack = tmp_path / "hostile.yaml"
    pack.write_text(HOSTILE[case]())
    proc, elapsed = _studybot("questions", "lint", str(pack))
    out = _refused(proc, elapsed)
    assert f"{pack}{EXPECTED[case]}" in out


def test_a_50_mb_pack_is_refused_by_its_size_before_parsing(tmp_path: Path) -> None:
    pack = tmp_path / "huge.yaml"
    with pack.open("w") as fh:
        fh.write("pack: huge\ntitle: Huge\nitems:\n")
        chunk = "  - id: x\n    kind: flashcard\n    prompt: p\n    answer: a\n" * 1000
        while fh.tell() < 50 * 1024 * 1024:
            fh.write(chunk)
    proc, elapsed = _studybot("questions", "lint", str(pack))
    out = _refused(proc, elapsed)
    assert f"huge.yaml is {pack.stat().st_size:,} bytes, over the 4 MiB limit for one file" in out
    assert elapsed < 10


def test_too_many_items_in_one_file_are_refused_with_the_limit(tmp_path: Path) -> None:
    pack = tmp_path / "many.yaml"
    items = "".join(
        f"  - id: m-{i}\n    kind: flashcard\n    difficulty: easy\n    prompt: Question {i}\n"
        f"    answer: Answer {i}\n"
        for i in range(MAX_ITEMS + 1)
    )
    pack.write_text("pack: many\ntitle: Many\nitems:\n" + items)
    assert pack.stat().st_size < MAX_FILE_BYTES
    proc, elapsed = _studybot("questions", "lint", str(pack))
    out = _refused(proc, elapsed)
    assert f"{pack}:3: items: {MAX_ITEMS + 1:,} items is over the limit of {MAX_ITEMS:,}" in out


def test_the_near_duplicate_pass_is_bounded_and_says_so(tmp_path: Path) -> None:
    pack = tmp_path / "same.yaml"
    items = "".join(
        f"  - id: s-{i}\n    kind: flashcard\n    difficulty: easy\n"
        "    prompt: Which tensors does backward fill with a grad attribute here\n"
        "    answer: the leaves\n"
        for i in range(MAX_ITEMS)
    )
    pack.write_text("pack: same\ntitle: Same\nitems:\n" + items)
    proc, elapsed = _studybot("questions", "lint", str(pack))
    assert elapsed < TIME_BOUND_S
    assert proc.returncode == 0, proc.stderr  # warnings only
    assert "warning: the near-duplicate check was cut short" in proc.stdout
    # One line per repeated item, not one per pair (2,000 items would be two million pairs).
    assert len(proc.stdout.splitlines()) < MAX_ITEMS + 5


def _opentdb_bomb() -> str:
    return _alias_bomb(top="results")


IMPORTS: dict[str, tuple[str, Callable[[], str], str]] = {
    "opentdb yaml alias bomb": (
        "bomb.yaml",
        _opentdb_bomb,
        ":3: YAML anchors (&a0) are not accepted",
    ),
    "opentdb yaml bomb without a suffix": (
        "bomb.txt",
        lambda: _opentdb_bomb() + "more:\n  - question: q\n    correct_answer: a\n",
        "",
    ),
    "100,000 nested JSON arrays": (
        "deep.json",
        lambda: "[" * 100_000 + "]" * 100_000,
        f":1: nested more than {MAX_DEPTH} levels deep",
    ),
    "nested JSON without a suffix": (
        "deep",
        lambda: "[" * 100_000 + "]" * 100_000,
        f":1: nested more than {MAX_DEPTH} levels deep",
    ),
    "5,000-digit JSON number": (
        "big.json",
        lambda: '{"results": [\n{"type": "multiple", "question": ' + "9" * 5000 + "}]}",
        ":2: a number with 5,000 digits",
    ),
    "non-text OpenTDB category": (
        "odd.json",
        lambda: json.dumps(
            {
                "results": [
                    {
                        "type": "multiple",
                        "question": "q",
                        "correct_answer": "a",
                        "incorrect_answers": ["b"],
                        "category": [[1] * 40] * 40,
                    }
                ]
            }
        ),
        ":1: results[0]: category must be text, not a list or mapping",
    ),
    "CSV alias bomb text": (
        "bomb.csv",
        lambda: "question,answer\n" + _alias_bomb().replace(",", ";"),
        "",
    ),
}


@pytest.mark.parametrize("case", list(IMPORTS))
def test_questions_import_refuses_hostile_files(tmp_path: Path, case: str) -> None:
    name, make, expected = IMPORTS[case]
    source = tmp_path / name
    source.write_text(make())
    proc, elapsed = _studybot(
        "questions", "import", str(source), "--out", str(tmp_path / "out.yaml")
    )
    assert elapsed < TIME_BOUND_S, f"took {elapsed:.1f}s"
    assert proc.returncode not in (-6, -11) and "Traceback" not in proc.stderr + proc.stdout
    assert f"{source}{expected}" in proc.stdout + proc.stderr


def test_an_import_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "big.csv"
    row = "What does backward compute for this leaf tensor?,Its gradient\n"
    source.write_text("question,answer\n" + row * (MAX_FILE_BYTES // len(row) + 10))
    proc, elapsed = _studybot("questions", "import", str(source))
    out = _refused(proc, elapsed)
    assert f"{source} is {source.stat().st_size:,} bytes, over the 4 MiB limit" in out


def _console(tmp_path: Path, script: str) -> tuple[list[dict[str, object]], float]:
    proc, elapsed = _studybot(
        "console",
        "--json",
        "--db",
        str(tmp_path / "bot.sqlite3"),
        "--packs",
        str(TEST_PACKS),
        "--clock",
        "2026-03-04T09:00:00+00:00",
        stdin=script,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()], elapsed


@pytest.mark.parametrize("case", list(HOSTILE))
def test_pack_upload_in_the_console_refuses_and_the_bot_keeps_running(
    tmp_path: Path, case: str
) -> None:
    upload = tmp_path / "hostile.yaml"
    upload.write_text(HOSTILE[case]())
    # `me` is an admin; `bob` is a member who is not: both may check a file.
    script = f"/as bob\n/pack upload {upload}\n/as me --admin\n/pack upload {upload}\n/quiz mini\n"
    out, elapsed = _console(tmp_path, script)
    assert elapsed < TIME_BOUND_S * 2
    replies = [line for line in out if "hostile.yaml" in str(line["text"])]
    assert [reply["member"] for reply in replies] == ["bob", "me"]
    for reply in replies:
        text = str(reply["text"])
        assert f"hostile.yaml{EXPECTED[case]}" in text, text
        assert "Sorry" not in text
    assert out[-1]["kind"] == "post" and out[-1]["question_id"]  # the bot still answers


def test_a_valid_upload_still_installs_after_a_hostile_one(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(_alias_bomb())
    fresh = tmp_path / "fresh.yaml"
    fresh.write_text(FRESH)
    packs = tmp_path / "packs"
    packs.mkdir()
    for source in TEST_PACKS.glob("*.yaml"):
        (packs / source.name).write_bytes(source.read_bytes())
    proc, _ = _studybot(
        "console",
        "--json",
        "--db",
        str(tmp_path / "bot.sqlite3"),
        "--packs",
        str(packs),
        stdin=f"/pack upload {bomb}\n/pack upload {fresh}\n/pack list\n",
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert "not accepted" in str(out[0]["text"])
    assert "installed" in str(out[1]["text"]).lower()
    uploaded = tmp_path / "bot-packs"  # beside bot.sqlite3
    assert (uploaded / "fresh.yaml").exists() and not (uploaded / "bomb.yaml").exists()
    assert not (packs / "bomb.yaml").exists()


@pytest.mark.parametrize("length", range(3, 13))
def test_no_backtick_run_survives_to_close_a_fence(length: int) -> None:
    text = f"before {'`' * length} after ``` and {'`' * (length + 1)}"
    for safe in (defuse_fences(text), neutralise(text)):
        assert "``" not in safe
        assert safe.replace("\u200b", "") == text  # nothing is lost but the fences' power


@pytest.mark.parametrize("text", ["@everyone_3", "@here3", "@EVERYONE", "@here", "hi @everyone!"])
def test_mass_mentions_with_trailing_characters_are_defused(text: str) -> None:
    safe = neutralise(text)
    assert "@everyone" not in safe.lower() and "@here" not in safe.lower()
    assert safe.replace("\u200b", "") == text


def test_terminal_escapes_are_shown_escaped() -> None:
    raw = "red \x1b[31mX\x1b[0m title \x1b]0;pwned\x07 csi \x9b2J rtl \u202e end\ttab\nline"
    assert terminal_safe(raw) == (
        "red \\x1b[31mX\\x1b[0m title \\x1b]0;pwned\\x07 csi \\x9b2J rtl \\u202e end\ttab\nline"
    )


@pytest.mark.slow
def test_snippet_output_escapes_reach_no_terminal(tmp_path: Path) -> None:
    """`snippet run` and the plain console print a snippet's ESC and OSC sequences escaped."""
    code = 'print("\\x1b]0;pwned\\x07\\x1b[2J done")'
    snippet = tmp_path / "s.py"
    snippet.write_text(code)
    proc, _ = _studybot("snippet", "run", str(snippet))
    if "sandbox unavailable" in proc.stderr:
        pytest.skip(proc.stderr)
    assert "\x1b" not in proc.stdout + proc.stderr
    assert "\\x1b]0;pwned\\x07\\x1b[2J done" in proc.stdout
    console, _ = _studybot(
        "console",
        "--db",
        str(tmp_path / "c.sqlite3"),
        "--packs",
        str(TEST_PACKS),
        stdin=f"/run {code}\n",
    )
    assert "\x1b" not in console.stdout
    assert "\\x1b]0;pwned\\x07\\x1b[2J done" in console.stdout


@pytest.mark.parametrize("fmt", ["cheatsheet", "tsv", "csv", "opentdb"])
def test_the_alias_bomb_through_every_import_format(tmp_path: Path, fmt: str) -> None:
    """Text formats read it as text (no YAML at all); OpenTDB YAML refuses its anchors."""
    source = tmp_path / "bomb.yaml"
    source.write_text(_alias_bomb(top="results"))
    proc, elapsed = _studybot(
        "questions", "import", str(source), "--format", fmt, "--out", str(tmp_path / "o.yaml")
    )
    assert elapsed < TIME_BOUND_S, f"took {elapsed:.1f}s"
    assert proc.returncode not in (-6, -9, -11), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr + proc.stdout
    assert f"as {fmt} [--format {fmt}]" in proc.stdout + proc.stderr
    if fmt == "opentdb":
        assert f"{source}:3: YAML anchors (&a0) are not accepted" in proc.stdout + proc.stderr
