"""Platform ids are checked where they enter the core: a context whose member, channel or
workspace id holds NUL or another control character is refused with a clear message."""

from __future__ import annotations

import pytest

from bot.core.errors import BadInput
from bot.core.models import ChatContext
from bot.text import id_problem


def test_an_id_with_a_control_character_never_reaches_the_core() -> None:
    """Whatever the adapter (a Slack payload, the web page), the context refuses it."""
    with pytest.raises(BadInput, match=r"The member id 'U1\\x00' holds a control character"):
        ChatContext("slack", "T1", "C1", "U1\x00", "ann")
    with pytest.raises(BadInput, match=r"The channel id 'C\\x07' holds a control character"):
        ChatContext("slack", "T1", "C\x07", "U1", "ann")
    with pytest.raises(BadInput, match=r"The workspace id 'T\\x00' holds"):
        ChatContext("slack", "T\x00", "C1", "U1", "ann")


def test_ids_of_every_platform_pass() -> None:
    for value in ("U0ALICE", "1180000000000000042", "me", "anna maría", "général"):
        assert id_problem(value, "x") is None
    assert id_problem("a\ud800", "x") == (
        "x holds a control character (\\ud800 at position 2); ids and names are plain text"
    )
