"""The bot's side of sandbox hosts (``SANDBOX_URLS``): route each run, fail over, never run twice.

:class:`RemoteSandbox` has the shape of :class:`Sandbox` (``available``, ``run``...), so the
bot does not care where snippets run. Each run goes to the reachable host with the fewest runs in
flight (ours, plus what its ``/healthz`` last said). Failing over is safe only while nothing can
have run:

- the connection was refused, or the host answered "busy" or "unavailable": nothing ran, so the
  next host is tried;
- the host went away **after** the request was sent: the snippet may have run, and running it
  again elsewhere could do its work twice, so the member gets a clear message to run it again
  (:class:`SandboxUnavailable`), and the host is marked down.

Hosts marked down are probed again in the background every few seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from bot.log import get_logger
from bot.sandbox.errors import SandboxBusy, SandboxUnavailable, SnippetRejected
from bot.sandbox.exercise import ExerciseJob
from bot.sandbox.result import RunResult
from bot.sandbox.validate import Snippet, validate_snippet

__all__ = ["LOST_RUN", "RemoteSandbox"]

log = get_logger(__name__)

LOST_RUN = (
    "the sandbox host running your snippet went away before it answered; "
    "its output is lost, so run it again"
)
_PROBE_EVERY = 3.0


@dataclass(slots=True)
class _Host:
    url: str
    up: bool = False
    in_flight: int = 0
    reported_load: int = 0
    reason: str = "not probed yet"
    runs: int = field(default=0)

    @property
    def load(self) -> int:
        return self.in_flight + self.reported_load


class RemoteSandbox:
    """Runs snippets on sandbox services (``studybot sandbox serve``); see the module docstring."""

    def __init__(
        self, urls: list[str], token: str, *, timeout: float = 10.0, max_bytes: int = 65536
    ) -> None:
        if not urls:
            raise ValueError("RemoteSandbox needs at least one URL")
        self.hosts = [_Host(u.rstrip("/")) for u in urls]
        self._token = token
        self._timeout = timeout
        self._max_bytes = max_bytes
        self._session: aiohttp.ClientSession | None = None
        self._prober: asyncio.Task[None] | None = None

    @property
    def available(self) -> bool:
        return any(h.up for h in self.hosts)

    @property
    def unavailable_reason(self) -> str | None:
        if self.available:
            return None
        return "no sandbox host is reachable: " + "; ".join(
            f"{h.url}: {h.reason}" for h in self.hosts
        )

    async def start(self) -> None:
        self._session = aiohttp.ClientSession(
            headers={"Authorization": f"Bearer {self._token}"},
            timeout=aiohttp.ClientTimeout(total=None, connect=3),
        )
        await asyncio.gather(*(self._probe(h) for h in self.hosts))
        self._prober = asyncio.create_task(self._probe_forever())

    async def __aenter__(self) -> RemoteSandbox:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _probe(self, host: _Host) -> None:
        assert self._session is not None
        try:
            async with self._session.get(
                f"{host.url}/healthz", timeout=aiohttp.ClientTimeout(total=3)
            ) as response:
                body: Any = await response.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            host.up, host.reason = False, f"unreachable ({type(exc).__name__})"
            return
        host.up = bool(isinstance(body, dict) and body.get("available"))
        status = body.get("status") if isinstance(body, dict) else None
        if isinstance(status, dict):
            host.reported_load = int(status.get("running", 0)) + int(status.get("queued", 0))
        host.reason = "" if host.up else str((body or {}).get("reason") or "unavailable")

    async def _probe_forever(self) -> None:
        while True:
            await asyncio.sleep(_PROBE_EVERY)
            await asyncio.gather(*(self._probe(h) for h in self.hosts))

    async def run(
        self,
        code: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109
        graph: tuple[str, ...] | None = None,
        background: bool = False,
        exercise: ExerciseJob | None = None,
    ) -> RunResult:
        """Run ``code`` on the least-loaded host; see the module docstring for failing over.

        ``background`` (pack checks) goes with the request: the host gives it a low priority."""
        text = code if isinstance(code, Snippet) else validate_snippet(code, self._max_bytes)
        if self._session is None:
            raise SandboxUnavailable("the remote sandbox is not started")
        payload: dict[str, Any] = {"code": text, "timeout": timeout}
        if graph is not None:
            payload["graph"] = list(graph)
        if background:
            payload["background"] = True
        if exercise is not None:
            payload["exercise"] = exercise.to_wire()
        busy: list[str] = []
        for host in sorted((h for h in self.hosts if h.up), key=lambda h: h.load):
            outcome = await self._try(host, payload)
            if isinstance(outcome, RunResult):
                return outcome
            busy.append(outcome)
        if busy and all(b.startswith("busy") for b in busy):
            raise SandboxBusy(busy[0].removeprefix("busy: "))
        raise SandboxUnavailable(self.unavailable_reason or "; ".join(busy) or "no host took it")

    async def _try(self, host: _Host, payload: dict[str, Any]) -> RunResult | str:
        """The result, or why this host did not run it (then the next may)."""
        assert self._session is not None
        host.in_flight += 1
        sent = False
        try:
            # The whole answer within the run's limits and a margin for the queue and the wire.
            limit = aiohttp.ClientTimeout(total=3 * self._timeout + 30, connect=3)
            async with self._session.post(
                f"{host.url}/run", json=payload, timeout=limit
            ) as response:
                sent = True
                body: Any = await response.json(content_type=None)
                status = response.status
        except aiohttp.ClientConnectorError as exc:
            host.up, host.reason = False, f"unreachable ({exc.os_error or exc})"
            return f"unreachable: {host.url}"
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            host.up, host.reason = False, f"lost during a run ({type(exc).__name__})"
            log.warning("sandbox host %s lost a run (sent=%s): %r", host.url, sent, exc)
            raise SandboxUnavailable(LOST_RUN) from None
        finally:
            host.in_flight -= 1
        if status == 200 and isinstance(body, dict) and isinstance(body.get("result"), dict):
            host.runs += 1
            return RunResult.from_wire(body["result"])
        error = str(body.get("error") if isinstance(body, dict) else body)[:300]
        if status == 422:
            raise SnippetRejected(error)
        if status == 401:
            host.up, host.reason = False, "refused our SANDBOX_TOKEN"
            return f"token refused: {host.url}"
        if status == 503 and isinstance(body, dict) and body.get("busy"):
            return f"busy: {error}"
        host.up, host.reason = False, f"HTTP {status}: {error}"
        return f"unavailable: {host.url}: {error}"

    async def status(self) -> dict[str, Any]:
        return {
            "hosts": [
                {"url": h.url, "up": h.up, "in_flight": h.in_flight, "runs": h.runs,
                 "reason": h.reason}
                for h in self.hosts
            ]
        }  # fmt: skip

    async def close(self) -> None:
        if self._prober is not None:
            self._prober.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._prober
        if self._session is not None:
            await self._session.close()
            self._session = None
