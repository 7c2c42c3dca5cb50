"""The suggestion queue through the console: a member writes, an admin approves or rejects,
the author is told (a DM line), and the approved question's posts credit its author."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.adapters.test_console import _run_console
from tests.conftest import TEST_PACKS


def test_a_suggestion_approved_and_credited_and_one_rejected_with_its_reason(
    tmp_path: Path,
) -> None:
    packs = tmp_path / "packs"
    packs.mkdir()
    shutil.copy(TEST_PACKS / "mini.yaml", packs / "mini.yaml")
    out = _run_console(
        tmp_path / "s.sqlite3",
        "/as ann\n"
        "/write Which tensor is a leaf? | *One you created | The result of x * 2\n"
        "/suggestions\n"
        "/as bob\n/dms closed\n/write When is the graph freed? | = after backward()\n"
        "/as me --admin\n/suggestions\n"
        "/suggestions approve 1\n"
        "/suggestions reject 2\n"
        "/suggestions reject 2 say which graph\n"
        "/suggestions approve 2\n"
        "/suggestions approve 9\n"
        "/quiz community\n",
        packs=packs,
    )
    by_text = {str(line["text"]).split("\n", 1)[0]: line for line in out}
    queued = by_text["✍️ Suggestion #1: valid, waiting for an admin"]
    assert queued["member"] == "ann" and queued["ephemeral"] is True
    assert "Only admins can see and decide suggested questions" in str(out[2]["text"])
    texts = [str(line["text"]) for line in out]
    listing = next(t for t in texts if t.startswith("✍️ Suggested questions waiting (2)"))
    assert "#1 · ann" in listing and "#2 · bob" in listing

    [dm] = [line for line in out if line["kind"] == "dm"]  # ann takes DMs
    assert dm["member"] == "ann" and "is now `community-1` in the `community` pack" in str(
        dm["text"]
    )
    approved = "Suggestion #1 by ann is `community-1` now; ann was told by direct message."
    assert any(approved in t for t in texts)
    usage = next(line for line in out if line["kind"] == "error")
    assert "usage: /suggestions reject ID REASON: REASON is missing" in str(usage["text"])

    # bob closed his DMs: the reason is posted in the channel he wrote in.
    told = next(t for t in texts if t.startswith("Your question was not added, @bob"))
    assert "say which graph" in told
    assert any("Rejected suggestion #2 by bob" in t for t in texts)
    assert any("Suggestion #2 was already rejected." in t for t in texts)
    assert any("There is no suggestion #9 here" in t for t in texts)

    [post] = [line for line in out if line["kind"] == "post" and line.get("question_id")]
    assert post["question_id"] == "community-1"
    assert "Suggested by @ann" in str(post["text"])
