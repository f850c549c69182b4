"""The page furniture a reader uses: the copy button copies the code, the dark/light toggle
switches the colour scheme (and back)."""

from __future__ import annotations

import pytest

from tests.browser import sitepages
from tests.browser.browsing import Watch, new_context

pytestmark = pytest.mark.browser

CHAPTERS = sitepages.chapters()


@pytest.mark.skipif(not CHAPTERS, reason="no chapter in the built site")
@pytest.mark.parametrize("lang", sitepages.LANGS)
def test_copy_button_copies_the_code(page, lang) -> None:
    chapter = next(p for p in CHAPTERS if p.lang == lang)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(chapter.rel)
    block = page.locator(".md-content pre:has(code)").first
    block.hover()  # the button shows on hover
    block.locator('button[data-md-type="copy"]').click()
    copied = page.evaluate("navigator.clipboard.readText()")
    code = block.locator("code").inner_text()
    assert copied.strip() and copied.strip() == code.strip()
    assert not page.watch.problems


BACKGROUND_JS = "getComputedStyle(document.body).backgroundColor"


@pytest.mark.parametrize("lang", sitepages.LANGS)
def test_dark_light_toggle(page, lang) -> None:
    page.goto("" if lang == sitepages.LANGS[0] else f"{lang}/")
    page.evaluate("localStorage.clear()")  # material keeps the reader's choice there
    page.reload()
    scheme = lambda: page.evaluate("document.body.dataset.mdColorScheme")  # noqa: E731
    assert scheme() == "default"
    light = page.evaluate(BACKGROUND_JS)
    page.locator("label.md-header__button[for='__palette_1']").click()
    page.wait_for_function("document.body.dataset.mdColorScheme === 'slate'")
    dark = page.evaluate(BACKGROUND_JS)
    assert dark != light, "the background did not change colour"
    page.locator("label.md-header__button[for='__palette_0']").click()
    page.wait_for_function("document.body.dataset.mdColorScheme === 'default'")
    assert page.evaluate(BACKGROUND_JS) == light
    # the choice persists to the next page
    page.locator("label.md-header__button[for='__palette_1']").click()
    page.reload()
    assert scheme() == "slate"
    page.evaluate("localStorage.clear()")
    assert not page.watch.problems


def test_first_visit_follows_the_system_colour_scheme(browser, site_url) -> None:
    """The switch is run by overrides/partials/palette.html, not by material's component: with
    nothing stored, a reader whose system is dark gets the dark scheme, and the switch shown
    is the one back to light."""
    context = new_context(browser, site_url, color_scheme="dark")
    page = context.new_page()
    page.watch = Watch(page)
    page.goto("")
    assert page.evaluate("document.body.dataset.mdColorScheme") == "slate"
    assert page.locator("label.md-header__button[for='__palette_0']").is_visible()
    assert not page.locator("label.md-header__button[for='__palette_1']").is_visible()
    assert page.evaluate("document.querySelector('meta[name=color-scheme]').content") == "dark"
    assert page.evaluate("__md_get('__palette').index") == 1  # kept for the next page
    assert not page.watch.problems
    context.close()
