"""Helpers shared by the benchmarks (imported as ``bench.common``, the repo root on the path)."""

from __future__ import annotations

import platform
from datetime import UTC, datetime


def machine_line() -> str:
    """The machine, Python and date a benchmark's figures were measured on (printed first)."""
    return (
        f"machine: {platform.machine()} {platform.processor() or ''} "
        f"python {platform.python_version()}  date: {datetime.now(UTC):%Y-%m-%d}"
    )
