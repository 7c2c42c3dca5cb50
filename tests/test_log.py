"""Log lines as an operator reads them: JSON when asked, and never a secret."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.log import configure_logging, get_logger

SECRET = "xoxb-1234567890-abcdefghij"


@pytest.fixture(autouse=True)
def _restore_root() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:], root.level = handlers, level


def test_json_lines_carry_level_logger_message_and_extras() -> None:
    out = io.StringIO()
    configure_logging("INFO", "json", stream=out)
    get_logger("bot.test").info("posted %s", "q1", extra={"channel": "general", "post_id": 7})
    line = json.loads(out.getvalue())
    assert line["level"] == "info" and line["logger"] == "bot.test"
    assert line["message"] == "posted q1"
    assert line["channel"] == "general" and line["post_id"] == 7
    assert line["time"].endswith("+00:00")


def test_a_secret_is_masked_in_messages_extras_and_tracebacks() -> None:
    out = io.StringIO()
    configure_logging("INFO", "json", secrets=[SECRET], stream=out)
    log = get_logger("bot.test")
    log.info("token is %s", SECRET, extra={"header": f"Bearer {SECRET}"})
    try:
        raise RuntimeError(f"request to https://api/?token={SECRET} failed")
    except RuntimeError:
        log.exception("calling the API failed")
    text = out.getvalue()
    assert SECRET not in text
    first, second = (json.loads(line) for line in text.splitlines())
    assert first["message"] == "token is **********"
    assert first["header"] == "Bearer **********"
    assert "token=**********" in second["exception"]


def test_text_format_is_one_readable_line() -> None:
    out = io.StringIO()
    configure_logging("WARNING", "text", secrets=[SECRET], stream=out)
    log = get_logger("bot.test")
    log.info("hidden at WARNING")
    log.warning("careful with %s", SECRET)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    assert lines[0].endswith("WARNING bot.test: careful with **********")


def test_a_fatal_start_up_error_is_a_json_line_too(tmp_path: Path) -> None:
    from tests.test_cli import studybot

    proc = studybot(
        "run",
        "--platform",
        "discord",
        env={
            "LOG_FORMAT": "json",
            "DISCORD_TOKEN": "MTA4.abcdef." + "x" * 38,
            "DISCORD_API_BASE": "http://127.0.0.1:9/api/v10",  # nothing listens on port 9
            "STUDYBOT_DB": str(tmp_path / "bot.sqlite3"),
            "SANDBOX_ENABLED": "false",
        },
    )
    assert proc.returncode == 2
    lines = [json.loads(line) for line in proc.stderr.splitlines()]  # every line is JSON
    assert lines[-1]["level"] == "critical"
    assert lines[-1]["message"].startswith("studybot: cannot reach Discord at http://127.0.0.1:9")
