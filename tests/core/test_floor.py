"""The floor under the core (issue 28, part 5): loading every module of ``bot.core`` loads no
sandbox runtime (client, manager, jails), no question tooling (loader, linter, checker,
importers) and no platform library: only the plain types the core renders.

``lint-imports`` holds the same rule for imports written in the code (pyproject.toml); this
test holds it for what actually loads, which a package's ``__init__`` can widen (importing
``bot.sandbox.result`` used to load the sandbox client through ``bot/sandbox/__init__.py``).
"""

from __future__ import annotations

import subprocess
import sys

PLAIN = {
    "bot.questions",
    "bot.questions.schema",
    "bot.questions.claims",  # the schema's vocabulary for what a check backs (pure text rules)
    "bot.sandbox",
    "bot.sandbox.result",
    "bot.sandbox.graph",
    "bot.sandbox.exercise",  # an exercise run's values, as plain frozen types
    "bot.questions.judge",  # comparing those values (pure functions over them)
    "bot.questions.typed",  # grading a typed answer (pure text and number rules)
}

LOAD_ALL_OF_CORE = """
import importlib, pkgutil, sys
import bot.core
for module in pkgutil.iter_modules(bot.core.__path__):
    importlib.import_module("bot.core." + module.name)
watched = ("bot.sandbox", "bot.questions", "discord", "slack_bolt", "slack_sdk", "aiohttp", "torch")
print("\\n".join(sorted(m for m in sys.modules if m.startswith(watched))))
"""


def test_the_core_loads_only_plain_types() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", LOAD_ALL_OF_CORE], capture_output=True, text=True, check=True
    )
    loaded = set(proc.stdout.split())
    assert loaded - PLAIN == set(), sorted(loaded - PLAIN)
    assert "bot.sandbox.result" in loaded  # the test sees what the core does load


def test_the_sandbox_package_still_offers_its_api() -> None:
    from bot.sandbox import Sandbox, SandboxConfig, SnippetRejected, validate_snippet

    assert Sandbox.__module__ == "bot.sandbox.client.local"
    assert SandboxConfig.__module__ == "bot.sandbox.config"
    assert issubclass(SnippetRejected, Exception) and callable(validate_snippet)
