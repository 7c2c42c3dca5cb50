"""Prometheus metrics: what an operator graphs and alerts on.

One :class:`Metrics` object per process, with its own registry (not the global default), so
tests can build as many as they like and ``/metrics`` shows only studybot's series.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from bot.sandbox.result import Outcome
from bot.storage.answers import AnswerStatus

__all__ = ["Metrics"]

POST_ORIGINS = ("asked", "scheduled")


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.posts = Counter(
            "studybot_posts",
            "Questions posted, by origin (asked with quiz, or scheduled).",
            ["origin"],
            registry=self.registry,
        )
        self.answers = Counter(
            "studybot_answers",
            "Answer clicks, by what happened (recorded, duplicate, closed).",
            ["status"],
            registry=self.registry,
        )
        self.runs = Counter(
            "studybot_snippet_runs",
            "Snippet runs, by outcome (ok, error, timeout, memory_limit, killed).",
            ["outcome"],
            registry=self.registry,
        )
        self.run_seconds = Histogram(
            "studybot_snippet_run_seconds",
            "End-to-end snippet run latency as members see it.",
            buckets=(0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0),
            registry=self.registry,
        )
        self.scheduler_lag = Histogram(
            "studybot_scheduler_lag_seconds",
            "How long after its due time a scheduled question was sent.",
            buckets=(0.1, 0.5, 1.0, 5.0, 30.0, 60.0, 300.0, 3600.0),
            registry=self.registry,
        )

        # Every known label value starts at 0, so a rate() or an alert on "no timeouts yet"
        # sees the series from the first scrape instead of only after its first event.
        for origin in POST_ORIGINS:
            self.posts.labels(origin=origin)
        for status in AnswerStatus:
            self.answers.labels(status=status.value)
        for outcome in Outcome:
            self.runs.labels(outcome=outcome.value)

    def exposition(self) -> bytes:
        """The Prometheus text format of every series."""
        return generate_latest(self.registry)
