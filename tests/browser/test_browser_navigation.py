"""Moving around the site: the language switch leads to the same page in the other language
and back, and pages reached by material's instant navigation (no full page load) still have
every formula rendered and a language switch that points at their own twin."""

from __future__ import annotations

import re

import pytest

from tests.browser import sitepages

pytestmark = pytest.mark.browser

PAGES = sitepages.pages()
DEFAULT = sitepages.LANGS[0]

SWITCH_JS = """() => Object.fromEntries([...document.querySelectorAll('.md-select__link[hreflang]')]
  .map(a => [a.hreflang, a.href]))"""

UNRENDERED_JS = """() => {
  const root = document.querySelector('.md-content').cloneNode(true);
  const unrendered = [...root.querySelectorAll('.arithmatex')]
    .filter(e => !e.querySelector('.katex'));
  root.querySelectorAll('pre, code, script, style, .katex, .jp-InputArea').forEach(e => e.remove());
  const text = root.textContent;
  return unrendered.map(e => e.textContent.slice(0, 80))
    .concat(['\\\\(', '\\\\[', '$$'].filter(d => text.includes(d)).map(d => 'raw ' + d));
}"""


def _page_of(url: str) -> str:
    return url.split("#", 1)[0]


def _same_page(expected: str):
    return lambda url: _page_of(url) == expected


def _switch_language(page, lang: str) -> None:
    page.hover(".md-header .md-select")
    page.click(f'.md-header .md-select__link[hreflang="{lang}"]')


@pytest.mark.parametrize("site_page", [p for p in PAGES if p.lang == DEFAULT], ids=str)
def test_language_switch_goes_to_the_twin_and_back(page, site_page, site_url) -> None:
    page.goto(site_page.rel)
    for lang in sitepages.LANGS[1:]:
        twin = site_page.in_lang(lang)
        _switch_language(page, lang)
        # material keeps the section the reader was in (#anchor, from navigation.tracking)
        page.wait_for_url(_same_page(site_url + twin.rel))
        assert {k: _page_of(v) for k, v in page.evaluate(SWITCH_JS).items()} == {
            DEFAULT: site_url + site_page.rel,
            lang: site_url + twin.rel,
        }
        _switch_language(page, DEFAULT)
        page.wait_for_url(_same_page(site_url + site_page.rel))
    assert not page.watch.problems


@pytest.mark.parametrize("lang", sitepages.LANGS)
def test_instant_navigation_keeps_formulas_and_language_switch(page, lang, site_url) -> None:
    """From this language's home page, reach every other page of the language in turn the
    way a reader does (a click on a link, handled by material's instant navigation)."""
    targets = [p for p in PAGES if p.lang == lang and p.base]
    assert targets
    home = sitepages.Page("" if lang == DEFAULT else f"{lang}/")
    # material's instant navigation only follows links listed in the language's sitemap,
    # which it fetches after the page loads: clicking before that is a normal page load
    with page.expect_response(lambda response: response.url.endswith("sitemap.xml")):
        page.goto(home.rel)
    page.wait_for_load_state("networkidle")
    page.evaluate("window.__sameDocument = true")  # gone if a page loads the normal way
    # material announces each page it has swapped in on document$ (the language switch is
    # updated there too); the address changes earlier, when the click is handled
    page.evaluate("window.__documents = 0; document$.subscribe(() => window.__documents++)")
    problems = []
    for target in targets:
        swapped = page.evaluate("window.__documents")
        page.evaluate(
            """url => { const a = document.createElement('a'); a.href = url;
                                  document.body.appendChild(a); a.click(); }""",
            site_url + target.rel,
        )
        page.wait_for_url(site_url + target.rel)
        page.wait_for_function("swapped => window.__documents > swapped", arg=swapped)
        if not page.evaluate("window.__sameDocument === true"):
            problems.append(f"{target}: reached by a full page load, not instant navigation")
            page.evaluate("window.__sameDocument = true")
        problems += [f"{target}: {p}" for p in page.evaluate(UNRENDERED_JS)]
        switch = page.evaluate(SWITCH_JS)
        twin = target.twin
        if switch.get(twin.lang) != site_url + twin.rel:
            problems.append(
                f"{target}: language switch points to {switch.get(twin.lang)}, "
                f"not to its twin {twin}"
            )
    problems += page.watch.problems
    assert not problems, "\n".join(problems)


def test_instant_navigation_is_on_in_every_language(page, site_url) -> None:
    """Material only navigates instantly to addresses listed in the language's sitemap."""
    for lang in sitepages.LANGS:
        prefix = "" if lang == DEFAULT else f"{lang}/"
        response = page.request.get(site_url + prefix + "sitemap.xml")
        assert response.ok, f"{prefix}sitemap.xml: HTTP {response.status}"
        assert re.search(r"<loc>[^<]*/" + re.escape(prefix) + "chapters/", response.text())
