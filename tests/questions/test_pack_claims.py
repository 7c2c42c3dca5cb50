"""Statements in the shipped pack's prose, checked against real torch.

`questions check` runs each item's own snippet; the statements below live in explanations,
answers, `why` notes and steps, where no snippet backs them. Each check pairs a sentence of
the pack (which must still be there, word for word) with code that shows it is true on
torch 2.13 (CPU). Several of them were wrong or vague before (issue 20): a check would have
caught each.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from bot.questions.loader import load_packs

PACK = Path(__file__).parents[2] / "questions" / "pytorch-dynamic-graphs.yaml"

FACTS = r"""
import json, torch
facts = {}
count = 0
def backend(gm, example_inputs):
    global count
    count += 1
    return gm.forward

@torch.compile(backend=backend)
def loop(x):
    h = torch.zeros(4)
    for t in range(x.shape[0]):
        h = torch.tanh(h + x[t])
    return h
graphs = []
for n in [7, 31, 12, 20, 9]:
    loop(torch.randn(n, 4)); graphs.append(count)
facts["loop_graphs"] = graphs

count = 0
@torch.compile(backend=backend)
def simple(x):
    return (x * 2).sum()
graphs = []
for n in [3, 4, 5, 1, 0, 7]:
    simple(torch.randn(n)); graphs.append(count)
facts["simple_graphs"] = graphs
import torch._dynamo.config as dynamo_config
facts["recompile_limit"] = dynamo_config.recompile_limit

with torch.no_grad():
    created = torch.ones(2, requires_grad=True)
    param = torch.nn.Parameter(torch.ones(2))
    result = created * 2
facts["no_grad"] = [created.requires_grad, param.requires_grad, result.requires_grad]

x = torch.tensor([1.0, 3.0, 2.0], requires_grad=True)
facts["int_bool"] = [(x > 1).requires_grad, x.argmax().requires_grad, (x == 3).requires_grad]

t = torch.ones(3, requires_grad=True)
facts["to_cpu"] = [t.to("cpu") is t, t.to("cpu").is_leaf, t.to(torch.float64).is_leaf]

def twice(f):
    x = torch.tensor(3.0, requires_grad=True)
    y = f(x)
    y.backward()
    try:
        y.backward()
    except RuntimeError as exc:
        return str(exc).split(" (")[0].split(".")[0]
    return x.grad.item()
facts["twice"] = [twice(lambda x: x + 1), twice(lambda x: x * x)]

w = torch.ones(2, requires_grad=True)
(w * 2).sum().backward()
try:
    w -= 0.1 * w.grad
    facts["inplace"] = "no error"
except RuntimeError as exc:
    facts["inplace"] = str(exc)
with torch.no_grad():
    w -= 0.1 * w.grad
facts["inplace_no_grad"] = [w.is_leaf, w.tolist()]

import torch._logging._internal as logging_internal
names = logging_internal.log_registry.artifact_names
facts["torch_logs"] = ["graph_breaks" in names, "recompiles" in names]
print(json.dumps(facts))
"""


@cache
def _facts() -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", FACTS],
        capture_output=True,
        text=True,
        timeout=240,
        check=True,
    )
    return json.loads(proc.stdout.splitlines()[-1])  # type: ignore[no-any-return]


@cache
def _texts() -> dict[str, str]:
    """Every item's prose, by id, with YAML's folded lines joined back into sentences."""
    packs = load_packs(PACK).packs
    out: dict[str, str] = {}
    for item in packs[0].pack.items:
        out[item.id] = " ".join(" ".join(_strings(item.model_dump(mode="json"))).split())
    return out


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for inner in value.values() for text in _strings(inner)]
    if isinstance(value, list | tuple):
        return [text for inner in value for text in _strings(inner)]
    return []


def _says(item_id: str, sentence: str) -> None:
    text = _texts()[item_id]
    assert " ".join(sentence.split()) in text, f"{item_id} no longer says: {sentence}"


pytestmark = pytest.mark.slow


def test_dg_mc_12_every_new_length_of_an_unrolled_loop_compiles_again() -> None:
    _says("dg-mc-12", "7, 31, 12, 20 and 9 tokens compile five graphs")
    _says("dg-mc-12", "`recompile_limit` (8 by default)")
    assert _facts()["loop_graphs"] == [1, 2, 3, 4, 5]
    assert _facts()["recompile_limit"] == 8


def test_dg_flash_08_sizes_0_and_1_are_specialised() -> None:
    _says("dg-flash-08", "sizes 3, 4, 5, 1, 0, 7 of `(x * 2).sum()` compile four graphs")
    _says("dg-flash-08", "a loop over `range(x.shape[0])` is unrolled, so every new length")
    assert _facts()["simple_graphs"] == [1, 2, 2, 3, 4, 4]
    assert _facts()["loop_graphs"][-1] == 5


def test_dg_open_01_a_loop_over_the_tokens_compiles_per_length() -> None:
    _says("dg-open-01", "as a loop over the tokens does: then every new length compiles again")
    assert len(set(_facts()["loop_graphs"])) == 5


def test_dg_flash_05_tensors_made_under_no_grad_can_still_require_grad() -> None:
    _says("dg-flash-05", "an `nn.Parameter` made there, still requires grad")
    assert _facts()["no_grad"] == [True, True, False]


def test_dg_flash_09_integer_and_bool_results_never_require_grad() -> None:
    _says(
        "dg-flash-09", "comparisons, `argmax` and other integer or bool results never require grad"
    )
    assert _facts()["int_bool"] == [False, False, False]


def test_dg_mc_04_to_cpu_on_cpu_returns_the_same_leaf() -> None:
    _says("dg-mc-04", '`.to("cpu")` returns the same leaf')
    assert _facts()["to_cpu"] == [True, True, False]


def test_dg_flash_06_and_dg_mc_07_second_backward() -> None:
    _says("dg-flash-06", "as soon as it needs one of those freed values")
    _says("dg-mc-07", "with `y = x * x` instead, the answer changes")
    added, squared = _facts()["twice"]
    assert added == 2.0
    assert squared == "Trying to backward through the graph a second time"


def test_dg_prac_11_in_place_update_of_a_leaf_and_the_no_grad_fix() -> None:
    _says("dg-prac-11", "That is why optimizers update parameters under `torch.no_grad()`")
    assert (
        "a leaf Variable that requires grad is being used in an in-place operation"
        in (_facts()["inplace"])
    )
    is_leaf, values = _facts()["inplace_no_grad"]
    assert is_leaf and values == pytest.approx([0.8, 0.8])


def test_torch_logs_names_the_documented_artifacts() -> None:
    _says("dg-flash-07", 'TORCH_LOGS="graph_breaks,recompiles"')
    assert _facts()["torch_logs"] == [True, True]
