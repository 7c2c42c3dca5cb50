"""Platform ids are checked where they enter: a member or channel name with NUL or another
control character is refused with a clear message, and no later command fails, on SQLite and
PostgreSQL (PostgreSQL's ``text`` refuses NUL: a NUL that got as far as the database made
``/quiz`` answer "something went wrong")."""

from __future__ import annotations

import io
import json

import pytest

from bot.adapters.console import ConsoleAdapter
from bot.core.clock import SimulatedClock
from bot.services.bundle import Services


async def _session(service: Services, clock: SimulatedClock, *lines: str) -> list[str]:
    out = io.StringIO()
    console = ConsoleAdapter(service, clock, out=out, json_mode=True)
    await console.run(list(lines))
    return [str(json.loads(line)["text"]) for line in out.getvalue().splitlines()]


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"], indirect=True)
async def test_a_name_with_nul_is_refused_by_as_and_channel_and_nothing_breaks(
    service: Services, clock: SimulatedClock
) -> None:
    said = await _session(
        service, clock, "/as ann\x00ie", "/channel gen\x1beral", "/quiz mini", "/answer B"
    )
    assert said[0] == (
        "usage: /as NAME [--admin]: the name 'ann\\x00ie' holds a control character (NUL at "
        "position 4); ids and names are plain text"
    )
    assert said[1].startswith("usage: /channel NAME: the name 'gen\\x1beral' holds a control")
    assert "(\\x1b at position 4)" in said[1]
    assert not any("went wrong" in s for s in said)
    assert "you picked B" in said[-1] and "Streak: 1 day" in said[-1]  # as 'me', recorded
