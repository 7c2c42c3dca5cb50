"""The fork server works for any jail uid, not only 65534 (found while testing issue 27's 13th).

C read its uid after ``unshare(CLONE_NEWUSER)``, where nothing is mapped yet and every uid reads
as the overflow uid 65534, so it mapped 65534: right by accident for the default jail uid, and
refused by the kernel for any other (a root manager's ``jail_uid``, or a non-root bot's own uid).
Every child then died before its hello, and every run fell back to a single-use jail.
"""

from __future__ import annotations

import pytest

from bot.sandbox import Sandbox
from bot.sandbox.result import Outcome
from tests.sandbox.sandbox_helpers import sandbox_config

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]


async def test_a_fork_server_child_runs_as_a_jail_uid_other_than_65534() -> None:
    config = sandbox_config(preload=(), jail_uid=61999, jail_gid=61998, forks_ahead=1)
    async with Sandbox(config) as sb:
        assert sb.available, sb.unavailable_reason
        await sb.wait_warm(1, within=60)
        r = await sb.run("import os\nprint(os.getuid(), os.getgid(), os.getpid())\n")
        assert (r.outcome, r.stdout) == (Outcome.OK, "61999 61998 2\n"), r
        status = await sb.status()
        assert status["cold_starts"] == 0, status  # a fork-server child ran it
