"""``questions check`` for exercises: run the reference and the starter in the sandbox.

An exercise ships only if, run in the jail exactly as a member's submission is:

- the reference gives a value for every check (or raises the error a check names), twice
  with the same seed and the same values (checks are deterministic), and with another seed;
- the reference uses no ``forbid``-den name, and every forbidden name exists;
- each example's ``expect`` agrees with the reference (to the 4 decimals a member reads);
- every check ends within the exercise's ``time_limit``;
- the reference's graph keeps the exercise's ``graph`` rule, and some check's result has one;
- the starter fails at least one check (else there is nothing to do);
- every ``wrong`` solution fails at least one check and every ``also_right`` one passes them
  all, judged exactly as a member's submission (an exercise ships at least one of each: a
  grader with no mutants of its own has not been tested).

Each problem is reported at the exercise's ``file:line``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from bot.questions.judge import (
    ExerciseBroken,
    Verdict,
    differs,
    exercise_spec,
    graph_differs,
    judge,
)
from bot.questions.loader import LoadedPack
from bot.questions.schema import Example, Exercise
from bot.sandbox.exercise import ExerciseJob, ExerciseReport
from bot.sandbox.result import RunResult

__all__ = ["ExerciseRow", "check_exercises", "exercise_targets", "render_exercises"]

_SEEDS = (11, 12)
_SHOWN_RTOL, _SHOWN_ATOL = 1e-3, 1e-4  # an example's expect is written to 4 decimals


class ExerciseRunner(Protocol):
    async def run(
        self,
        code: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109
        exercise: ExerciseJob | None = None,
    ) -> RunResult: ...


@dataclass(frozen=True, slots=True)
class ExerciseTarget:
    item: Exercise
    pack: str
    path: str
    line: int


@dataclass(frozen=True, slots=True)
class ExerciseRow:
    target: ExerciseTarget
    problems: tuple[str, ...]
    duration_ms: float

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.target.item.id,
            "pack": self.target.pack,
            "path": self.target.path,
            "line": self.target.line,
            "ok": self.ok,
            "problems": list(self.problems),
            "duration_ms": round(self.duration_ms, 1),
        }


def exercise_targets(packs: Iterable[LoadedPack]) -> list[ExerciseTarget]:
    return [
        ExerciseTarget(item, loaded.pack.pack, loaded.path, loaded.item_lines.get(item.id, 1))
        for loaded in packs
        for item in loaded.pack.items
        if isinstance(item, Exercise)
    ]


def _with_expect(job: ExerciseJob, item: Exercise) -> ExerciseJob:
    """The job with each example's stated result, which the jail checks against the
    reference's (``questions check`` only)."""
    stated = [example.expect for example in item.examples]
    checks = tuple(
        replace(check, expect=stated[n]) if n < len(stated) and stated[n] is not None else check
        for n, check in enumerate(job.checks)
    )
    return replace(job, checks=checks)


def _run_problems(
    item: Exercise, result: RunResult, who: str
) -> tuple[list[str], ExerciseReport | None]:
    report = result.exercise
    if report is None:
        tail = result.stderr.strip().splitlines()[-1:] or [result.outcome.value]
        return [f"the {who} run ended without a report ({result.outcome.value}): {tail[0]}"], None
    problems: list[str] = []
    if report.setup_error:
        problems.append(f"a check's `args` failed: {report.setup_error}")
    if report.missing:
        problems.append(f"forbid names what does not exist: {', '.join(report.missing)}")
    if report.load_error:
        last = result.stderr.strip().splitlines()[-1:] or ["?"]
        problems.append(f"the {who} failed to load: {last[0]}")
    if report.no_entry:
        problems.append(f"the {who} defines no `{item.entry}`")
    return problems, report


def _graph_problems(item: Exercise, report: ExerciseReport) -> list[str]:
    if item.graph is None:
        return []
    runs = [run for run in report.results if run.raised is None]
    if not any(run.graph is not None for run in runs):
        return ["`graph` judges nothing: no check's result has an autograd graph"]
    return [
        f"check {number}: the solution breaks its own graph rule: {why}"
        for number, run in enumerate(report.results, 1)
        if (why := graph_differs(item.graph, run, run)) is not None
    ]


def _why_failed(verdict: Verdict) -> str:
    if verdict.problem:
        return verdict.problem
    if verdict.forbidden:
        return f"uses {', '.join(verdict.forbidden)}, which forbid names"
    failed = [c for c in verdict.checks if not c.passed]
    return "; ".join(f"{c.label}: {c.reason}" for c in failed[:2]) if failed else "?"


def _mutant_problems(item: Exercise, ref: ExerciseReport, runs: Sequence[RunResult]) -> list[str]:
    """The ``wrong`` solutions that pass and the ``also_right`` ones that fail."""
    problems: list[str] = []
    if not item.wrong:
        problems.append("no `wrong` solutions: give plausible mistakes the checks must catch")
    if not item.also_right:
        problems.append("no `also_right` solution: give a right answer unlike the reference")
    labelled = [("wrong", n, s) for n, s in enumerate(item.wrong)]
    labelled += [("also_right", n, s) for n, s in enumerate(item.also_right)]
    for (field, number, solution), result in zip(labelled, runs, strict=True):
        try:
            verdict = judge(item, result.exercise, ref, _ended(result))
        except ExerciseBroken as exc:
            problems.append(f"{field}[{number}]: cannot judge: {exc}")
            continue
        if field == "wrong" and verdict.solved:
            problems.append(f"{field}[{number}] passes every check ({solution.why})")
        elif field == "also_right" and not verdict.solved:
            problems.append(f"{field}[{number}] fails: {_why_failed(verdict)} ({solution.why})")
    return problems


def _ended(result: RunResult) -> str | None:
    if result.exercise is not None:
        return None
    return f"the run ended without a report ({result.outcome.value})"


def _reference_problems(item: Exercise, report: ExerciseReport, stderr: str) -> list[str]:
    problems: list[str] = []
    if report.forbidden:
        problems.append(f"the solution uses what forbid names: {', '.join(report.forbidden)}")
    limit_ms = item.time_limit * 1000
    for number, (check, run) in enumerate(zip(item.all_checks, report.results, strict=False), 1):
        label = f"check {number} ({'example' if isinstance(check, Example) else 'hidden'})"
        if check.error is not None:
            if run.raised != check.error:
                problems.append(
                    f"{label}: the solution should raise {check.error}, got "
                    f"{run.raised or 'a value'}"
                )
        elif run.raised is not None:
            problems.append(f"{label}: the solution raised {run.raised}: {run.message}")
        elif run.too_large:
            problems.append(f"{label}: the solution's result is too large to compare")
        if run.ms > limit_ms:
            problems.append(f"{label}: took {run.ms:.0f} ms, over time_limit {item.time_limit:g} s")
        if isinstance(check, Example) and check.expect is not None and run.raised is None:
            why = differs(run.result, run.expected, _SHOWN_RTOL, _SHOWN_ATOL)
            if why is not None:
                problems.append(
                    f"{label}: expect `{check.expect}` disagrees with the solution ({why})"
                )
    return problems


async def _check_one(target: ExerciseTarget, runner: ExerciseRunner) -> ExerciseRow:
    item = target.item
    timeout = item.time_limit + 5
    others = [s.code for s in (*item.wrong, *item.also_right)]
    first, again, other, starter, *mutants = await asyncio.gather(
        runner.run(
            item.solution,
            timeout=timeout,
            exercise=_with_expect(exercise_spec(item, _SEEDS[0]), item),
        ),
        runner.run(item.solution, timeout=timeout, exercise=exercise_spec(item, _SEEDS[0])),
        runner.run(item.solution, timeout=timeout, exercise=exercise_spec(item, _SEEDS[1])),
        runner.run(item.starter, timeout=timeout, exercise=exercise_spec(item, _SEEDS[0])),
        *(
            runner.run(code, timeout=timeout, exercise=exercise_spec(item, _SEEDS[0]))
            for code in others
        ),
    )
    took = max(r.duration_ms for r in (first, again, other, starter))
    problems, ref = _run_problems(item, first, "solution")
    if ref is None or problems:
        return ExerciseRow(target, tuple(problems), took)
    problems += _reference_problems(item, ref, first.stderr)
    problems += _graph_problems(item, ref)
    for result, what in ((again, "the same seed"), (other, "another seed")):
        more, report = _run_problems(item, result, "solution")
        problems += more
        if report is None:
            continue
        if what == "the same seed":
            for number, (a, b) in enumerate(zip(ref.results, report.results, strict=False), 1):
                if (
                    a.raised != b.raised
                    or differs(b.result, a.result, 0.0, 0.0)
                    or (differs(b.args, a.args, 0.0, 0.0))
                ):
                    problems.append(
                        f"check {number} is not deterministic: two runs with one seed disagree"
                    )
        problems += [
            p for p in _reference_problems(item, report, other.stderr) if "expect" not in p
        ]
    if not problems:
        try:
            verdict = judge(item, starter.exercise, ref)
        except ExerciseBroken as exc:
            problems.append(f"cannot judge: {exc}")
        else:
            if verdict.solved:
                problems.append("the starter already passes every check")
            problems += _mutant_problems(item, ref, mutants)
    return ExerciseRow(target, tuple(dict.fromkeys(problems)), took)


class _Throttled:
    """At most ``jobs`` runs at once, however many an exercise asks for (its reference three
    times, its starter, and each ``wrong`` and ``also_right``): the sandbox's queue is short."""

    def __init__(self, runner: ExerciseRunner, jobs: int) -> None:
        self._runner = runner
        self._limit = asyncio.Semaphore(max(1, jobs))

    async def run(
        self,
        code: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109
        exercise: ExerciseJob | None = None,
    ) -> RunResult:
        async with self._limit:
            return await self._runner.run(code, timeout=timeout, exercise=exercise)


async def check_exercises(
    targets: Sequence[ExerciseTarget], runner: ExerciseRunner, *, jobs: int = 1
) -> list[ExerciseRow]:
    throttled = _Throttled(runner, jobs)
    return list(await asyncio.gather(*(_check_one(t, throttled) for t in targets)))


def render_exercises(rows: Sequence[ExerciseRow]) -> str:
    out = []
    for row in rows:
        t = row.target
        checks = len(t.item.all_checks)
        out.append(f"{t.item.id:<32} {checks:>2} checks  {'ok' if row.ok else 'BROKEN'}")
    for row in rows:
        for problem in row.problems:
            out.append(f"{row.target.path}:{row.target.line}: {row.target.item.id}: {problem}")
    bad = sum(not r.ok for r in rows)
    out.append(f"{len(rows)} exercise(s): " + (f"{bad} broken" if bad else "all pass their checks"))
    return "\n".join(out)
