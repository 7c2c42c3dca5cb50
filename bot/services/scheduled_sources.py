"""The scheduled questions as due sources of the timer loop, built in the order members see
them in a pass: unconfirmed re-sends, reveals, retries of failed sends, then new posts (and
round starts) -- each new post reveals its "until the next question" predecessor just before.

:mod:`bot.app` builds these beside the other timed work (recaps, reminders, rounds, rewards)
and adds them to the loop first; the loop itself knows none of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from bot.core.clock import Clock
from bot.core.gateway import ChatGateway
from bot.core.lanes import Lanes
from bot.core.timer import DueSource
from bot.core.wakeup import Wakeup
from bot.metrics import Metrics
from bot.services.exams import Exams
from bot.services.extra_time import ExtraTime
from bot.services.posting import Posting
from bot.services.quiz import Quiz
from bot.services.rounds import Rounds
from bot.services.schedule_book import MIN_GRACE, ScheduleBook
from bot.services.schedule_source import PREPARE_LEAD, PREPARE_MIN, ScheduleSource
from bot.services.scheduled_posts import ScheduledPosts
from bot.services.scheduled_resends import ResendSource, RetrySource
from bot.services.scheduled_reveals import RevealSource
from bot.storage.database import Database
from bot.storage.directory import Directory
from bot.storage.packs import PackStore
from bot.storage.posts import PostStore

__all__ = ["LEASE", "ScheduledQuestions", "SchedulerParts", "scheduled_questions"]

LEASE = timedelta(seconds=45)
"""Several processes: how long a post row's claim holds (under RESEND_DELAY, so a process's
own retry of a failed send finds its lease expired)."""


@dataclass(frozen=True, slots=True)
class SchedulerParts:
    """What the scheduled questions' sources use, handed over by :mod:`bot.app`: the
    schedules, the posts and their reveals, the stores a due batch reads and writes, and the
    wake-up signal."""

    db: Database
    directory: Directory
    posts: PostStore
    packs: PackStore
    posting: Posting
    quiz: Quiz
    schedules: ScheduleBook
    wakeup: Wakeup
    metrics: Metrics | None = None
    rounds: Rounds | None = None  # a schedule with --round starts one
    exams: Exams | None = None  # daily questions lean toward an exam's tags as it nears
    extra_time: ExtraTime | None = None  # windows held open for members with extra time


@dataclass(frozen=True, slots=True)
class ScheduledQuestions:
    """The sources, in the order to add them, and the schedules' own (for ``next_post``)."""

    sources: list[DueSource]
    schedules: ScheduleSource


def scheduled_questions(
    parts: SchedulerParts,
    gateway: ChatGateway,
    clock: Clock,
    grace: timedelta,
    lanes: Lanes,
    *,
    lease: timedelta | None = None,
    prepare_lead: timedelta = PREPARE_LEAD,
    prepare_min: int = PREPARE_MIN,
) -> ScheduledQuestions:
    """Build the scheduled questions' sources over one :class:`ScheduledPosts` (whose retry
    table and batches they share). ``grace``: how late a missed occurrence may still post
    (never under ``MIN_GRACE``); ``lease``: several processes share the database."""
    grace = max(grace, MIN_GRACE)
    posts = ScheduledPosts(
        directory=parts.directory,
        posts=parts.posts,
        packs=parts.packs,
        posting=parts.posting,
        quiz=parts.quiz,
        schedules=parts.schedules,
        gateway=gateway,
        clock=clock,
        grace=grace,
        metrics=parts.metrics,
        lease=lease,
        rounds=parts.rounds,
    )
    posts.exams = parts.exams
    posts.extra_time = parts.extra_time
    reveals = RevealSource(posts, parts.posts, lanes)
    schedules = ScheduleSource(
        db=parts.db,
        directory=parts.directory,
        schedules=parts.schedules,
        posts=posts,
        gateway=gateway,
        clock=clock,
        grace=grace,
        lanes=lanes,
        replan_reveals=reveals.replan,
        refresh_reveals=reveals.refresh,
        prepare_lead=prepare_lead,
        prepare_min=prepare_min,
    )
    sources: list[DueSource] = [
        ResendSource(posts, parts.directory, gateway, lanes),
        reveals,
        RetrySource(posts),
        schedules,
    ]
    return ScheduledQuestions(sources, schedules)
