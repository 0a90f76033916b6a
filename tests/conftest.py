"""Shared pytest settings: Hypothesis profiles and the golden-file update switch.

Hypothesis runs derandomized by default (the examples follow from each test's
source, not from a clock), so every run, on CI and locally, tries the same
cases. ``HYPOTHESIS_PROFILE=explore`` draws fresh random examples instead.
"""

from __future__ import annotations

import os

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
