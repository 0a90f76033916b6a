"""Shared pytest settings: Hypothesis profiles and the golden-file update switch.

Hypothesis runs derandomized by default (the examples follow from each test's
source, not from a clock), so every run, on CI and locally, tries the same
cases. ``HYPOTHESIS_PROFILE=explore`` draws fresh random examples instead.
"""

from __future__ import annotations

import os
import signal

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "explore",
    derandomize=False,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_configure(config: pytest.Config) -> None:
    """Take Ctrl-C back when the run was started with it ignored.

    A shell without job control starts a background command (``scripts/test.sh &`` in a
    script, ``nohup``) with SIGINT ignored, and an ignored signal stays ignored in every
    program it starts: each referee, web server and bot a test runs would then ignore the
    Ctrl-C the test sends it to see it stop cleanly, and the test would wait out its
    deadline and fail. A handler of our own is reset to the default in a child, so the
    children get Ctrl-C as a user's terminal gives it. (The product itself keeps an
    inherited ignore, as a background program should.)"""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/golden/*.txt from the engine instead of comparing with them",
    )


@pytest.fixture(scope="session")
def postgres_url():  # type: ignore[no-untyped-def]
    """A real PostgreSQL server for this test session (tests/postgres_support.py)."""
    from postgres_support import postgres_server

    with postgres_server() as url:
        yield url


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Start building the starter bots as soon as a run includes their tests, so that
    the slow builds (Rust, Java) run at low priority beside the tests before them.
    Last of the hooks, so a run that deselects them (``-m "not slow"``) builds nothing.
    Under several test processes (pytest-xdist) every one collects every test but only
    one runs that file: the builds start there, from the file's fixture, not twice."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        return
    if any(item.nodeid.startswith("tests/test_starter_bots.py") for item in items):
        from starter_builds import BUILDS_KEY, start_builds

        config.stash[BUILDS_KEY] = start_builds()
