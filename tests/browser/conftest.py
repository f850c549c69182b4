"""Browser tests: headless Chromium (Debian's package) driven by Playwright against the
built site, served on 127.0.0.1 by tools/serve_site.py.

One browser for the whole run, one browser context per test module. ``make test`` installs
Chromium (``make browser-deps``) and builds the site first; then a missing browser or site
is an error (POSENC_REQUIRE_BROWSER=1). Run alone: ``make test-browser``.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import sitepages  # noqa: E402
from serve_site import SiteServer  # noqa: E402

ROOT = sitepages.ROOT
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
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
DESKTOP = {"width": 1280, "height": 800}
MOBILE = {"width": 390, "height": 844}

# what the run prints at the end (Lighthouse scores, page weight)
REPORT: list[str] = []


def chromium_path() -> str | None:
    wanted = os.environ.get("POSENC_CHROMIUM")
    for name in [wanted] if wanted else CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _missing(what: str) -> None:
    if os.environ.get("POSENC_REQUIRE_BROWSER") == "1":
        pytest.fail(what, pytrace=False)
    pytest.skip(what)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if REPORT:
        terminalreporter.section("browser budgets")
        for line in REPORT:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def site_url() -> str:
    if not sitepages.built():
        _missing(f"{sitepages.SITE} is not built: run `make build` (make test does it first)")
    with SiteServer(sitepages.SITE) as server:
        yield server.url


@pytest.fixture(scope="session")
def browser():
    executable = chromium_path()
    if executable is None:
        _missing("Chromium not found: `make browser-deps` installs it (apt-get install chromium "
                 "fonts-noto-cjk); POSENC_CHROMIUM=/path/to/chrome uses another one")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        # Playwright gives the browser a fresh temporary profile (--user-data-dir) itself
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


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


@pytest.fixture(scope="module")
def context(browser, site_url):
    context = new_context(browser, site_url)
    yield context
    context.close()


class Watch:
    """Console errors, uncaught exceptions and failed requests of one page."""

    def __init__(self, page) -> None:
        self.problems: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.problems.append(f"uncaught exception: {exc}"))
        page.on("requestfailed", lambda r: self.problems.append(
            f"request failed: {r.url} ({r.failure})"))
        page.on("response", self._response)

    def _console(self, message) -> None:
        if message.type == "error":
            self.problems.append(f"console error: {message.text} at {message.location}")

    def _response(self, response) -> None:
        if response.status >= 400:
            self.problems.append(f"HTTP {response.status}: {response.url}")


@pytest.fixture
def page(context):
    page = context.new_page()
    page.watch = Watch(page)
    yield page
    page.close()
