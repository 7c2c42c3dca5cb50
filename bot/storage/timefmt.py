"""Timestamps as sortable UTC text, the one format every table uses.

Text (not integers) keeps the database readable with the sqlite3 shell; a fixed width with a
``Z`` suffix keeps lexicographic order equal to time order, so range queries use indexes.
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["from_db", "from_db_opt", "to_db", "to_db_opt"]

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def to_db(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError(f"naive datetime {moment!r}: the database only stores aware times")
    return moment.astimezone(UTC).strftime(_FORMAT)


def to_db_opt(moment: datetime | None) -> str | None:
    return None if moment is None else to_db(moment)


def from_db(text: str) -> datetime:
    # fromisoformat reads exactly what to_db writes (the trailing Z included), ~40x faster
    # than strptime; it matters when thousands of post rows are read at 09:00.
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def from_db_opt(text: str | None) -> datetime | None:
    return None if text is None else from_db(text)
