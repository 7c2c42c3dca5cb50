"""Logging set-up: one ``get_logger(__name__)`` per module, text or JSON lines on stderr.

Secrets never reach a log line because they are ``SecretStr`` everywhere; as a second line of
defence the formatter masks any configured secret value that would appear in a message.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Literal

__all__ = ["configure_logging", "get_logger"]

_STANDARD_ATTRS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message",
    "asctime",
}


def get_logger(name: str) -> logging.Logger:
    return logging.getLogger(name)


class _Redactor(logging.Filter):
    """Replace any known secret value in a record's rendered message with ``**********``."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._secrets = tuple(s for s in secrets if len(s) >= 6)

    def filter(self, record: logging.LogRecord) -> bool:
        if self._secrets:
            message = record.getMessage()
            redacted = message
            for secret in self._secrets:
                redacted = redacted.replace(secret, "**********")
            if redacted != message:
                record.msg, record.args = redacted, None
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, extras, exception."""

    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRS and not key.startswith("_"):
                payload[key] = value if isinstance(value, (str, int, float, bool)) else str(value)
        if record.exc_info:
            payload["exception"] = self.formatException(record.exc_info)
        return json.dumps(payload, ensure_ascii=False)


def configure_logging(
    level: str = "INFO",
    fmt: Literal["text", "json"] = "text",
    secrets: Iterable[str] = (),
) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s", "%H:%M:%S")
        )
    handler.addFilter(_Redactor(secrets))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # Chatty third-party loggers stay at WARNING unless we are debugging.
    for noisy in ("discord", "slack_bolt", "slack_sdk", "aiosqlite", "asyncio"):
        logging.getLogger(noisy).setLevel(level if level == "DEBUG" else "WARNING")
