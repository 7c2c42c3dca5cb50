"""/healthz and /metrics over a real socket, as a probe or Prometheus would call them."""

from __future__ import annotations

import aiohttp

from bot.health import HealthServer
from bot.metrics import Metrics


async def test_healthz_is_ok_when_every_check_passes_and_names_the_failing_one() -> None:
    state = {"gateway": True}

    async def gateway() -> bool:
        return state["gateway"]

    async def broken() -> bool:
        raise RuntimeError("database is locked")

    async def database() -> bool:
        return True

    server = HealthServer(Metrics(), {"gateway": gateway, "database": database}, port=0)
    await server.start()
    try:
        async with aiohttp.ClientSession() as http:
            url = f"http://127.0.0.1:{server.port}/healthz"
            async with http.get(url) as resp:
                assert resp.status == 200
                assert await resp.json() == {
                    "status": "ok",
                    "checks": {"gateway": True, "database": True},
                }
            state["gateway"] = False
            async with http.get(url) as resp:
                assert resp.status == 503
                assert (await resp.json())["checks"]["gateway"] is False
    finally:
        await server.stop()

    failing = HealthServer(Metrics(), {"database": broken}, port=0)
    await failing.start()
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{failing.port}/healthz") as resp,
        ):
            assert resp.status == 503
            assert await resp.json() == {"status": "unhealthy", "checks": {"database": False}}
    finally:
        await failing.stop()


async def test_metrics_are_in_prometheus_text_format() -> None:
    metrics = Metrics()
    metrics.posts.labels(origin="scheduled").inc()
    metrics.answers.labels(status="recorded").inc(3)
    metrics.runs.labels(outcome="timeout").inc()
    metrics.run_seconds.observe(0.2)
    server = HealthServer(metrics, {}, port=0)
    await server.start()
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{server.port}/metrics") as resp,
        ):
            assert resp.status == 200
            assert resp.headers["Content-Type"].startswith("text/plain; version=")
            text = await resp.text()
    finally:
        await server.stop()
    assert 'studybot_posts_total{origin="scheduled"} 1.0' in text
    assert 'studybot_answers_total{status="recorded"} 3.0' in text
    assert 'studybot_snippet_runs_total{outcome="timeout"} 1.0' in text
    assert 'studybot_snippet_run_seconds_bucket{le="0.25"} 1.0' in text


def test_every_series_is_there_from_the_first_scrape() -> None:
    text = Metrics().exposition().decode()
    for series in (
        'studybot_posts_total{origin="asked"} 0.0',
        'studybot_posts_total{origin="scheduled"} 0.0',
        'studybot_answers_total{status="recorded"} 0.0',
        'studybot_answers_total{status="duplicate"} 0.0',
        'studybot_answers_total{status="closed"} 0.0',
        'studybot_snippet_runs_total{outcome="ok"} 0.0',
        'studybot_snippet_runs_total{outcome="memory_limit"} 0.0',
        'studybot_snippet_runs_total{outcome="killed"} 0.0',
    ):
        assert series in text
