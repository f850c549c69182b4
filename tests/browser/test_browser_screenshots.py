"""A full-page screenshot of every chapter in every language at desktop and mobile width,
saved to artifacts/screenshots/ (git-ignored; CI uploads the folder as an artifact).

For people to look at, not a check (every page's rendering is checked by test_browser_pages):
`make screenshots` runs it, `make test` leaves it out (about 50 s of a worker)."""

from __future__ import annotations

import pytest

from tests.browser import sitepages
from tests.browser.browsing import DESKTOP, MOBILE, SCREENSHOTS, new_context

pytestmark = [pytest.mark.browser, pytest.mark.artifacts]

WIDTHS = {
    "desktop": {"viewport": DESKTOP},
    "mobile": {"viewport": MOBILE, "is_mobile": True, "has_touch": True},
}


EAGER_FIGURES_JS = """async () => {
  const images = [...document.images];
  images.forEach(img => { img.loading = 'eager'; });
  await Promise.all(images.map(img => img.decode().catch(() => null)));
}"""


@pytest.mark.parametrize("width", WIDTHS)
def test_screenshots_of_every_chapter(browser, site_url, width) -> None:
    chapters = sitepages.chapters()
    assert chapters, "no chapter in the built site"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    context = new_context(browser, site_url, **WIDTHS[width])
    try:
        page = context.new_page()
        for chapter in chapters:
            page.goto(chapter.rel, wait_until="load")
            page.evaluate("document.fonts.ready")
            # figures past the first screen load lazily (tools/hooks/below_the_fold.py):
            # all of them into the picture
            page.evaluate(EAGER_FIGURES_JS)
            name = chapter.rel.strip("/").replace("/", "-")
            if chapter.lang == sitepages.LANGS[0]:
                name = f"{chapter.lang}-{name}"
            path = SCREENSHOTS / f"{name}-{width}.jpg"
            page.screenshot(path=path, full_page=True, quality=80)  # JPEG: 2x faster than PNG
            assert path.stat().st_size > 10_000, f"{path.name} looks empty"
    finally:
        context.close()
