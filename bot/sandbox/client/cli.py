"""``studybot snippet run|graph FILE|- [--json] [--out DIR] ...``: one snippet through the sandbox.

``graph`` also walks and draws the autograd graph behind a tensor (``--of NAME[,NAME]``; default:
the last tensor the snippet assigned that has a ``grad_fn``). ``--out DIR`` writes the files the
run returned (figures, files the snippet wrote, the graph picture) there.

Mounted by :mod:`bot.cli` as ``app.add_typer(snippet_app, name="snippet")``. A snippet that fails
is still a result (exit 0); input refused before running exits 2 with one line on stderr; a host
that cannot isolate exits 3, also with one line. No tracebacks for any of these.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Annotated

import typer

from bot.sandbox.client import Sandbox
from bot.sandbox.config import SandboxConfig, SandboxSettings
from bot.sandbox.errors import SandboxUnavailable, SnippetRejected
from bot.sandbox.graph import graph_tree
from bot.sandbox.result import RunResult
from bot.sandbox.validate import validate_snippet

__all__ = [
    "EXIT_REFUSED",
    "EXIT_UNAVAILABLE",
    "read_snippet",
    "run_command",
    "sandbox_app",
    "snippet_app",
]

EXIT_REFUSED = 2
EXIT_UNAVAILABLE = 3

snippet_app = typer.Typer(help="Run Python snippets in the sandbox.", no_args_is_help=True)
sandbox_app = typer.Typer(help="Run the sandbox as a service for other bots.", no_args_is_help=True)


def read_snippet(file: str, max_bytes: int) -> str:
    """Read ``file`` (``-`` for stdin), reading at most one byte past the limit."""
    try:
        if file == "-":
            raw = sys.stdin.buffer.read(max_bytes + 1)
        else:
            with Path(file).open("rb") as fh:
                raw = fh.read(max_bytes + 1)
    except OSError as exc:
        raise SnippetRejected(f"cannot read {file}: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:
        raise SnippetRejected(f"snippet is larger than {max_bytes} bytes")
    return validate_snippet(raw, max_bytes)


# What a terminal would act on rather than show: C0 controls but tab and newline, DEL, C1,
# and bidi overrides. A snippet's output must not retitle or rewrite the operator's terminal.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _shown(text: str) -> str:
    """``text`` with every control character escaped (``\\x1b``), ending in a newline."""
    safe = _UNSAFE.sub(
        lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) <= 0xFF else f"\\u{ord(m[0]):04x}", text
    )
    return safe if safe.endswith("\n") else safe + "\n"


def _print_text(result: RunResult) -> None:
    if result.stdout:
        sys.stdout.write(_shown(result.stdout))
    if result.stderr:
        sys.stderr.write(_shown(result.stderr))
    parts = [f"[{result.outcome.value}]", f"exit_code={result.exit_code}"]
    if result.signal:
        parts.append(f"signal={result.signal}")
    parts.append(f"{result.duration_ms:.0f} ms")
    if result.truncated:
        parts.append("(output truncated)")
    sys.stderr.write(" ".join(parts) + "\n")


async def _run(
    config: SandboxConfig, code: str, wall: float | None, graph: tuple[str, ...] | None = None
) -> RunResult:
    # The command prints the reason itself (one line, exit 3); the client must not log it too.
    async with Sandbox(config, log_unavailable=False) as sandbox:
        if not sandbox.available:
            raise SandboxUnavailable(sandbox.unavailable_reason or "sandbox unavailable")
        # The CLI can write an SVG beside the PNG; chats show only the PNG.
        return await sandbox.run(code, timeout=wall, graph=graph, svg=graph is not None)


def _write_files(result: RunResult, out: Path | None) -> None:
    """Write the returned files into ``out``, flat (``plots/fig.png`` as ``plots_fig.png``;
    names are already ``[A-Za-z0-9._-]`` parts)."""
    if out is None:
        return
    out.mkdir(parents=True, exist_ok=True)
    for f in result.files:
        (out / f.filename).write_bytes(f.data)
        sys.stderr.write(f"wrote {out / f.filename} ({len(f.data):,} bytes)\n")


def run_command(
    settings: SandboxSettings,
    file: str,
    as_json: bool,
    timeout: float | None,
    *,
    config: SandboxConfig | None = None,
    out: Path | None = None,
    graph: tuple[str, ...] | None = None,
) -> int:
    """The command's body; returns the process exit code. ``config`` overrides (for tests)."""
    cfg = config or SandboxConfig.from_settings(
        settings, pool_size=0, fork_server=False
    )  # one run: a single-use jail starts as fast as a fork server would
    try:
        code = read_snippet(file, cfg.max_bytes)
        result = asyncio.run(_run(cfg, code, timeout, graph))
    except SnippetRejected as exc:
        sys.stderr.write(f"refused: {exc.reason}\n")
        return EXIT_REFUSED
    except SandboxUnavailable as exc:
        sys.stderr.write(f"sandbox unavailable: {exc.reason}\n")
        return EXIT_UNAVAILABLE
    _write_files(result, out)
    if graph is not None:
        _print_graph(result, as_json)
    elif as_json:
        sys.stdout.write(json.dumps(result.as_dict(), ensure_ascii=False) + "\n")
    else:
        _print_text(result)
    return 0


def _print_graph(result: RunResult, as_json: bool) -> None:
    graph = result.graph
    error = None if graph is not None else (result.graph_error or "no graph")
    if result.outcome.value != "ok":
        error = f"the snippet did not finish ({result.outcome.value}): {error}"
    if as_json:
        shape = graph.as_dict() if graph is not None else {}
        payload = {
            "outcome": result.outcome.value,
            "nodes": shape.get("nodes", []),
            "edges": shape.get("edges", []),
            "truncated": bool(shape.get("truncated")),
            "files": result.as_dict()["files"],
            "error": error,
            "stdout": result.stdout,
            "stderr": result.stderr,
        }
        sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
        return
    if result.stdout:
        sys.stdout.write(_shown(result.stdout))
    if result.stderr:
        sys.stderr.write(_shown(result.stderr))
    if error or graph is None:
        sys.stderr.write(f"no graph: {_shown(error or 'no graph')}")
        return
    sys.stdout.write(_shown(graph_tree(graph)))


@snippet_app.command("run")
def snippet_run(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(help="A Python file, or - to read stdin.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object with the result.", metavar="")
    ] = False,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", min=0.05, help="Wall-clock seconds (capped at SANDBOX_TIMEOUT)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the files the run returned (figures...) there."),
    ] = None,
) -> None:
    """Run one snippet in a fresh jail and print its output (or, with --json, the result)."""
    raise typer.Exit(run_command(ctx.obj.settings(), file, as_json, timeout, out=out))


@snippet_app.command("graph")
def snippet_graph(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(help="A Python file, or - to read stdin.")],
    of: Annotated[
        str,
        typer.Option(
            "--of",
            help="The tensor(s) to draw, comma-separated (default: the last one assigned"
            " that has a grad_fn).",
            metavar="NAME[,NAME]",
        ),
    ] = "",
    inputs: Annotated[
        bool,
        typer.Option(
            "--inputs",
            help="Draw every result the snippet assigned (e.g. one function on two inputs),"
            " side by side.",
            metavar="",
        ),
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print one JSON object: outcome, nodes, edges...", metavar=""),
    ] = False,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the picture(s) into this directory.")
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", min=0.05, help="Wall-clock seconds (capped at SANDBOX_TIMEOUT)."),
    ] = None,
) -> None:
    """Run one snippet and print the autograd graph behind a tensor (and draw it with --out)."""
    names = tuple(n.strip() for n in of.split(",") if n.strip())
    if inputs:
        if names:
            sys.stderr.write("refused: use --of or --inputs, not both\n")
            raise typer.Exit(EXIT_REFUSED)
        names = ("*",)
    bad = [n for n in names if n != "*" and not n.isidentifier()]
    if bad:
        sys.stderr.write(f"refused: --of {bad[0]!r} is not a variable name\n")
        raise typer.Exit(EXIT_REFUSED)
    code = run_command(ctx.obj.settings(), file, as_json, timeout, out=out, graph=names)
    raise typer.Exit(code)


@sandbox_app.command("serve")
def sandbox_serve(
    ctx: typer.Context,
    listen: Annotated[
        str, typer.Option("--listen", help="HOST:PORT to listen on (a private network).")
    ] = "127.0.0.1:8790",
) -> None:
    """Run the sandbox manager as an HTTP service: POST /run, GET /healthz, GET /metrics.

    Needs SANDBOX_TOKEN (bots send it as a bearer token). Bots use it with SANDBOX_URLS.
    """
    settings = ctx.obj.settings()
    secret = settings.sandbox_token
    token = secret.get_secret_value() if secret is not None else ""
    if not token:
        sys.stderr.write("refused: set SANDBOX_TOKEN; a sandbox service never runs open\n")
        raise typer.Exit(EXIT_REFUSED)
    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit():
        sys.stderr.write(f"refused: --listen {listen!r} is not HOST:PORT\n")
        raise typer.Exit(EXIT_REFUSED)
    raise typer.Exit(
        asyncio.run(_serve(SandboxConfig.from_settings(settings), token, host, int(port)))
    )


async def _serve(config: SandboxConfig, token: str, host: str, port: int) -> int:
    from aiohttp import web

    from bot.sandbox.client.service import make_app

    async with Sandbox(config) as sandbox:
        if not sandbox.available:
            sys.stderr.write(f"sandbox unavailable: {sandbox.unavailable_reason}\n")
            return EXIT_UNAVAILABLE
        runner = web.AppRunner(make_app(sandbox, token), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, host, port).start()
        sys.stderr.write(f"sandbox service listening on http://{host}:{port}\n")
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()
    return 0
