"""The `studybot` command line, run as an operator would run it."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import TEST_PACKS
from tests.questions.test_loader import BAD

ROOT = Path(__file__).parents[1]
PLATFORM_PREFIXES = ("STUDYBOT_", "DISCORD_", "SLACK_")


def studybot(
    *args: str, env: dict[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(PLATFORM_PREFIXES)}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        env=full_env,
    )


def test_lint_clean_packs_exits_zero() -> None:
    proc = studybot("questions", "lint", str(TEST_PACKS))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok: 1 pack(s), 6 item(s)"


def test_lint_reports_every_problem_and_exits_one(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD)
    proc = studybot("questions", "lint", str(bad))
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert lines[-1] == "9 problem(s); 0 pack(s) clean"
    assert all(line.startswith(f"{bad}:") for line in lines[:-1])
    assert "Traceback" not in proc.stderr


def test_list_shows_packs_and_items() -> None:
    proc = studybot("questions", "list", str(TEST_PACKS))
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[0].startswith("mini: Mini pack (6 items)")
    assert any(
        line.split()[:3] == ["d-mc-1", "multiple_choice", "medium"]
        for line in proc.stdout.splitlines()
    )


def test_db_backup_and_check(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    session = studybot(
        "console",
        "--db",
        str(db),
        "--packs",
        str(TEST_PACKS),
        stdin="/quiz mini --difficulty medium\n/answer A\n",
    )
    assert session.returncode == 0, session.stderr
    copy = tmp_path / "copy.tar.gz"
    proc = studybot("db", "backup", str(copy), "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    restored = tmp_path / "restored.sqlite3"
    assert studybot("db", "restore", str(copy), "--db", str(restored)).returncode == 0
    conn = sqlite3.connect(restored)
    try:
        assert conn.execute("SELECT count(*) FROM answers").fetchone() == (1,)
    finally:
        conn.close()
    check = studybot("db", "check", "--db", str(restored))
    assert check.returncode == 0
    assert check.stdout.startswith(f"ok: {restored} (schema version ")


def test_db_check_fails_on_a_broken_file(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    assert studybot("db", "check", "--db", str(db)).returncode == 1  # no file yet
    db.write_bytes(b"this is not a database, just some bytes" * 100)
    proc = studybot("db", "check", "--db", str(db))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"studybot: cannot open database {db}: ")
    assert "Traceback" not in proc.stderr


def test_a_database_path_that_cannot_be_opened_is_one_line(tmp_path: Path) -> None:
    directory = tmp_path / "dirdb"
    directory.mkdir()
    for args in (
        ("console", "--db", str(directory)),
        ("db", "check", "--db", str(directory)),
        ("db", "backup", str(tmp_path / "copy.tar.gz"), "--db", str(directory)),
    ):
        proc = studybot(*args, stdin="/help\n")
        assert proc.returncode == 2, args
        assert proc.stderr.splitlines() == [
            f"studybot: cannot open database {directory}: unable to open database file"
        ], args


def test_invalid_settings_are_one_readable_line(tmp_path: Path) -> None:
    proc = studybot(
        "console", "--db", str(tmp_path / "x.sqlite3"), env={"STUDYBOT_TIMEZONE": "Mars/Olympus"}
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "studybot: invalid settings: STUDYBOT_TIMEZONE: unknown IANA timezone 'Mars/Olympus' "
        "(e.g. Europe/Berlin)"
    )


def test_times_and_durations_out_of_range_are_one_line(tmp_path: Path) -> None:
    db = str(tmp_path / "x.sqlite3")
    clock = studybot("console", "--db", db, "--clock", "9999-12-31T23:00:00Z")
    assert clock.returncode == 2
    assert clock.stderr.splitlines() == [
        "--clock: 9999-12-31T23:00:00+00:00 is outside the years 2000 to 2999, "
        "which a simulated clock can show"
    ]
    window = studybot("console", "--db", db, env={"QUIZ_WINDOW": "99999999999d"})
    assert window.returncode == 2
    assert window.stderr.splitlines() == [
        "studybot: invalid settings: QUIZ_WINDOW: '99999999999d' is longer than the maximum, "
        "3650d (about ten years)"
    ]


def test_a_script_is_piped_to_the_console_command(tmp_path: Path) -> None:
    """The scripted path: `studybot console` reads commands from a pipe (`run` needs a
    terminal for the console: see test_run_on_the_console_without_a_terminal_refuses...)."""
    proc = studybot(
        "console",
        env={"STUDYBOT_DB": str(tmp_path / "r.sqlite3"), "STUDYBOT_PACKS": str(TEST_PACKS)},
        stdin="/pack list\n",
    )
    assert proc.returncode == 0, proc.stderr
    assert "mini — Mini pack (6 questions)" in proc.stdout


def test_db_backup_into_a_folder_names_the_copy_by_date(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    assert studybot("console", "--db", str(db), stdin="/help\n").returncode == 0
    existing = tmp_path / "backups"
    existing.mkdir()
    for folder, arg in ((existing, str(existing)), (tmp_path / "new", f"{tmp_path / 'new'}/")):
        proc = studybot("db", "backup", arg, "--db", str(db))
        assert proc.returncode == 0, proc.stderr
        copies = list(folder.iterdir())
        assert len(copies) == 1 and copies[0].name.startswith("studybot-")
        assert copies[0].name.endswith(".tar.gz")
        uploads = tmp_path / "bot-packs"
        assert proc.stdout.strip() == f"backed up {db} and 0 pack(s) from {uploads} to {copies[0]}"
        restored = folder / "restored.sqlite3"
        assert studybot("db", "restore", str(copies[0]), "--db", str(restored)).returncode == 0
        assert studybot("db", "check", "--db", str(restored)).returncode == 0


def test_db_backup_that_cannot_be_written_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    assert studybot("console", "--db", str(db), stdin="/help\n").returncode == 0
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    proc = studybot("db", "backup", str(blocker / "copy.tar.gz"), "--db", str(db))
    assert proc.returncode == 1
    assert proc.stderr.startswith(
        f"studybot: cannot write the backup to {blocker / 'copy.tar.gz'}: "
    )
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if ".partial" in p.name) == []


def test_version_and_short_help() -> None:
    version = studybot("--version")
    assert version.returncode == 0 and version.stdout.startswith("studybot ")
    assert version.stdout.split()[1][0].isdigit()
    for args in (("-h",), ("db", "-h"), ("questions", "lint", "-h")):
        proc = studybot(*args)
        assert proc.returncode == 0, (args, proc.stderr)
        assert "Usage: studybot" in proc.stdout


def test_flags_are_not_shown_as_taking_a_value() -> None:
    for args in (("console", "--help"), ("questions", "check", "--help"), ("snippet", "run", "-h")):
        proc = studybot(*args)
        lines = [line for line in proc.stdout.splitlines() if "--json" in line]
        assert lines and all("<bool>" not in line for line in lines), (args, lines)
    for args in (("-h",), ("db", "check", "-h"), ("questions", "check", "--help")):
        proc = studybot(*args)
        [shown] = [line for line in proc.stdout.splitlines() if "--help" in line]
        assert "-h" in shown and "<bool>" not in shown, (args, shown)  # a flag, not a value


def test_doctor_checks_the_database_named_by_db(tmp_path: Path) -> None:
    db = tmp_path / "elsewhere.sqlite3"
    assert studybot("console", "--db", str(db), stdin="/help\n").returncode == 0
    proc = studybot("doctor", "--db", str(db))
    assert f"database: {db}: schema " in proc.stdout, proc.stdout


def test_run_without_a_platform_token_says_so_before_starting_anything(tmp_path: Path) -> None:
    """One line and exit 2, and no database or sandbox started for nothing."""
    import os
    import subprocess
    import sys

    env = {"PATH": os.environ.get("PATH", ""), "STUDYBOT_DB": str(tmp_path / "x.sqlite3")}
    for platform, needs in (("discord", "DISCORD_TOKEN"), ("slack", "SLACK_BOT_TOKEN")):
        proc = subprocess.run(
            [sys.executable, "-m", "bot", "run", "--platform", platform],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**env, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
            timeout=60,
            check=False,
        )
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and needs in proc.stderr, proc.stderr
        assert not (tmp_path / "x.sqlite3").exists()


def test_help_paragraphs_reflow_to_the_terminal_width() -> None:
    """Docstrings are wrapped in the source; help shows each paragraph as one reflowed line."""
    import os
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "bot", "questions", "check", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "60"},
        cwd=Path(__file__).resolve().parents[1],
        timeout=60,
        check=True,
    )
    lines = [line.strip(" │") for line in proc.stdout.splitlines()]
    text = " ".join(line for line in lines if line)
    assert (
        "exits 1 on any disagreement or broken exercise (or a pack that does not load) and 2"
        in text
    )
    # no line cut short in the middle of a paragraph (the old output ended one at "a pack")
    body = [line for line in lines if line and not line.startswith(("Usage", "╭", "╰", "-"))]
    assert not any(line.endswith("a pack") for line in body), body


def _export_after(console_script: str, tmp_path: Path) -> list[dict[str, str]]:
    """Play ``console_script`` in the console on a new database; the `scores export` rows."""
    import csv
    import io
    import subprocess
    import sys

    from tests.conftest import TEST_PACKS

    root = Path(__file__).resolve().parents[1]
    db = tmp_path / "s.sqlite3"
    subprocess.run(
        [sys.executable, "-m", "bot", "console", "--db", str(db), "--packs", str(TEST_PACKS)],
        input=console_script + "/quit\n", capture_output=True, text=True, cwd=root,
        timeout=120, check=True,
    )  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "scores", "export", "--csv", "--db", str(db)],
        capture_output=True, text=True, cwd=root, timeout=60, check=True,
    )  # fmt: skip
    refused = subprocess.run(
        [sys.executable, "-m", "bot", "scores", "export", "--db", str(db)],
        capture_output=True, text=True, cwd=root, timeout=60, check=False,
    )  # fmt: skip
    assert refused.returncode == 2 and "--csv" in refused.stderr
    return list(csv.DictReader(io.StringIO(proc.stdout)))


def test_scores_export_csv_has_every_member_best_first(tmp_path: Path) -> None:
    rows = _export_after(
        "/quiz mini --difficulty medium\n/answer A\n/as bob\n/answer B\n", tmp_path
    )
    assert [(r["member"], r["points"], r["answers"], r["correct"]) for r in rows][:2] == [
        ("bob", rows[0]["points"], "1", "1"),
        ("me", "0", "1", "0"),
    ]
    assert int(rows[0]["points"]) > 0 and rows[0]["current_streak"] == "1"


def test_scores_export_never_writes_a_formula(tmp_path: Path) -> None:
    """Display names that a spreadsheet would run (OWASP CSV injection) come out as text."""
    from bot.text import spreadsheet_cell

    names = ["=HYPERLINK(evil)", "+1+1", "-2"]  # the console drops quotes and a leading @
    rows = _export_after(
        "/quiz mini --difficulty medium\n" + "".join(f"/as {n}\n/answer A\n" for n in names),
        tmp_path,
    )
    shown = {r["member"] for r in rows}
    assert {"'" + n.lower() for n in names} <= {s.lower() for s in shown}, shown
    assert not any(r["member"].startswith(("=", "+", "-", "@")) for r in rows)
    assert all(r["points"].lstrip("-").isdigit() for r in rows)  # numbers stay numbers
    assert [spreadsheet_cell(v) for v in ("@SUM(A1)", "\tx", "\r=1", "ok", -3)] == [
        "'@SUM(A1)", "'\tx", "'\r=1", "ok", -3,
    ]  # fmt: skip


SHARD_REFUSALS = [
    (
        ["--shards", "0-3"],
        {},
        "--shards needs --shard-count, the number of shards across all processes (the same in "
        "each), e.g. --shards 0-3 with --shard-count 8",
    ),
    (
        ["--shards", "0-8", "--shard-count", "8"],
        {},
        "--shards: shard 8 is out of range: with a shard count of 8 the shards are 0 to 7",
    ),
    (
        ["--shards", "first", "--shard-count", "8"],
        {},
        "--shards: expected shard ids, e.g. 0-3, 0,2,5 or 3; got 'first'",
    ),
    (
        ["--shards", "3-1", "--shard-count", "8"],
        {},
        "--shards: the range 3-1 runs backwards; write 1-3",
    ),
    (  # the option is checked against the count from the environment
        ["--shards", "2"],
        {"DISCORD_SHARD_COUNT": "2"},
        "--shards: shard 2 is out of range: with a shard count of 2 the shards are 0 to 1",
    ),
    (
        [],
        {"DISCORD_SHARDS": "5", "DISCORD_SHARD_COUNT": "4"},
        "studybot: invalid settings: DISCORD_SHARDS: shard 5 is out of range: with a shard "
        "count of 4 the shards are 0 to 3",
    ),
    (
        ["--platform", "console", "--shards", "0", "--shard-count", "2"],
        {},
        "--shards: only the Discord adapter runs shards; add --platform discord (or set "
        "STUDYBOT_PLATFORM=discord)",
    ),
]


@pytest.mark.parametrize(
    ("args", "env", "message"),
    SHARD_REFUSALS,
    ids=["no-count", "past-count", "not-ids", "backwards", "env-count", "env-only", "console"],
)
def test_run_refuses_a_bad_shard_range_before_starting_anything(
    tmp_path: Path, args: list[str], env: dict[str, str], message: str
) -> None:
    db = tmp_path / "x.sqlite3"
    settings = {"STUDYBOT_PLATFORM": "discord", "DISCORD_TOKEN": "t", "STUDYBOT_DB": str(db)}
    proc = studybot("run", *args, env=settings | env)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [message]
    assert not db.exists()


def test_run_refuses_a_shard_count_below_one(tmp_path: Path) -> None:
    db = tmp_path / "x.sqlite3"
    env = {"STUDYBOT_PLATFORM": "discord", "DISCORD_TOKEN": "t", "STUDYBOT_DB": str(db)}
    proc = studybot("run", "--shards", "0", "--shard-count", "0", env=env)
    assert proc.returncode == 2
    assert "Invalid value for '--shard-count'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not db.exists()


async def test_run_with_shard_options_connects_only_those_shards(tmp_path: Path) -> None:
    """``--shards 1 --shard-count 2`` (over the environment's 0 of 4): one gateway connection
    as shard [1, 2], holding only the guild on shard 1; SIGTERM still stops it cleanly."""
    from tests.fakes.discord_api import FakeDiscord

    async with FakeDiscord() as fake:
        fake.add_guild("Even", shard=(0, 2))
        odd = fake.add_guild("Odd", shard=(1, 2))
        env = {k: v for k, v in os.environ.items() if not k.startswith(PLATFORM_PREFIXES)}
        env.update(
            STUDYBOT_PLATFORM="discord",
            DISCORD_TOKEN=fake.token,
            DISCORD_API_BASE=fake.api_base,
            DISCORD_GATEWAY_URL=fake.gateway_url,
            DISCORD_SHARDS="0",
            DISCORD_SHARD_COUNT="4",
            STUDYBOT_DB=str(tmp_path / "bot.sqlite3"),
            STUDYBOT_PACKS=str(TEST_PACKS),
            SANDBOX_ENABLED="false",
        )
        proc = await asyncio.create_subprocess_exec(
            *[sys.executable, "-m", "bot", "run", "--shards", "1", "--shard-count", "2"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            session = await fake.gateway.wait_for_session(60)
            assert session.shard == (1, 2)
            created = [f["d"]["id"] for f in session.sent if f["t"] == "GUILD_CREATE"]
            assert created == [str(odd.id)]
            assert [s.shard for s in fake.gateway.history] == [(1, 2)]
            proc.send_signal(signal.SIGTERM)
            _, stderr = await asyncio.wait_for(proc.communicate(), 30)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    assert proc.returncode == 0, stderr.decode()


# --- `studybot run` on the console: a terminal, or a clear refusal ----------------------------


def test_run_on_the_console_without_a_terminal_refuses_in_one_line(tmp_path: Path) -> None:
    """A container set up from `.env.example` (console, stdin not a terminal) used to print
    nothing and exit 0: under `restart: unless-stopped`, a quiet restart loop."""
    db = tmp_path / "r.sqlite3"
    for args, env in (
        (["--db", str(db)], {"STUDYBOT_PLATFORM": "console"}),
        (["--db", str(db)], {}),  # the default platform
        (["--platform", "console", "--db", str(db)], {}),
    ):
        proc = studybot("run", *args, env={"STUDYBOT_PACKS": str(TEST_PACKS), **env})
        assert proc.returncode == 2, proc.stdout + proc.stderr
        (line,) = proc.stderr.splitlines()
        assert line.startswith("studybot: the console platform needs a terminal"), line
        assert "STUDYBOT_PLATFORM=discord" in line and "studybot console" in line, line
        assert proc.stdout == ""
        assert not db.exists()


def test_run_on_the_console_in_a_terminal_chats(tmp_path: Path) -> None:
    """With a terminal (a pty here), `run` is still the console, on the file --db names."""
    import os
    import pty
    import select
    import time

    db = tmp_path / "r.sqlite3"
    env = {k: v for k, v in os.environ.items() if not k.startswith(PLATFORM_PREFIXES)}
    env |= {"STUDYBOT_PACKS": str(TEST_PACKS), "SANDBOX_ENABLED": "false", "TERM": "dumb"}
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.chdir(ROOT)
        os.execve(sys.executable, [sys.executable, "-m", "bot", "run", "--db", str(db)], env)
    out, asked, deadline = b"", False, time.monotonic() + 60
    try:
        while time.monotonic() < deadline and b"Mini pack" not in out:
            if select.select([fd], [], [], 0.5)[0]:
                chunk = os.read(fd, 65536)
                out += chunk
                if b"\x1b[6n" in chunk:  # prompt_toolkit asks where the cursor is
                    os.write(fd, b"\x1b[1;1R")
            if not asked and b">" in out:
                os.write(fd, b"/pack list\r")
                asked = True
        os.write(fd, b"/quit\r")
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    assert b"Mini pack" in out, out[-2000:]
    assert os.waitstatus_to_exitcode(status) == 0
    assert db.exists()


def test_run_takes_db_like_every_other_command(tmp_path: Path) -> None:
    """`run --db FILE` opens FILE (here Discord, which cannot connect: the file exists all
    the same, the default ./studybot.sqlite3 is not touched)."""
    db = tmp_path / "elsewhere.sqlite3"
    proc = studybot(
        "run", "--platform", "discord", "--db", str(db),
        env={
            "DISCORD_TOKEN": "MTA4.abcdef." + "x" * 38,
            "DISCORD_API_BASE": "http://127.0.0.1:9/api/v10",  # nothing listens on port 9
            "SANDBOX_ENABLED": "false",
        },
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert db.exists()


def test_messages_name_files_relative_to_where_the_user_stands(tmp_path: Path) -> None:
    """Paths given in full (or from STUDYBOT_DB) are shown as the user would type them."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name in ("DATABASE_URL", "STUDYBOT_DB", "STUDYBOT_PACKS"):
        env.pop(name, None)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "bot", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=tmp_path,
            env=env,
        )

    db = tmp_path / "group.sqlite3"
    missing = run("db", "backup", str(tmp_path / "out.tar.gz"), "--db", str(db))
    assert missing.returncode == 1
    assert missing.stderr.strip() == "no database at group.sqlite3"
    sqlite3.connect(db).close()
    done = run("db", "backup", str(tmp_path / "out.tar.gz"), "--db", str(db))
    assert str(tmp_path) not in done.stdout + done.stderr
    assert done.stdout.strip().endswith(" to out.tar.gz"), done.stdout + done.stderr
