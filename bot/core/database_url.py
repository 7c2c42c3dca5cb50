"""Database addresses, as settings, messages and the storage layer all read them: whether a
target is a PostgreSQL URL, and a URL with its password hidden for logs and messages.

Plain text functions, below the settings that validate ``DATABASE_URL`` and the storage that
connects to it.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

__all__ = ["is_postgres_url", "redact"]


def is_postgres_url(target: str | Path) -> bool:
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


def redact(url: str) -> str:
    """``url`` without its password, for logs and messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    netloc = f"{parts.username or ''}:***@{host}"
    return urlunsplit(parts._replace(netloc=netloc))
