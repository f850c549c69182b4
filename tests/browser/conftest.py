"""Browser tests: headless Chromium (Debian's package) driven by Playwright against the
built site, served on 127.0.0.1 by tests/browser/server.py.

One browser for the whole run, one browser context per test module. ``make test`` installs
Chromium (``make browser-deps``) and builds the site first; then a missing browser or site
is an error (POSENC_REQUIRE_BROWSER=1). Run alone: ``make test-browser``.
"""

from __future__ import annotations

import os

import pytest

from tests.browser import sitepages
from tests.browser.browsing import CHROMIUM_ARGS, REPORT, Watch, chromium_path, new_context
from tests.browser.server import SiteServer


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
        _missing(
            "Chromium not found: `make browser-deps` installs it (apt-get install chromium "
            "fonts-noto-cjk); POSENC_CHROMIUM=/path/to/chrome uses another one"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        # Playwright gives the browser a fresh temporary profile (--user-data-dir) itself
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def context(browser, site_url):
    context = new_context(browser, site_url)
    yield context
    context.close()


@pytest.fixture
def page(context):
    page = context.new_page()
    page.watch = Watch(page)
    yield page
    page.close()
