"""``/accommodation`` in the console: set privately, refused in one line, and a round that
waits for the accommodated player's own deadline."""

from __future__ import annotations

from pathlib import Path

from tests.adapters.test_console import _run_console


def test_accommodations_in_the_console(tmp_path: Path) -> None:
    out = _run_console(
        tmp_path / "acc.sqlite3",
        "/as bob\n/quiz\n/as me\n"
        "/accommodation set bob --time 0\n/accommodation set bob --time x100\n"
        "/accommodation set nobody --time 2\n/accommodation set bob --time 2\n"
        "/accommodation\n/as bob\n/accommodation\n/accommodation set me --time 2\n",
    )
    texts = [str(line["text"]) for line in out]
    assert any("not x0" in t for t in texts) and any("not x100" in t for t in texts)
    assert any("No member called `nobody`" in t for t in texts)
    assert any(t.startswith("♿ bob: x2 time") for t in texts)
    assert "• bob: x2 time" in texts
    assert "♿ Your accommodation: x2 time." in texts
    assert texts[-1] == "Only admins set accommodations."
