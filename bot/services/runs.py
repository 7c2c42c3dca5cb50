"""Snippet runs (``/run``): the checks before a run, the rate limit, the sandbox call, the reply.

The sandbox is reached only through a :class:`SnippetRunner`, built in :mod:`bot.app`; a runner
still warming up at start-up is awaited by the first run rather than refused.
"""

from __future__ import annotations

import asyncio
import time

from bot.core.clock import Clock
from bot.core.errors import BadInput, Unavailable
from bot.core.graphs import graph_message
from bot.core.messages import Message
from bot.core.models import ChatContext
from bot.core.snippets import RunGate, RunLimits, SnippetRunner, result_message
from bot.log import get_logger
from bot.metrics import Metrics
from bot.sandbox.errors import SandboxBusy, SandboxUnavailable, SnippetRejected
from bot.sandbox.exercise import ExerciseJob
from bot.sandbox.result import RunResult
from bot.sandbox.validate import validate_snippet

__all__ = ["SnippetRuns"]

log = get_logger(__name__)

#: The longest ``--of`` name drawn: the names travel in chat metadata (a Slack modal's holds
#: 3,000 characters), and a tensor's name is never this long in code a member wants drawn.
MAX_GRAPH_NAME = 100


class SnippetRuns:
    """Members' snippet runs through the sandbox, rate-limited per member."""

    def __init__(
        self,
        runner: SnippetRunner | None,
        clock: Clock,
        *,
        runner_starting: asyncio.Future[None] | None = None,
        run_limits: RunLimits | None = None,
        metrics: Metrics | None = None,
        gate: RunGate | None = None,
    ) -> None:
        self._runner = runner
        self._runner_starting = runner_starting
        self.run_limits = run_limits or RunLimits()
        self._metrics = metrics
        # Shared with pack uploads, whose code checks count against the uploader's limits.
        self._run_gate = gate or RunGate(clock, self.run_limits.per_minute)

    async def drain(self, timeout: float) -> bool:  # noqa: ASYNC109
        """Give runs in flight ``timeout`` seconds; False if some were still going."""
        try:
            await asyncio.wait_for(self._run_gate.idle(), timeout)
        except TimeoutError:
            log.warning("stopping with snippet runs still in flight; they will be cancelled")
            return False
        return True

    @property
    def longest(self) -> float | None:
        """The longest wall clock a run may have here (``SANDBOX_TIMEOUT``: the sandbox cuts
        any longer one down to it); None when the runner does not say."""
        config = getattr(self._runner, "config", None)
        timeout = getattr(config, "timeout", None)
        return float(timeout) if isinstance(timeout, int | float) else None

    def check(self) -> None:
        """Raise :class:`Unavailable` now if ``/run`` cannot work, so an adapter can say so
        before a member types their code (a sandbox still starting counts as working)."""
        if self._runner is None:
            raise Unavailable("Running snippets is turned off on this bot.")
        starting = self._runner_starting is not None and not self._runner_starting.done()
        if not starting and not self._runner.available:
            raise Unavailable(
                f"Running snippets is unavailable on this host: {self._runner.unavailable_reason}."
            )

    async def run(self, ctx: ChatContext, code: str) -> Message:
        """Run a member's snippet in the sandbox; the reply is public, refusals are private.

        Refused before running: no sandbox on this host, too big / NUL bytes / not UTF-8, empty,
        more than ``per_minute`` runs in the last minute, or a run of theirs still going.
        """
        result = await self._execute(ctx, code, None)
        return result_message(result, self.run_limits, ctx.member_name)

    def check_graph(self, of: tuple[str, ...]) -> None:
        """Raise :class:`BadInput` for ``--of`` names a graph cannot draw.

        Called again by an adapter before it opens an editor, so the member hears "At most 4
        tensors" at once (a Slack modal would carry the names in its 3,000-character
        metadata, and fail to open on five long ones).
        """
        for name in of:
            if name != "*" and not name.isidentifier():
                raise BadInput(f"`{name[:40]}` is not a variable name (use --of NAME[,NAME])")
            if len(name) > MAX_GRAPH_NAME:
                raise BadInput(
                    f"`{name[:40]}…` is too long for a variable name to draw "
                    f"(at most {MAX_GRAPH_NAME} characters)."
                )
        if len(of) > 4:
            raise BadInput("At most 4 tensors side by side (--of a,b,c,d).")

    async def graph(self, ctx: ChatContext, code: str, of: tuple[str, ...] = ()) -> Message:
        """Run a snippet and draw the autograd graph behind ``of`` (default: its last result;
        ``("*",)``: every result that is no other one's intermediate, side by side).

        The same checks and limits as :meth:`run`; a graph counts as one run.
        """
        self.check_graph(of)
        result = await self._execute(ctx, code, of)
        return graph_message(result, self.run_limits, ctx.member_name)

    async def exercise_run(
        self,
        ctx: ChatContext | None,
        code: str,
        spec: ExerciseJob,
        timeout: float,  # noqa: ASYNC109
    ) -> RunResult:
        """An exercise's checks against ``code``: a member's solution (``ctx``: the same checks
        and rate limit as /run) or the reference (``ctx=None``: no limit, for the bot)."""
        if ctx is not None:
            return await self._execute(ctx, code, None, exercise=spec, timeout=timeout)
        if self._runner_starting is not None:
            await self._runner_starting
            self._runner_starting = None
        self.check()
        assert self._runner is not None
        return await self._runner.run(code, timeout=timeout, exercise=spec)

    async def _execute(
        self,
        ctx: ChatContext,
        code: str,
        graph: tuple[str, ...] | None,
        *,
        exercise: ExerciseJob | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> RunResult:
        if self._runner_starting is not None:
            await self._runner_starting  # the pool warms in the background at start-up
            self._runner_starting = None
        self.check()
        runner = self._runner
        assert runner is not None  # check() said so
        try:
            text = validate_snippet(code, self.run_limits.max_bytes)
        except SnippetRejected as exc:
            raise BadInput(f"That snippet can't run: {exc.reason}.") from None
        if not text.strip():
            raise BadInput("There is no code to run.")
        with self._run_gate.admit((ctx.platform, ctx.workspace, ctx.member)):
            began = time.perf_counter()
            try:
                if exercise is not None:
                    result = await runner.run(text, timeout=timeout, exercise=exercise)
                elif graph is None:
                    result = await runner.run(text)
                else:
                    result = await runner.run(text, graph=graph)
            except SandboxBusy as exc:
                log.info("snippet by %s not run: %s", ctx.member, exc.reason)
                raise Unavailable(
                    "The sandbox is busy with other snippets right now; try again in a moment."
                ) from None
            except SandboxUnavailable as exc:
                log.error("sandbox failed during a run: %s", exc.reason)
                raise Unavailable(f"The sandbox is not available: {exc.reason}.") from None
        if self._metrics is not None:
            self._metrics.runs.labels(outcome=result.outcome.value).inc()
            # As the member waits: queueing, a cold start and the pipes included.
            self._metrics.run_seconds.observe(time.perf_counter() - began)
        log.info(
            "snippet run by %s in %s/%s: %s in %.0f ms",
            ctx.member,
            ctx.platform,
            ctx.workspace,
            result.outcome.value,
            result.duration_ms,
        )
        return result
