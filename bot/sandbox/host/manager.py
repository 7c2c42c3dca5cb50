"""The sandbox manager: ``python -m bot.sandbox.host.manager``, started by the bot with ``env={}``.

It holds no secrets (its environment is empty and its only input is a :class:`SandboxConfig`),
never imports torch, and is the only process that launches jails. Protocol: JSON lines.

- stdin, first line: ``{"op": "config", "config": {...}}``; then requests
  ``{"id": 1, "op": "run", "code": "...", "timeout": 5.0}``, ``{"id": 2, "op": "status"}``,
  ``{"op": "shutdown"}``. EOF on stdin means the bot is gone: clean up and exit.
- stdout: ``{"op": "hello", "available": true|false, "reason": "..."}`` once, then
  ``{"id": 1, "result": {...}}`` or ``{"id": 1, "error": "..."}`` per request.
- stderr: log lines.

Start-up order matters: probe, compute the layout and stage unreachable paths (which unshares a
private mount namespace and so must happen before any thread exists), find cgroups, and only
then start the event loop, smoke-test one jail and report ``hello``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import dataclasses
import json
import logging
import os
import signal
import sys
from typing import Any

from bot.log import configure_logging, get_logger
from bot.sandbox.config import SandboxConfig
from bot.sandbox.host.bundled import BWRAP
from bot.sandbox.host.cgroups import CgroupError, CgroupRoot, Limits, detect
from bot.sandbox.host.jail import Jail, JailEnv, JailError, worker_source
from bot.sandbox.host.layout import Layout, compute_layout, jail_path
from bot.sandbox.host.mountns import FILES, Staging, StagingError, stage_unreachable
from bot.sandbox.host.pidns import JailPidNamespace, PidNamespaceError
from bot.sandbox.host.pool import Pool, PoolBusy
from bot.sandbox.host.probe import bwrap_plan, probe_host
from bot.sandbox.inside.tidy import Paths
from bot.sandbox.result import RunResult

__all__ = ["main", "prepare"]

log = get_logger("bot.sandbox.host.manager")

_LINE_LIMIT = 16 * 1024 * 1024  # requests: snippets of at most RUN_MAX_BYTES
_PR_SET_PDEATHSIG = 1
_PREFIXES = (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
_STOP_WITHIN = 30  # seconds for a clean stop on SIGTERM before SIGALRM ends us


def _read_first_line(fd: int) -> bytes:
    """Byte by byte, so nothing after the config line is swallowed by a buffer."""
    data = bytearray()
    while not data.endswith(b"\n"):
        b = os.read(fd, 1)
        if not b:
            break
        data += b
    return bytes(data)


def prepare(config: SandboxConfig) -> tuple[JailEnv | None, str, Staging | None]:
    """(environment for jails, "") or (None, reason). Synchronous and thread-free on purpose."""
    probe = probe_host(config)
    if not probe.ok:
        return None, probe.reason, None
    root = os.geteuid() == 0
    run_as = (config.jail_uid, config.jail_gid) if root else None
    uid, gid = run_as if run_as else (os.getuid(), os.getgid())
    if uid == 0:
        return None, "refusing to run jails as uid 0 (set a non-zero jail uid)", None
    python = config.python_path
    if python == sys.executable:
        layout = compute_layout(python=python)
        paths = seen_in_jail(Paths.of(sys.path, _PREFIXES))
    else:
        layout, paths = _foreign(python)
    plan = bwrap_plan(probe.bwrap, run_as)
    if not plan.ok:
        return None, plan.message, None
    staging: Staging | None = None
    try:
        binds, staging = stage_unreachable(list(layout.binds), uid, gid, plan.copy)
    except StagingError as exc:
        return None, f"interpreter not reachable for the jail: {exc}", None
    layout = Layout(tuple(binds), layout.symlinks, layout.hidden, layout.python)
    bwrap = probe.bwrap
    if plan.copy and staging is not None:
        bwrap = os.path.join(staging.root, FILES, BWRAP)
        log.info("bwrap: %s", plan.message)
    limits = Limits(
        memory_bytes=config.memory_mb * 1024 * 1024,
        pids=config.pids,
        cpu_quota=config.cpu_quota,
    )
    try:
        cgroups: CgroupRoot = detect(limits, parent=config.cgroup_parent or None)
    except (CgroupError, OSError) as exc:
        if staging:
            staging.close()
        return None, str(exc), None
    env = JailEnv(config, bwrap, layout, cgroups, worker_source(), run_as, _pidns(root), paths)
    return env, "", staging


def _pidns(root: bool) -> JailPidNamespace | None:
    """The jails' own pid namespace (pidns.py), last: its init must be our first child after."""
    if not root:
        log.info("jails share the manager's pid namespace (a namespace of their own needs root)")
        return None
    try:
        return JailPidNamespace.create()
    except PidNamespaceError as exc:
        log.warning("jails share the manager's pid namespace: %s", exc)
        return None


def _foreign(python: str) -> tuple[Layout, Paths]:
    """Layout for an interpreter other than ours: ask it for its own prefixes and path."""
    import subprocess

    out = subprocess.run(  # noqa: S603 - an operator-configured interpreter path
        [
            python,
            "-I",
            "-c",
            "import json,sys;print(json.dumps([sys.prefix,sys.path,"
            "[sys.prefix,sys.base_prefix,sys.exec_prefix,sys.base_exec_prefix]]))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={},
    ).stdout
    prefix, path, prefixes = json.loads(out)
    layout = compute_layout(python=python, path=path, prefix=prefix)
    return layout, seen_in_jail(Paths.of(path, prefixes))


def seen_in_jail(paths: Paths) -> Paths:
    """``paths`` as they are spelled on the host and inside the jail: an interpreter under the
    host's /tmp is bound elsewhere in the jail (:func:`jail_path`), and a snippet that prints
    a path prints the jail's spelling."""
    return Paths(
        [*paths.site_dirs, *(jail_path(d) for d in paths.site_dirs)],
        [*paths.python_dirs, *(jail_path(d) for d in paths.python_dirs)],
    )


def hide_paths(result: RunResult, paths: Paths) -> RunResult:
    """``result`` with the host's interpreter paths hidden in every text a member is shown.

    The jail already shapes its tracebacks (``inside/tidy.py``), but its output is untrusted
    and a snippet may print a path itself; this pass, on the host, is the one that counts.
    """
    return dataclasses.replace(
        result,
        stdout=paths.hide(result.stdout),
        stderr=paths.hide(result.stderr),
        graph_error=None if result.graph_error is None else paths.hide(result.graph_error),
    )


class Manager:
    def __init__(self, env: JailEnv | None, reason: str) -> None:
        self.env = env
        self.reason = reason
        self.pool: Pool | None = None
        self._out: asyncio.StreamWriter | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def send(self, message: dict[str, Any]) -> None:
        assert self._out is not None
        self._out.write(json.dumps(message).encode() + b"\n")
        await self._out.drain()

    async def smoke_test(self) -> None:
        """Start one jail without preloads and run ``pass``: proves every layer works here."""
        assert self.env is not None
        jail = Jail(self.env, preload=())
        try:
            await jail.start()
            result = await jail.run("print('ok')", 10)
        except JailError as exc:
            self.reason = f"bwrap cannot create a jail here: {exc}"
            return
        finally:
            await jail.destroy()
        if result.stdout.strip() != "ok":
            self.reason = f"jail smoke test failed: {result.outcome} {result.stderr.strip()[-300:]}"

    @staticmethod
    def _stop(reader: asyncio.StreamReader) -> None:
        log.info("stopping on SIGTERM")
        signal.alarm(_STOP_WITHIN)
        reader.feed_eof()

    async def handle(self, request: dict[str, Any]) -> None:
        rid = request.get("id")
        op = request.get("op")
        try:
            if op == "status":
                status = self.pool.status() if self.pool else {}
                await self.send({"id": rid, "result": status})
            elif op == "run":
                if self.pool is None or self.env is None:
                    await self.send({"id": rid, "error": self.reason or "sandbox unavailable"})
                    return
                code = str(request.get("code", ""))
                timeout = self.env.config.clamp_timeout(request.get("timeout"))
                graph = request.get("graph")
                extra: dict[str, object] = {"graph": graph} if isinstance(graph, dict) else {}
                exercise = request.get("exercise")
                if isinstance(exercise, dict):
                    extra["exercise"] = exercise
                background = request.get("background") is True
                result = hide_paths(
                    await self.pool.run(code, timeout, extra, background=background),
                    self.env.paths,
                )
                await self.send({"id": rid, "result": result.to_wire()})
            else:
                await self.send({"id": rid, "error": f"unknown op {op!r}"})
        except PoolBusy as exc:
            log.info("run refused: %s", exc)
            await self.send({"id": rid, "error": str(exc), "busy": True})
        except JailError as exc:
            log.warning("run failed: %s", exc)
            await self.send({"id": rid, "error": f"sandbox failure: {exc}"})
        except Exception as exc:  # every request gets an answer, or its caller would wait forever
            log.exception("request %s failed unexpectedly", rid)
            await self.send({"id": rid, "error": f"sandbox failure: {type(exc).__name__}: {exc}"})

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_LINE_LIMIT)
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(0, "rb", buffering=0)
        )
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(1, "wb", buffering=0)
        )
        self._out = asyncio.StreamWriter(transport, protocol, None, loop)
        if self.env is not None:
            await self.smoke_test()
        available = self.env is not None and not self.reason
        if available and self.env is not None:
            self.pool = Pool(self.env)
            self.pool.start()
        else:
            log.warning("sandbox unavailable: %s", self.reason)
        await self.send({"op": "hello", "available": available, "reason": self.reason})
        # SIGTERM (the bot died: PR_SET_PDEATHSIG, or an operator) ends us like end of file:
        # every jail killed, cgroups removed. SIGALRM, default action, if that ever hangs.
        loop.add_signal_handler(signal.SIGTERM, self._stop, reader)
        try:
            while line := await reader.readline():
                try:
                    request = json.loads(line)
                except ValueError:
                    log.warning("ignoring a malformed request line")
                    continue
                if request.get("op") == "shutdown":
                    break
                task = asyncio.create_task(self.handle(request))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        finally:
            tasks = list(self._tasks)
            for task in tasks:
                task.cancel()
            # Let cancelled runs finish their own clean-up before the pool removes the rest.
            await asyncio.gather(*tasks, return_exceptions=True)
            if self.pool is not None:
                await self.pool.close()
            if self.env is not None:
                self.env.cgroups.close()


def _die_with_the_bot() -> None:
    """SIGTERM when the bot (our parent) dies, however it dies: at once, or gracefully in
    :meth:`Manager.serve`. If it died between the two ``getppid()`` calls, the second says so;
    if it died before this ran, the end of file on stdin stops us once we serve."""
    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:
        raise SystemExit(0)


def main() -> None:
    _die_with_the_bot()
    os.umask(0o077)
    line = _read_first_line(0)
    try:
        message = json.loads(line)
        config = SandboxConfig.from_json(message["config"])
    except (ValueError, KeyError, TypeError) as exc:
        sys.stderr.write(f"sandbox manager: bad config line: {exc}\n")
        raise SystemExit(2) from None
    configure_logging(str(message.get("log_level", "INFO")))  # the environment is always empty
    logging.getLogger("asyncio").setLevel(logging.WARNING)
    env, reason, staging = prepare(config)
    try:
        asyncio.run(Manager(env, reason).serve())
    finally:
        if env is not None and env.pidns is not None:
            env.pidns.close()  # nothing is left in it; if something were, it is killed now
        if staging is not None:
            staging.close()
        with contextlib.suppress(Exception):
            sys.stdout.flush()


if __name__ == "__main__":
    main()
