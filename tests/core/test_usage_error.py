"""One usage error for every front door (issue 28, part 2 in part): it carries its parts, and
no code tells a usage error by the words of its message."""

from __future__ import annotations

from bot.core.errors import BadInput, UsageError


def test_a_usage_error_says_the_line_and_what_was_wrong() -> None:
    assert str(UsageError("/quiz [PACK]")) == "usage: /quiz [PACK]"
    assert str(UsageError("/quiz [PACK]", reason="too many words")) == (
        "usage: /quiz [PACK]: too many words"
    )
    assert str(UsageError(reason="Use `/study history [N]`.")) == "Use `/study history [N]`."
    assert UsageError(reason="bad").shown("/history [N]") == "usage: /history [N]: bad"
    assert isinstance(UsageError(), BadInput)  # every platform's error handler shows it


def test_a_bad_input_that_reads_like_usage_is_not_a_usage_error() -> None:
    """The console once told usage errors by a ``usage:`` prefix: any text could pass."""
    error = BadInput("usage: this is a member's own words")
    assert not isinstance(error, UsageError)
