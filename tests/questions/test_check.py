"""`questions check`: verdicts, the table, concurrency, and where torch disagrees with a claim.

Most tests drive :func:`check_items` with a scripted runner (no torch, no jail) so each verdict
can be forced; one runs real snippets through the same plain-subprocess runner as the
shipped-pack test. The sandboxed command itself is tested in test_check_sandbox.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.questions.check import (
    CheckRow,
    CheckTarget,
    check_items,
    check_targets,
    exception_line,
    render_table,
)
from bot.questions.importers import import_bytes, to_yaml
from bot.questions.loader import load_pack_text
from bot.sandbox import SnippetRejected
from bot.sandbox.result import Outcome, RunResult
from tests.questions.snippets import run_snippet

DATA = Path(__file__).resolve().parents[1] / "data" / "import"

PACK = """\
pack: claims
title: Claims
items:
  - id: c-ok
    kind: practice
    difficulty: easy
    prompt: What does this print?
    code: print(6.0)
    expect_stdout: "6.0"
    answer: "6.0"
    steps: [It prints.]
    final_answer: "6.0"
  - id: c-wrong-output
    kind: practice
    difficulty: easy
    prompt: What does this print?
    code: print(5.0)
    expect_stdout: "6.0"
    answer: "6.0"
    steps: [It prints.]
    final_answer: "6.0"
  - id: c-raises-instead
    kind: practice
    difficulty: easy
    prompt: What does this print?
    code: print(None)
    expect_stdout: "None"
    answer: None
    steps: [It prints.]
    final_answer: None
  - id: c-error-ok
    kind: practice
    difficulty: easy
    prompt: What happens?
    code: raise RuntimeError
    expect_error: RuntimeError
    answer: RuntimeError
    steps: [It raises.]
    final_answer: RuntimeError
  - id: c-no-error
    kind: practice
    difficulty: easy
    prompt: What happens?
    code: print([2.0])
    expect_error: RuntimeError
    answer: RuntimeError
    steps: [It raises.]
    final_answer: RuntimeError
  - id: c-slow
    kind: practice
    difficulty: easy
    prompt: What happens?
    code: "while True: pass"
    expect_stdout: done
    answer: done
    steps: [It loops.]
    final_answer: done
"""

TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "<string>", line 5, in <module>\n'
    "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn\n"
)


def _result(
    stdout: str = "",
    stderr: str = "",
    exit_code: int | None = 0,
    outcome: Outcome = Outcome.OK,
) -> RunResult:
    return RunResult(outcome, exit_code, None, stdout, stderr, False, 12.0)


SCRIPT: dict[str, RunResult] = {
    "print(6.0)": _result("6.0\n"),
    "print(5.0)": _result("5.0\n"),
    "print(None)": _result("", TRACEBACK, 1, Outcome.ERROR),
    "raise RuntimeError": _result("", TRACEBACK, 1, Outcome.ERROR),
    "print([2.0])": _result("[2.0]\n"),
    "while True: pass": _result("", "", None, Outcome.TIMEOUT),
}


class ScriptedRunner:
    """Answers each snippet from SCRIPT and records how many runs overlapped."""

    def __init__(self, script: dict[str, RunResult] = SCRIPT, delay: float = 0.0) -> None:
        self.script = script
        self.delay = delay
        self.running = 0
        self.most = 0
        self.timeouts: list[float | None] = []

    async def run(self, code: str, *, timeout: float | None = None) -> RunResult:  # noqa: ASYNC109
        self.timeouts.append(timeout)
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await asyncio.sleep(self.delay)
            return self.script[code]
        finally:
            self.running -= 1


def _targets(text: str = PACK) -> list[CheckTarget]:
    loaded, problems = load_pack_text(text.encode(), "claims.yaml")
    assert loaded is not None, problems
    return check_targets([loaded])


async def _rows(runner: ScriptedRunner | None = None, **kwargs: object) -> list[CheckRow]:
    return await check_items(_targets(), runner or ScriptedRunner(), **kwargs)  # type: ignore[arg-type]


async def test_verdicts_for_every_way_a_claim_can_fail() -> None:
    rows = {row.item_id: row for row in await _rows(timeout=7)}
    assert {k: (r.ok, r.verdict, r.expected, r.got) for k, r in rows.items()} == {
        "c-ok": (True, "ok", "6.0", "6.0"),
        "c-wrong-output": (False, "disagrees", "6.0", "5.0"),
        "c-raises-instead": (False, "disagrees", "None", "RuntimeError"),
        "c-error-ok": (True, "ok", "RuntimeError", "RuntimeError"),
        "c-no-error": (False, "disagrees", "RuntimeError", "(no error) [2.0]"),
        "c-slow": (False, "did not finish", "done", "(timeout)"),
    }
    assert rows["c-wrong-output"].reason == "line 1 differs: expected '6.0', got '5.0'"
    assert rows["c-raises-instead"].detail == (
        "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn"
    )
    assert rows["c-slow"].reason.endswith(": timeout after 7s")
    assert rows["c-ok"].target.line == 4


async def test_rows_keep_pack_order_and_runs_are_capped_at_jobs() -> None:
    runner = ScriptedRunner(delay=0.02)
    rows = await _rows(runner, jobs=2, timeout=30)
    assert [row.item_id for row in rows] == [target.item.id for target in _targets()]
    assert runner.most == 2
    assert set(runner.timeouts) == {30}


async def test_a_rejected_snippet_is_a_row_not_a_crash() -> None:
    class Rejecting(ScriptedRunner):
        async def run(self, code: str, *, timeout: float | None = None) -> RunResult:  # noqa: ASYNC109
            raise SnippetRejected("snippet is 70000 bytes; the limit is 65536")

    rows = await _rows(Rejecting())
    assert {(row.verdict, row.got, row.reason) for row in rows} == {
        ("not run", "(rejected)", "snippet is 70000 bytes; the limit is 65536")
    }


async def test_table_shows_id_expected_got_verdict_and_the_reasons() -> None:
    table = render_table(await _rows())
    lines = table.splitlines()
    assert lines[0].split() == ["id", "expected", "got", "verdict"]
    assert lines[2].split() == ["c-ok", "6.0", "6.0", "ok"]
    assert lines[3].split() == ["c-wrong-output", "6.0", "5.0", "disagrees"]
    assert (
        "claims.yaml:22: c-raises-instead: expected output, but the run failed (exit 1, raised "
        "RuntimeError) [RuntimeError: element 0 of tensors does not require grad and does not "
        "have a grad_fn]"
    ) in lines
    assert lines[-1] == "6 code item(s): 2 ok, 4 disagree with their expectation"


async def test_as_dict_is_the_json_shape() -> None:
    row = (await _rows())[1]
    assert row.as_dict() == {
        "id": "c-wrong-output",
        "claim": None,
        "pack": "claims",
        "path": "claims.yaml",
        "line": 13,
        "ok": False,
        "verdict": "disagrees",
        "expected": "6.0",
        "got": "5.0",
        "reason": "line 1 differs: expected '6.0', got '5.0'",
        "detail": None,
        "outcome": "ok",
        "duration_ms": 12.0,
    }


def test_long_and_multi_line_cells_are_shortened() -> None:
    long = "\n".join(f"line {i}" for i in range(20))
    script = {"print(1)": _result(long)}
    text = PACK.split("  - id: c-wrong-output", maxsplit=1)[0].replace(
        "code: print(6.0)", "code: print(1)"
    )
    rows = asyncio.run(check_items(_targets(text), ScriptedRunner(script)))
    got = rows[0].got
    assert got.startswith("line 0 \u23ce line 1")
    row_line = render_table(rows).splitlines()[2]
    assert "\u2026" in row_line
    assert len(row_line) < 80


def test_exception_line_of_a_chained_traceback() -> None:
    stderr = (
        TRACEBACK
        + "\nDuring handling of the above exception, another exception occurred:\n\n"
        + "Traceback (most recent call last):\n"
        + '  File "<string>", line 9, in <module>\n'
        + "TypeError: tensor() got an unexpected keyword argument 'graph_static'\n"
    )
    assert exception_line(stderr) == (
        "TypeError: tensor() got an unexpected keyword argument 'graph_static'"
    )
    assert exception_line("just a warning\n") is None


# --- real snippets: an imported sheet's claims against real torch -------------------------------


class SubprocessRunner:
    """The shipped-pack test's plain runner behind the checker's interface (tests only)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir

    async def run(self, code: str, *, timeout: float | None = None) -> RunResult:  # noqa: ASYNC109
        run: Callable[[str, Path], tuple[str, str, int | None]] = run_snippet
        folder = self.workdir / str(abs(hash(code)))
        folder.mkdir(exist_ok=True)
        stdout, stderr, code_ = await asyncio.to_thread(run, code, folder)
        outcome = Outcome.OK if code_ == 0 else Outcome.TIMEOUT if code_ is None else Outcome.ERROR
        return RunResult(outcome, code_, None, stdout, stderr, False, 0.0)


@pytest.mark.slow
async def test_imported_claims_are_checked_against_real_torch(tmp_path: Path) -> None:
    path = DATA / "autograd-sheet.txt"
    result = import_bytes(path.read_bytes(), str(path))
    loaded, problems = load_pack_text(to_yaml(result).encode(), "autograd-sheet.yaml")
    assert loaded is not None, problems
    rows = await check_items(check_targets([loaded]), SubprocessRunner(tmp_path), jobs=2)
    assert {row.item_id: (row.verdict, row.expected, row.got) for row in rows} == {
        "autograd-sheet-prac-02": ("ok", "8.0", "8.0"),
        # The sheet says backward() replaces .grad; it adds into it.
        "autograd-sheet-prac-03": ("disagrees", "5.0", "10.0"),
        # The sheet says the second backward fails; each t.sum() builds a new graph.
        "autograd-sheet-prac-04": ("disagrees", "RuntimeError", "(no error) [2.0, 2.0, 2.0]"),
        "autograd-sheet-prac-05": ("ok", "(no output)", "(no output)"),
        "autograd-sheet-prac-06": ("ok", "None", "None"),
    }


def test_check_config_raises_the_timeout_and_the_cpu_budget_with_it() -> None:
    from bot.questions.check import sandbox_config_for_check
    from bot.sandbox import SandboxConfig

    base = SandboxConfig(timeout=10.0, pool_size=2, import_cpu_seconds=120, memory_mb=512)
    config = sandbox_config_for_check(base, timeout=150, jobs=6)
    assert (config.timeout, config.pool_size, config.import_cpu_seconds) == (150, 6, 270)
    assert config.max_running == 6  # every job runs at once: none is refused as busy
    assert config.memory_mb == 512
    same = sandbox_config_for_check(base, timeout=5, jobs=1)
    assert (same.timeout, same.pool_size, same.import_cpu_seconds) == (10.0, 2, 125)
