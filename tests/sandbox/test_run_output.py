"""What comes back out of a run is bounded, honest and inert (issue 27, findings 2-7 and 14).

Every test runs a hostile snippet in the real jail and looks at what a member would be told:
the counts of files left out, a finished run reported as finished, pictures decided by their
bytes, a forged graph report refused whole, and control characters shown as escapes.
"""

from __future__ import annotations

import pytest

from bot.core.graphs import graph_message
from bot.core.snippets import RunLimits, result_message
from bot.sandbox import Sandbox
from bot.sandbox.result import Outcome
from tests.sandbox.sandbox_helpers import run

session_loop = pytest.mark.asyncio(loop_scope="session")
LIMITS = RunLimits()


def reply_text(result: object, *, graph: bool = False) -> str:
    make = graph_message if graph else result_message
    return make(result, LIMITS, "alice").plain_text()  # type: ignore[arg-type]


def prose(result: object, *, graph: bool = False) -> str:
    """Every part of the reply that a chat renders as Markdown (not code)."""
    make = graph_message if graph else result_message
    message = make(result, LIMITS, "alice")  # type: ignore[arg-type]
    return "\n".join(s.body for s in message.sections) + (message.title or "")


@session_loop
async def test_three_thousand_files_are_counted_exactly(sandbox: Sandbox) -> None:
    r = await run(
        sandbox,
        """
        for i in range(3000):
            open(f'f{i:04d}.txt', 'w').write('x')
        """,
    )
    assert r.outcome is Outcome.OK, r
    assert len(r.files) == 10
    assert dict(r.skipped_counts) == {"too many files": 2990}
    assert "2,990 files not attached" in reply_text(r)
    assert "90 more" not in reply_text(r)


@session_loop
async def test_thirty_thousand_long_names_finish_and_are_counted(sandbox: Sandbox) -> None:
    """Once reported as "Timed out": the list of names overran the report's size limit."""
    r = await run(
        sandbox,
        """
        import os
        for i in range(30000):
            os.close(os.open(f'{i:06d}-' + 'n' * 200, os.O_CREAT | os.O_WRONLY))
        print('made them')
        """,
    )
    assert r.outcome is Outcome.OK, r
    assert r.stdout == "made them\n"
    assert dict(r.skipped_counts) == {"too many files": 29990}
    text = reply_text(r)
    assert "Ran in" in text and "Timed out" not in text
    assert "29,990 files not attached" in text
    assert len(text) < 2000  # counted, not listed


@session_loop
async def test_a_figure_in_a_sub_folder_comes_back(sandbox: Sandbox) -> None:
    r = await run(
        sandbox,
        """
        import os
        import matplotlib.pyplot as plt
        os.makedirs('plots/deeper/still/too')
        plt.plot([1, 2, 3])
        plt.savefig('plots/fig.png')
        plt.close()
        open('plots/deeper/still/too/far.txt', 'w').write('x')
        """,
    )
    assert r.outcome is Outcome.OK, r
    [figure] = r.files
    assert figure.name == "plots/fig.png" and figure.filename == "plots_fig.png"
    assert figure.is_image
    assert dict(r.skipped_counts) == {"too deep": 1}
    assert "`plots/deeper/still/too` (a folder nested too deep)" in reply_text(r)


@session_loop
async def test_a_picture_is_decided_by_its_bytes_not_its_name(sandbox: Sandbox) -> None:
    r = await run(
        sandbox,
        """
        import matplotlib.pyplot as plt
        open('figure.png', 'w').write('<svg xmlns="http://www.w3.org/2000/svg"></svg>')
        open('page.jpg', 'w').write('<html><body>hi</body></html>')
        open('cut.png', 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + b'0' * 64)
        plt.plot([1, 2])
        plt.savefig('real.dat', format='png')
        plt.close()
        """,
    )
    assert r.outcome is Outcome.OK, r
    kinds = {f.name: f.mime for f in r.files}
    assert kinds == {
        "cut.png.bin": "application/octet-stream",
        "figure.png.txt": "text/plain",
        "page.jpg.txt": "text/plain",
        "real.dat": "image/png",
    }
    message = result_message(r, LIMITS, "alice")
    assert [a.filename for a in message.attachments if a.is_image] == ["real.dat"]


@session_loop
async def test_a_huge_claimed_picture_is_a_plain_file(sandbox: Sandbox) -> None:
    """A 100,000 x 100,000 PNG header in a few bytes: refused before a pixel is decoded."""
    r = await run(
        sandbox,
        """
        import struct, zlib
        def chunk(kind, data):
            return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))
        ihdr = struct.pack('>IIBBBBB', 100000, 100000, 8, 0, 0, 0, 0)
        data = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', ihdr) + chunk(b'IDAT', zlib.compress(b'\\0' * 1000)) + chunk(b'IEND', b'')
        open('bomb.png', 'wb').write(data)
        """,
    )
    assert r.outcome is Outcome.OK, r
    [bomb] = r.files
    assert not bomb.is_image and bomb.name == "bomb.png.bin"


@session_loop
async def test_fifos_and_sockets_are_named(sandbox: Sandbox) -> None:
    r = await run(
        sandbox,
        """
        import os, socket
        os.mkfifo('pipe')
        s = socket.socket(socket.AF_UNIX); s.bind('sock')
        open('kept.txt', 'w').write('x')
        """,
    )
    assert r.outcome is Outcome.OK, r
    assert [f.name for f in r.files] == ["kept.txt"]
    assert dict(r.skipped_counts) == {"fifo": 1, "socket": 1}
    text = reply_text(r)
    assert "`pipe` (a named pipe, not a file)" in text
    assert "`sock` (a socket, not a file)" in text


# The worker's own module holds the in-jail walk; a snippet can reach it through its frames.
FORGE_WALK = """
import sys
frame = sys._getframe()
while 'pictures' not in frame.f_globals:
    frame = frame.f_back
walker = frame.f_globals['pictures']
walker.walk_graph = lambda roots, ns: {WALK}
walker.draw_graph = lambda *a, **k: None
import torch
x = torch.ones(2, requires_grad=True)
y = x * 2
"""


@session_loop
async def test_a_forged_graph_with_unhashable_ids_is_refused_whole(sandbox: Sandbox) -> None:
    walk = "{'nodes': [{'id': [1], 'kind': 'output', 'graph': 0, 'label': 'y'}], 'edges': []}"
    r = await sandbox.run(FORGE_WALK.replace("{WALK}", walk), graph=())
    assert r.outcome is Outcome.OK, r
    assert r.graph is None
    assert r.graph_error == "the graph could not be drawn"
    message = graph_message(r, LIMITS, "alice")  # once a TypeError in the /graph handler
    assert "the graph could not be drawn" in message.plain_text()


@session_loop
async def test_forged_free_text_never_reaches_prose(sandbox: Sandbox) -> None:
    hostile = "[Free Nitro](https://evil.example) @everyone <@&1> \\x1b[2J \\u202egnp.exe"
    walk = (
        "{'nodes': [{'id': 0, 'kind': 'output', 'graph': 0, 'label': '" + hostile + "', "
        "'shape': [2], 'dtype': 'float32'}, {'id': 1, 'kind': 'op', 'graph': 0, "
        "'label': '" + hostile + "', 'saved': ['" + hostile + "'], 'name': '" + hostile + "'}], "
        "'edges': [[0, 1]], 'truncated': True, 'max_nodes': '" + hostile + "'}"
    )
    r = await sandbox.run(FORGE_WALK.replace("{WALK}", walk), graph=())
    assert r.outcome is Outcome.OK, r
    assert r.graph is not None and r.graph.truncated
    shown = prose(r, graph=True)
    assert "Free Nitro" not in shown and "@everyone" not in shown and "<@&1>" not in shown
    assert "Only the first 300 nodes are shown." in shown  # our limit, not the report's
    whole = reply_text(r, graph=True)
    assert "\x1b" not in whole and "\u202e" not in whole
    assert "\\x1b[2J" in whole and "\\u202egnp.exe" in whole  # shown, as escapes, in code


@session_loop
async def test_a_forged_graph_error_is_shown_only_as_code(sandbox: Sandbox) -> None:
    code = (
        FORGE_WALK.replace("{WALK}", "{'error': '[Free Nitro](https://evil.example) @everyone'}")
        + "\n"
    )
    r = await sandbox.run(code, graph=())
    assert r.graph is None and r.graph_error is not None
    assert "Free Nitro" not in prose(r, graph=True)
    assert "[Free Nitro](https://evil.example)" in reply_text(r, graph=True)


@session_loop
async def test_control_characters_in_output_are_shown_escaped(sandbox: Sandbox) -> None:
    r = await run(
        sandbox,
        """
        import sys
        print('\\x1b]0;owned\\x07 red:\\x1b[31mX \\u202eevil')
        print('\\x1b[2J', file=sys.stderr)
        """,
    )
    text = reply_text(r)
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert "\\x1b]0;owned\\x07" in text and "\\u202eevil" in text


@session_loop
async def test_an_overlong_forged_report_is_not_a_timeout(sandbox: Sandbox) -> None:
    """A line longer than any report, written on the report's descriptor, then a clean exit:
    the run finished, and its real exit status says so."""
    r = await run(
        sandbox,
        """
        import os, sys
        frame = sys._getframe()
        while frame is not None and 'status' not in frame.f_locals:
            frame = frame.f_back
        fd = frame.f_locals['status']
        os.write(fd, b'{"exit_code": 0, "x": "' + b'a' * (6 * 2**20))
        print('wrote it')
        """,
        timeout=8,
    )
    assert r.outcome is Outcome.OK, r
    assert r.duration_ms < 8000
