"""The exercise job is one typed value across the sandbox boundary: it goes out as JSON and a
sandbox host reads it back whole, refusing a malformed one with what is wrong."""

from __future__ import annotations

import json

import pytest

from bot.questions.judge import exercise_spec
from bot.questions.loader import load_packs
from bot.questions.schema import Exercise
from bot.sandbox.exercise import CheckJob, ExerciseJob
from tests.test_cli import ROOT


def test_every_shipped_exercise_job_survives_the_wire() -> None:
    items = [
        item
        for loaded in load_packs(ROOT / "questions").packs
        for item in loaded.pack.items
        if isinstance(item, Exercise)
    ]
    assert len(items) >= 10
    for item in items:
        job = exercise_spec(item, 7)
        assert ExerciseJob.from_wire(json.loads(json.dumps(job.to_wire()))) == job
        assert job.entry == item.entry and len(job.checks) == len(item.all_checks)


def test_an_expect_goes_over_only_when_stated() -> None:
    job = ExerciseJob("f", 1, (CheckJob("example 1", "(1,)", expect="2"), CheckJob("c", "(2,)")))
    checks = job.to_wire()["checks"]
    assert isinstance(checks, list)
    assert [("expect" in c) for c in checks] == [True, False]
    assert ExerciseJob.from_wire(job.to_wire()) == job


@pytest.mark.parametrize(
    ("wire", "said"),
    [
        ([], "an exercise job is an object"),
        ({"entry": "not a name", "seed": 1, "checks": [{}]}, "entry is not a name"),
        ({"entry": "f", "seed": True, "checks": [{}]}, "seed is not a whole number"),
        ({"entry": "f", "seed": 1, "checks": []}, "no checks"),
        ({"entry": "f", "seed": 1, "checks": [{"name": "a", "args": 3}]}, "arguments as text"),
        (
            {"entry": "f", "seed": 1, "checks": [{"name": "a", "args": "()"}], "forbid": "x"},
            "forbid",
        ),
        (
            {"entry": "f", "seed": 1, "checks": [{"name": "a", "args": "()", "compare": "grads"}]},
            "compare",
        ),
    ],
)
def test_a_malformed_job_is_refused_with_what_is_wrong(wire: object, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        ExerciseJob.from_wire(wire)
