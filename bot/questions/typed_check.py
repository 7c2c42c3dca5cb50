"""``questions check`` for typed items whose key is a value of code: run them in the sandbox.

A typed ``value`` item ships only if, evaluated in the jail exactly as a member's answer is
(:mod:`bot.questions.typed_values`):

- the reference (the item's ``code``, then ``value.of``) gives a value, the same twice;
- every ``value.also_right`` spelling agrees with it (a grader that refuses a right answer
  written another way is broken);
- every ``wrong`` expression is refused (one that agrees would teach a wrong fact).

Each problem is reported at the item's ``file:line``, as exercises' are.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.questions.exercise_check import ExerciseRunner
from bot.questions.loader import LoadedPack
from bot.questions.schema import TypedAnswer
from bot.questions.typed_values import (
    VALUE_JOB,
    VALUE_SECONDS,
    member_code,
    reference_code,
    value_differs,
    value_of,
)

__all__ = ["TypedValueRow", "check_typed_values", "render_typed_values", "typed_value_targets"]


@dataclass(frozen=True, slots=True)
class TypedValueTarget:
    item: TypedAnswer
    path: str
    line: int


@dataclass(frozen=True, slots=True)
class TypedValueRow:
    target: TypedValueTarget
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, object]:
        t = self.target
        return {"id": t.item.id, "path": t.path, "line": t.line, "ok": self.ok,
                "problems": list(self.problems)}  # fmt: skip


def typed_value_targets(packs: Iterable[LoadedPack]) -> list[TypedValueTarget]:
    return [
        TypedValueTarget(item, loaded.path, loaded.item_lines.get(item.id, 1))
        for loaded in packs
        for item in loaded.pack.items
        if isinstance(item, TypedAnswer) and item.value is not None
    ]


async def _check_one(target: TypedValueTarget, runner: ExerciseRunner) -> TypedValueRow:
    item = target.item
    assert item.value is not None
    assert item.code is not None
    reference = reference_code(item.code, item.value.of)
    first, second = [
        value_of(await runner.run(reference, timeout=VALUE_SECONDS, exercise=VALUE_JOB))
        for _ in range(2)
    ]
    if isinstance(first, str):
        return TypedValueRow(target, (f"`value.of` gives no value: {first}",))
    problems: list[str] = []
    if isinstance(second, str) or value_differs(second, first) is not None:
        problems.append("`value.of` gives another value when run again")
    labelled = [("also_right", n, e) for n, e in enumerate(item.value.also_right)]
    labelled += [("wrong", n, e) for n, e in enumerate(item.wrong)]
    for field, number, expression in labelled:
        run = await runner.run(
            member_code(expression, first), timeout=VALUE_SECONDS, exercise=VALUE_JOB
        )
        got = value_of(run)
        why = got if isinstance(got, str) else value_differs(got, first)
        if field == "also_right" and why is not None:
            problems.append(f"also_right[{number}] `{expression}` is refused: {why}")
        elif field == "wrong" and why is None:
            problems.append(f"wrong[{number}] `{expression}` agrees with `{item.value.of}`")
    return TypedValueRow(target, tuple(problems))


async def check_typed_values(
    targets: Sequence[TypedValueTarget], runner: ExerciseRunner, *, jobs: int = 1
) -> list[TypedValueRow]:
    gate = asyncio.Semaphore(max(1, jobs))

    async def one(target: TypedValueTarget) -> TypedValueRow:
        async with gate:
            return await _check_one(target, runner)

    return list(await asyncio.gather(*(one(t) for t in targets)))


def render_typed_values(rows: Sequence[TypedValueRow]) -> str:
    out = [f"{r.target.item.id:<32} value key  {'ok' if r.ok else 'BROKEN'}" for r in rows]
    for row in rows:
        out += [
            f"{row.target.path}:{row.target.line}: {row.target.item.id}: {p}" for p in row.problems
        ]
    bad = sum(not r.ok for r in rows)
    out.append(f"{len(rows)} typed value key(s): " + (f"{bad} broken" if bad else "all agree"))
    return "\n".join(out)
