"""The no-repeat rule for a batch of due schedules (``Posting.pick_batch``).

The scheduler's tests run it end to end with real databases; these pin the rule itself.
"""

from __future__ import annotations

import random

from bot.services.posting import Posting
from bot.storage.packs import Candidate


def posting(seed: int) -> Posting:
    return Posting(None, None, None, None, random.Random(seed))  # type: ignore[arg-type]


def test_a_channel_due_twice_in_one_batch_gets_two_different_questions() -> None:
    fresh = [Candidate(1, 0), Candidate(2, 0), Candidate(3, 0)]
    for seed in range(30):
        picks = posting(seed).pick_batch([(10, 7), (11, 7)], {10: fresh, 11: fresh})
        assert set(picks) == {10, 11}
        assert picks[10] != picks[11]


def test_the_least_posted_question_is_picked_and_channels_do_not_share_counts() -> None:
    seen = [Candidate(1, 3), Candidate(2, 0), Candidate(3, 5)]
    picks = posting(1).pick_batch([(10, 7), (20, 8)], {10: seen, 20: seen})
    assert picks == {10: 2, 20: 2}  # each channel's own history; 2 is the least posted


def test_a_schedule_without_candidates_is_left_out() -> None:
    picks = posting(2).pick_batch([(10, 7), (11, 7)], {10: [Candidate(4, 0)], 11: []})
    assert picks == {10: 4}


def test_a_channel_due_more_often_than_it_has_questions_starts_a_new_round() -> None:
    only_two = [Candidate(1, 0), Candidate(2, 0)]
    picks = posting(3).pick_batch(
        [(10, 7), (11, 7), (12, 7)], {10: only_two, 11: only_two, 12: only_two}
    )
    assert picks[10] != picks[11]
    assert picks[12] != picks[11]  # never the question it saw last while there is another
