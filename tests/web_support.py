"""Support for the web page's tests: HTTP on a real socket, and a real headless Chromium.

Chromium comes from Debian's ``chromium`` package (scripts/test.sh installs it);
Playwright's own browser download cannot be fetched here, so Playwright is
pointed at that executable. Without it the browser tests skip, except under
CI=true, where a missing browser is an error. Playwright's sync API runs in a
worker thread of its own, so the referee's trio loop keeps running meanwhile.
"""

from __future__ import annotations

import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    """The Chromium executable, or skip (fail under CI=true) when there is none."""
    for candidate in (os.environ.get("ODDTRICK_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and os.path.exists(candidate):
            return candidate
    message = "no Chromium (Debian: apt-get install chromium; scripts/test.sh does it)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@contextmanager
def browser_page(width: int = 1100, height: int = 900) -> Iterator[Any]:
    """A page in a fresh headless Chromium; JavaScript errors fail the test."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            yield page
            assert not errors, errors
        finally:
            browser.close()


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, dict[str, str]]:
    """GET ``url``: the status, the body as text and the headers (no redirects followed);
    ``headers`` are sent with it (a ``Host`` given here replaces the URL's)."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, headers=headers or {}), timeout=30) as response:
            return response.status, response.read().decode("utf-8"), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace"), dict(error.headers)


def cards_shown(page: Any, selector: str) -> list[str]:
    """The cards (``data-card``) inside ``selector``, in page order."""
    return page.eval_on_selector_all(f"{selector} [data-card]", "nodes => nodes.map(n => n.dataset.card)")


def decision_time(record: dict[str, Any]) -> str:
    """What the page says of a logged decision's time: the bot's own think time when it
    reported one, then the referee's measure (lag included); empty for a fallback."""

    def duration(ms: int) -> str:
        return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s"

    if record.get("think_ms") is None:
        return ""
    answered = f"answered in {duration(record['think_ms'])}"
    own = record.get("bot_think_ms")
    return answered if own is None else f"thought {duration(own)}, {answered}"
