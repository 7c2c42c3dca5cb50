"""A failed run reads like a lesson, not like the host's disk (issue 29, friction 7).

Each test runs a mistake in the real jail and reads the reply a member gets: the error line
comes first, frames outside the snippet are folded to one line, no host path shows anywhere,
and a failed socket call says that the sandbox has no network.
"""

from __future__ import annotations

import sys

import pytest

from bot.adapters.discord.render import render as discord_render
from bot.adapters.slack.render import render_blocks as slack_blocks
from bot.core.snippets import RunLimits, result_message
from bot.questions.expectations import exception_name
from bot.sandbox import Sandbox
from bot.sandbox.result import Outcome, RunResult
from tests.sandbox.sandbox_helpers import run

session_loop = pytest.mark.asyncio(loop_scope="session")

#: What must never be in a reply: the host's folders, whatever this machine calls them.
HOST_MARKS = ("/work", "site-packages", ".venv", "/root", "/home", sys.prefix, sys.base_prefix)


def reply(result: RunResult) -> str:
    return result_message(result, RunLimits(), "alice").plain_text()


def assert_no_host_path(text: str) -> None:
    for mark in HOST_MARKS:
        assert mark not in text, f"{mark!r} in:\n{text}"


@session_loop
async def test_a_backward_mistake_gives_its_error_first_and_folds_torch(sandbox: Sandbox) -> None:
    r = await run(
        sandbox,
        """
        import torch
        x = torch.ones(3, requires_grad=True)
        y = x * 2
        y.backward()
        """,
    )
    assert r.outcome is Outcome.ERROR, r
    lines = r.stderr.splitlines()
    assert lines[0] == "RuntimeError: grad can be implicitly created only for scalar outputs"
    assert lines[1:4] == [
        "Traceback (most recent call last):",
        '  File "<snippet>", line 5, in <module>',
        "    y.backward()",
    ]
    assert lines[-1] == lines[0]  # and last, where Python and every tool expects it
    assert exception_name(r.stderr) == "RuntimeError"  # what a pack's check reads
    assert len(lines) <= 6, r.stderr
    assert any(line.startswith("  \u2026 ") and line.endswith("frames in torch") for line in lines)
    assert_no_host_path(r.stderr)
    assert_no_host_path(reply(r))


@session_loop
async def test_no_platform_shows_a_host_path_or_loses_the_error(sandbox: Sandbox) -> None:
    """The same reply on Discord, Slack and the console: error first, nothing of the host."""
    r = await run(
        sandbox, "import torch\nx = torch.ones(3, requires_grad=True)\nx.sum().exp().backward(x)\n"
    )
    assert r.outcome is Outcome.ERROR, r
    message = result_message(r, RunLimits(), "alice")
    embed = discord_render(message).embed
    assert embed is not None
    slack = "\n".join(
        b["text"]["text"] for b in slack_blocks(message) if isinstance(b.get("text"), dict)
    )
    for shown in (embed.description or "", slack, message.plain_text()):
        assert_no_host_path(shown)
        assert "RuntimeError: " in shown and "frames in torch" in shown, shown


@session_loop
async def test_frames_between_snippet_frames_are_folded_too(sandbox: Sandbox) -> None:
    """A hook of the snippet's, called back from inside torch: both snippet frames stay."""
    r = await run(
        sandbox,
        """
        import torch
        def hook(grad):
            raise ValueError('bad grad ' + str(grad.shape))
        x = torch.ones(2, requires_grad=True)
        x.register_hook(hook)
        (x * 3).sum().backward()
        """,
    )
    assert r.outcome is Outcome.ERROR, r
    lines = r.stderr.splitlines()
    assert lines[0] == "ValueError: bad grad torch.Size([2])"
    snippet_frames = [line for line in lines if line.startswith('  File "<snippet>"')]
    assert len(snippet_frames) == 2, r.stderr
    assert any("frames in torch" in line for line in lines), r.stderr
    assert_no_host_path(reply(r))


@session_loop
async def test_an_error_raised_in_the_snippet_itself_is_shown_as_python_would(
    sandbox: Sandbox,
) -> None:
    r = await run(
        sandbox,
        """
        def f(n):
            return 1 / n
        f(0)
        """,
    )
    assert r.stderr.splitlines() == [
        "ZeroDivisionError: division by zero",
        "Traceback (most recent call last):",
        '  File "<snippet>", line 4, in <module>',
        "    f(0)",
        '  File "<snippet>", line 3, in f',
        "    return 1 / n",
        "           ~~^~~",
        "ZeroDivisionError: division by zero",
    ]


@session_loop
async def test_a_chained_error_keeps_its_cause_without_host_paths(sandbox: Sandbox) -> None:
    r = await run(
        sandbox,
        """
        import json
        try:
            json.loads('{nope')
        except ValueError as exc:
            raise RuntimeError('could not read the config') from exc
        """,
    )
    lines = r.stderr.splitlines()
    assert lines[0] == "RuntimeError: could not read the config"
    assert "The above exception was the direct cause of the following exception:" in lines
    assert any(
        line.startswith("json.decoder.JSONDecodeError: Expecting property") for line in lines
    )
    assert any("frames in Python" in line for line in lines), r.stderr
    assert_no_host_path(r.stderr)


@pytest.mark.parametrize(
    "code",
    [
        "import urllib.request\nurllib.request.urlopen('http://example.com', timeout=2)\n",
        "import socket\nsocket.getaddrinfo('example.com', 80)\n",
        "import socket\nsocket.create_connection(('10.1.2.3', 80), timeout=1)\n",
    ],
    ids=["urlopen", "getaddrinfo", "connect"],
)
@session_loop
async def test_a_failed_socket_call_says_the_sandbox_has_no_network(
    sandbox: Sandbox, code: str
) -> None:
    r = await run(sandbox, code)
    assert r.outcome is Outcome.ERROR, r
    assert "the sandbox has no network" in r.stderr.splitlines()[1], r.stderr
    assert "the sandbox has no network" in reply(r)
    assert_no_host_path(reply(r))


@session_loop
async def test_an_error_unrelated_to_the_network_says_nothing_of_it(sandbox: Sandbox) -> None:
    r = await run(sandbox, "open('missing.txt')\n")
    assert r.stderr.splitlines()[0].startswith("FileNotFoundError:")
    assert "network" not in r.stderr


@session_loop
async def test_paths_a_snippet_prints_or_warns_are_hidden_by_the_host(sandbox: Sandbox) -> None:
    """The host does not trust the jail's shaping: whatever the output says, paths go."""
    r = await run(
        sandbox,
        """
        import sys, json, warnings, torch
        print(torch.__file__)
        print(json.__file__)
        print(sys.executable, sys.prefix)
        warnings.warn_explicit('forged', UserWarning, torch.__file__, 1)
        """,
    )
    assert r.outcome is Outcome.OK, r
    assert "<torch>/__init__.py" in r.stdout
    assert "<python>/json/__init__.py" in r.stdout
    assert_no_host_path(r.stdout + r.stderr)
    assert_no_host_path(reply(r))


def test_paths_are_hidden_whole_and_only_whole() -> None:
    from bot.sandbox.inside.tidy import Paths

    paths = Paths.of(
        ["/srv/app/.venv/lib/python3.11/site-packages", "/opt/py/lib/python3.11", "/srv/app"],
        ["/srv/app/.venv", "/opt/py"],
    )
    text = (
        'File "/srv/app/.venv/lib/python3.11/site-packages/torch/_tensor.py", line 1\n'
        "/opt/py/lib/python3.11/socket.py /srv/app/.venv/bin/python /opt/pyx/a /srv/app/b.py"
    )
    assert paths.hide(text) == (
        'File "<torch>/_tensor.py", line 1\n'
        "<python>/socket.py <python>/bin/python /opt/pyx/a /srv/app/b.py"
    )
    assert paths.hide("['/srv/app/.venv/lib/python3.11/site-packages']") == "['<site-packages>']"
    system = Paths.of(["/usr/lib/python3.11", "/usr/lib/python3/dist-packages"], ["/usr"])
    assert system.hide("/usr/lib/python3.11/os.py /usr/share/x") == "<python>/os.py /usr/share/x"
    assert paths.library("/srv/app/.venv/lib/python3.11/site-packages/numpy/core/x.py") == "numpy"
    assert paths.library("/opt/py/lib/python3.11/json/decoder.py") == "Python"


def test_a_venv_under_tmp_is_hidden_as_the_jail_sees_it() -> None:
    """A CI checkout's venv under the host's /tmp appears in the jail under /var/host-tmp
    (layout.RELOCATED_TMP): the host's pass must hide that spelling too (a clean clone in
    /tmp printed ``/var/host-tmp/ci1/.venv/.../torch/__init__.py``)."""
    from bot.sandbox.host.manager import seen_in_jail
    from bot.sandbox.inside.tidy import Paths

    host = Paths.of(["/tmp/ci1/.venv/lib/python3.11/site-packages"], ["/tmp/ci1/.venv"])
    paths = seen_in_jail(host)
    printed = (
        "/var/host-tmp/ci1/.venv/lib/python3.11/site-packages/torch/__init__.py\n"
        "/var/host-tmp/ci1/.venv/bin/python /tmp/ci1/.venv"
    )
    assert paths.hide(printed) == "<torch>/__init__.py\n<python>/bin/python <python>"
