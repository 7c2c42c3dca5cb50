"""The graph part of an exercise report, read at the host's boundary: node type names, counts
of backward calls and warnings come from the jail, where member code ran, so anything off the
grammar refuses the whole report; and a graph rule judges by those names only."""

from __future__ import annotations

from typing import Any

import pytest

from bot.questions.judge import graph_differs
from bot.questions.schema import GraphRule
from bot.sandbox.exercise import (
    MAX_GRAPH_NAMES,
    CheckRun,
    ExerciseReportInvalid,
    parse_exercise_report,
    report_to_wire,
)

TENSOR = {"tensor": "float64", "shape": [2], "data": [1.0, 2.0]}


def _report(**run: Any) -> dict[str, Any]:
    return {"results": [{"ms": 1.0, "result": TENSOR, **run}], "forbidden": []}


def test_a_graph_and_a_count_are_read_and_survive_the_wire() -> None:
    raw = _report(graph=["MySiLUBackward", "AccumulateGrad"], calls=1)
    raw["warnings"] = ["UserWarning: careful"]
    report = parse_exercise_report(raw)
    [run] = report.results
    assert run.graph == ("AccumulateGrad", "MySiLUBackward")  # sorted: a set of names
    assert run.calls == 1
    assert report.warnings == ("UserWarning: careful",)
    assert parse_exercise_report(report_to_wire(report)) == report


def test_no_graph_is_none_and_too_large_is_said() -> None:
    [run] = parse_exercise_report(_report()).results
    assert run.graph is None and run.calls is None and not run.graph_too_large
    [run] = parse_exercise_report(_report(graph_too_large=True)).results
    assert run.graph_too_large


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("graph", "SiluBackward0"),  # not a list
        ("graph", ["Silu Backward0"]),  # not an identifier
        ("graph", ["MySiLUBackward", "MySiLUBackward"]),  # a name twice
        ("graph", [{"tensor": "float64"}]),
        ("graph", [f"Node{n}" for n in range(MAX_GRAPH_NAMES + 1)]),
        ("graph", ["A" * 101]),
        ("calls", -1),
        ("calls", True),
        ("calls", 1.0),
        ("calls", "2"),
    ],
)
def test_a_bad_graph_or_count_refuses_the_report(field: str, value: object) -> None:
    with pytest.raises(ExerciseReportInvalid):
        parse_exercise_report(_report(**{field: value}))


def test_too_many_warnings_refuse_the_report() -> None:
    raw = _report()
    raw["warnings"] = ["UserWarning: x"] * 11
    with pytest.raises(ExerciseReportInvalid):
        parse_exercise_report(raw)


RULE = GraphRule(
    require=("MySiLUBackward",),
    refuse=("SiluBackward0", "MulBackward0"),
    why="the exercise asks for MySiLU's hand-written backward",
)
REF = CheckRun(graph=("AccumulateGrad", "MySiLUBackward"), has_result=True)


@pytest.mark.parametrize(
    ("graph", "too_large", "why"),
    [
        (("AccumulateGrad", "MySiLUBackward"), False, None),
        (("AccumulateGrad", "SiluBackward0"), False, "has no MySiLUBackward node"),
        (("AccumulateGrad", "MulBackward0", "MySiLUBackward"), False, "holds MulBackward0"),
        (None, False, "the result has no autograd graph"),
        (None, True, "too large to read"),
    ],
)
def test_a_graph_rule_requires_and_refuses_node_types(
    graph: tuple[str, ...] | None, too_large: bool, why: str | None
) -> None:
    mine = CheckRun(graph=graph, graph_too_large=too_large, has_result=True)
    got = graph_differs(RULE, mine, REF)
    if why is None:
        assert got is None
    else:
        assert got is not None and why in got


def test_a_check_whose_reference_has_no_graph_is_not_judged_by_it() -> None:
    no_graph = CheckRun(has_result=True)
    assert graph_differs(RULE, CheckRun(graph=("SiluBackward0",)), no_graph) is None
    assert graph_differs(None, CheckRun(graph=("SiluBackward0",)), REF) is None


def test_a_rule_that_names_nothing_or_both_ways_is_refused() -> None:
    with pytest.raises(ValueError, match="names a node to `require` or to `refuse`"):
        GraphRule(why="nothing")
    with pytest.raises(ValueError, match="both required and refused: MulBackward0"):
        GraphRule(require=("MulBackward0",), refuse=("MulBackward0",), why="both")
    with pytest.raises(ValueError, match="should match pattern"):
        GraphRule(require=("Mul Backward",), why="not a type name")
