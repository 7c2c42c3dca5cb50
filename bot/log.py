"""Logging set-up: one ``get_logger(__name__)`` per module, text or JSON lines on stderr.

Secrets never reach a log line because they are ``SecretStr`` everywhere; as a second line of
defence the formatter masks any configured secret value wherever it would appear in a finished
line: the message, an extra field or a traceback.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import IO, Literal

__all__ = ["configure_logging", "get_logger", "logs_as_json"]

_STANDARD_ATTRS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message",
    "asctime",
}


def get_logger(name: str) -> logging.Logger:
    return logging.getLogger(name)


class _Redacting(logging.Formatter):
    """Wraps a formatter; masks every known secret in the finished line, traceback included."""

    def __init__(self, inner: logging.Formatter, secrets: Iterable[str]) -> None:
        super().__init__()
        self._inner = inner
        self.is_json = isinstance(inner, JsonFormatter)
        self._secrets = tuple(s for s in secrets if len(s) >= 6)

    def format(self, record: logging.LogRecord) -> str:
        line = self._inner.format(record)
        for secret in self._secrets:
            line = line.replace(secret, "**********")
        return line


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
    stream: IO[str] | None = None,
) -> None:
    handler = logging.StreamHandler(stream or sys.stderr)
    inner: logging.Formatter
    if fmt == "json":
        inner = JsonFormatter()
    else:
        inner = logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s", "%H:%M:%S")
    handler.setFormatter(_Redacting(inner, secrets))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # Chatty third-party loggers stay at WARNING unless we are debugging.
    for noisy in ("discord", "slack_bolt", "slack_sdk", "aiosqlite", "asyncio"):
        logging.getLogger(noisy).setLevel(level if level == "DEBUG" else "WARNING")


def logs_as_json() -> bool:
    """Whether :func:`configure_logging` chose JSON lines, so a fatal error can be one too."""
    return any(
        isinstance(handler.formatter, _Redacting) and handler.formatter.is_json
        for handler in logging.getLogger().handlers
    )
