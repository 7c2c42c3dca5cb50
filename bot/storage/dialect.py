"""The few SQL phrases the two engines spell differently, as one object per engine.

Everything else in the stores is the common dialect. These are the phrases that would
otherwise need an ``if engine`` at the call site: a list passed as one parameter (so that a
statement's text does not change with the list's length, and its plan is cached), and
substring search.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["POSTGRESQL", "SQLITE", "Dialect"]


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str

    def in_list(self, param: str = "?") -> str:
        """``IN`` over the list bound to ``param`` (pass :meth:`list_value` of the list)."""
        if self.name == "postgresql":
            return f"= ANY({param})"
        return f"IN (SELECT value FROM json_each({param}))"

    def ids_table(self, alias: str, param: str = "?") -> str:
        """A table of one integer column ``{alias}.value`` from the list bound to ``param``."""
        if self.name == "postgresql":
            return f"unnest(CAST({param} AS BIGINT[])) AS {alias}(value)"
        return f"json_each({param}) {alias}"

    def list_value(self, values: Sequence[Any]) -> Any:
        return list(values) if self.name == "postgresql" else json.dumps(list(values))

    def later(self, column: str, param: str = "?") -> str:
        """The later of a nullable UTC-text ``column`` and ``param`` (a mark never moves back)."""
        function = "greatest" if self.name == "postgresql" else "max"
        return f"{function}(coalesce({column}, ''), {param})"

    def for_update(self) -> str:
        """Lock the rows read inside a write (read, then written back: streaks, cards) against
        another process's transaction. SQLite's ``BEGIN IMMEDIATE`` already holds the file."""
        return " FOR UPDATE" if self.name == "postgresql" else ""

    def use_index(self, index: str) -> str:
        """Pin SQLite's plan to ``index`` (its planner guesses wrong on a skewed table);
        PostgreSQL plans from statistics and takes no hints."""
        return "" if self.name == "postgresql" else f"INDEXED BY {index}"

    def seconds_between(self, later: str, earlier: str) -> str:
        """The seconds from ``earlier`` to ``later``, two UTC-text columns, as a real number."""
        if self.name == "postgresql":
            span = f"CAST({later} AS timestamptz) - CAST({earlier} AS timestamptz)"
            return f"EXTRACT(EPOCH FROM ({span}))"
        return f"(julianday({later}) - julianday({earlier})) * 86400.0"

    def contains(self, haystack: str, needle: str) -> str:
        """Whether the text ``needle`` occurs in ``haystack`` (literally: no LIKE wildcards)."""
        function = "strpos" if self.name == "postgresql" else "instr"
        return f"{function}({haystack}, {needle}) > 0"


SQLITE = Dialect("sqlite")
POSTGRESQL = Dialect("postgresql")
