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
from tools import layout

FAILURES = layout.ROOT / "artifacts" / "failures"


def _missing(what: str) -> None:
    if os.environ.get("POSENC_REQUIRE_BROWSER") == "1":
        pytest.fail(what, pytrace=False)
    pytest.skip(what)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if REPORT:
        terminalreporter.section("browser budgets")
        for line in REPORT:
            terminalreporter.write_line(line)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing browser test says where the browser was: the address of each page it had
    open, the size of the window and a picture of it (artifacts/failures/<test>.png), next to
    pytest's own account of what was expected and what was seen."""
    report = yield
    if report.when == "call" and report.failed:
        pages = [value for value in item.funcargs.values() if hasattr(value, "screenshot")]
        pages += [p for v in item.funcargs.values() if isinstance(v, dict) for p in v.values()
                  if hasattr(p, "screenshot")]  # fmt: skip
        lines = []
        for number, page in enumerate(pages):
            try:
                if page.is_closed():
                    continue
                FAILURES.mkdir(parents=True, exist_ok=True)
                picture = FAILURES / f"{_safe(item.nodeid)}-{number}.png"
                page.screenshot(path=picture)
                lines.append(f"{page.url} (window {page.viewport_size}): {picture}")
            except Exception as err:  # noqa: BLE001 - the report must not hide the failure
                lines.append(f"(page {number}: no picture, {type(err).__name__}: {err})")
        if lines:
            report.sections.append(("where the browser was", "\n".join(lines)))
    return report


def _safe(nodeid: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in nodeid)[-120:]


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
