"""Helpers the browser tests share (conftest.py holds the fixtures)."""

from __future__ import annotations

import os
import shutil
from urllib.parse import urlparse

from tools import layout

SCREENSHOTS = layout.ROOT / "artifacts" / "screenshots"
DESKTOP = {"width": 1280, "height": 800}
MOBILE = {"width": 390, "height": 844}

# what Debian calls it; POSENC_CHROMIUM overrides (e.g. /usr/bin/google-chrome)
CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")
CHROMIUM_ARGS = [
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    wanted = os.environ.get("POSENC_CHROMIUM")
    for name in [wanted] if wanted else CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


# what the run prints at the end (Lighthouse scores, page weight)
REPORT: list[str] = []


def new_context(browser, site_url: str, **options):
    """A context that records requests leaving 127.0.0.1 (the site must make none)."""
    options.setdefault("viewport", DESKTOP)
    options.setdefault("color_scheme", "light")
    options.setdefault("service_workers", "block")
    context = browser.new_context(base_url=site_url, **options)
    context.set_default_timeout(15_000)
    host = urlparse(site_url).netloc
    context.foreign_requests = []

    def on_request(request):
        url = urlparse(request.url)
        if url.scheme in ("http", "https", "ws", "wss") and url.netloc != host:
            context.foreign_requests.append(request.url)

    context.on("request", on_request)
    return context


class Watch:
    """Console errors, uncaught exceptions and failed requests of one page."""

    def __init__(self, page) -> None:
        self.problems: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.problems.append(f"uncaught exception: {exc}"))
        page.on("requestfailed", self._failed)
        page.on("response", self._response)

    def _console(self, message) -> None:
        if message.type == "error":
            self.problems.append(f"console error: {message.text} at {message.location}")

    def _failed(self, request) -> None:
        # ERR_ABORTED: the test itself left the page (reload, click) while it was loading
        if request.failure != "net::ERR_ABORTED":
            self.problems.append(f"request failed: {request.url} ({request.failure})")

    def _response(self, response) -> None:
        if response.status >= 400:
            self.problems.append(f"HTTP {response.status}: {response.url}")


class FrontPages(dict):
    """Pages by language; the one a test takes is brought to the front first. Chromium runs a
    page behind another of the same window at background pace (its timers and animation
    frames about once a second): each control set and each redraw waited ~1 s, 3 s a test."""

    def __getitem__(self, lang):
        page = super().__getitem__(lang)
        page.bring_to_front()
        return page
