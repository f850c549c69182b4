"""Every page of the built site, in both languages, loaded in headless Chromium: no console
error, no failed request, no request to another host; every formula rendered; every image
loaded with alt text; every internal link and anchor resolving; a copy button on every
code block; nothing moving while the page loads; no stylesheet started anew once the body
is there."""

from __future__ import annotations

from urllib.parse import unquote, urlparse

import pytest

from tests.browser import sitepages

pytestmark = pytest.mark.browser

PAGES = sitepages.pages()

# What moved while the page loaded (the layout shifts Lighthouse adds up), and where the first
# block the build let wait (tools/hooks/below_the_fold.py) lies against the window's height.
LOAD_SHIFTS_JS = """async () => {
  const shifts = [];
  const observer = new PerformanceObserver(list => shifts.push(...list.getEntries()));
  observer.observe({type: "layout-shift", buffered: true});
  await new Promise(resolve => setTimeout(resolve, 100));
  shifts.push(...observer.takeRecords());
  observer.disconnect();
  const name = node => node ? node.nodeName + (node.id ? "#" + node.id : "") : "?";
  const waiting = document.querySelector("[data-below-fold]");
  return {
    total: shifts.reduce((sum, shift) => sum + shift.value, 0),
    moved: shifts.flatMap(shift => shift.sources.map(source => name(source.node))),
    firstWaiting: waiting ? waiting.getBoundingClientRect().top + scrollY : null,
    screen: innerHeight,
  };
}"""
# Lighthouse calls a cumulative layout shift below 0.1 good; the site's pages measure ~0.002
# (the header's icons settling). A block laid out late on the first screen measured 0.18 here.
MAX_LOAD_SHIFT = 0.01

# Each change of a stylesheet link's address, and whether the page's body existed then: a new
# address starts the stylesheet anew, and on a laid-out page that means styling every element
# again (material's instant navigation makes every relative address absolute when its script
# starts; overrides/main.html does it for the head's links before the body exists).
STYLESHEET_WATCH_INIT = """
window.__posencStylesheetChanges = [];
new MutationObserver(records => {
  for (const record of records)
    if (record.target.matches('link[rel="stylesheet"]'))
      window.__posencStylesheetChanges.push({
        href: record.target.getAttribute("href"), body: document.body !== null,
      });
}).observe(document, {subtree: true, attributes: true, attributeFilter: ["href"]});
"""

# Text outside code and outside rendered formulas (class katex, tools/formulas.py); raw TeX
# delimiters there mean a formula was not rendered. Collapsed blocks (<details>) count: their
# formulas must be rendered too.
VISIBLE_TEXT_JS = """() => {
  const root = document.querySelector('.md-content').cloneNode(true);
  root.querySelectorAll('pre, code, script, style, .katex, .jp-InputArea, clipboard-copy')
      .forEach(e => e.remove());
  return root.textContent;
}"""

FORMULAS_JS = """() => {
  const math = [...document.querySelectorAll('.md-content .arithmatex')];
  return {
    total: math.length,
    unrendered: math.filter(e => !e.querySelector('.katex')).map(e => e.textContent.slice(0, 80)),
    katex: document.querySelectorAll('.md-content .katex').length,
  };
}"""

IMAGES_JS = """async () => {
  const images = [...document.images];
  images.forEach(img => { img.loading = 'eager'; });
  await Promise.all(images.map(img => img.decode().catch(() => null)));
  return images.map(img => ({
    src: img.currentSrc.slice(0, 120), alt: (img.getAttribute('alt') || '').trim(),
    width: img.naturalWidth,
  }));
}"""

# material mounts a code block (its copy button) when the block comes into view
# (content.lazy): collapsed blocks are opened, each block is scrolled to and given two
# frames, before it is checked.
CODE_BLOCKS_JS = """async () => {
  const frame = () => new Promise(resolve => requestAnimationFrame(resolve));
  const missing = [];
  let blocks = 0;
  document.querySelectorAll('.md-content details').forEach(details => { details.open = true; });
  for (const pre of document.querySelectorAll('.md-content pre')) {
    if (pre.closest('.jp-OutputArea, .jp-InputArea, .CodeMirror') || !pre.querySelector('code'))
      continue;
    pre.scrollIntoView();
    await frame();
    await frame();
  }
  document.querySelectorAll('.md-content pre').forEach(pre => {
    if (pre.closest('.jp-OutputArea')) return;            // notebook output, not code
    const cell = pre.closest('.jp-InputArea, .CodeMirror');
    if (cell) {                                           // notebook input cell
      blocks += 1;
      if (!cell.querySelector('clipboard-copy')) missing.push(pre.textContent.slice(0, 60));
      return;
    }
    if (!pre.querySelector('code')) return;
    blocks += 1;
    if (!pre.querySelector('button[data-md-type="copy"], .md-clipboard'))
      missing.push(pre.textContent.slice(0, 60));
  });
  return {blocks, missing};
}"""

_checked: dict[str, str | None] = {}  # link -> problem (None if it resolves)


def _link_problem(url: str, site_url: str) -> str | None:
    """Why an internal link does not resolve on the built site (None if it does)."""
    if url in _checked:
        return _checked[url]
    parsed = urlparse(url)
    path = sitepages.SITE / unquote(parsed.path).removeprefix(urlparse(site_url).path)
    if parsed.path.endswith("/") or path.is_dir():
        path = path / "index.html"
    problem = None
    if not path.is_file():
        problem = f"no such file {path.relative_to(sitepages.SITE)}"
    elif parsed.fragment and path.suffix == ".html":
        if unquote(parsed.fragment) not in sitepages.ids_in(path):
            problem = f"no anchor #{parsed.fragment} in {path.relative_to(sitepages.SITE)}"
    _checked[url] = problem
    return problem


def test_the_site_has_pages_in_both_languages(site_url) -> None:
    assert {p.lang for p in PAGES} == set(sitepages.LANGS)
    assert any(p.is_chapter for p in PAGES)


@pytest.mark.parametrize("site_page", PAGES, ids=str)
def test_page(page, site_page, site_url) -> None:
    problems: list[str] = []
    page.add_init_script(STYLESHEET_WATCH_INIT)
    page.goto(site_page.rel, wait_until="networkidle")

    # no stylesheet started anew after the body began (each one restyles the whole page)
    for change in page.evaluate("window.__posencStylesheetChanges"):
        if change["body"]:
            problems.append(f"stylesheet {change['href']} started anew with the body there")

    # nothing moves while the page loads; nothing the build let wait is on the first screen
    load = page.evaluate(LOAD_SHIFTS_JS)
    if load["total"] > MAX_LOAD_SHIFT:
        problems.append(f"layout shift {load['total']:.3f} while loading: {load['moved']}")
    if load["firstWaiting"] is not None and load["firstWaiting"] < load["screen"]:
        problems.append(f"a block marked data-below-fold at {load['firstWaiting']:.0f} px")

    # formulas: none left as TeX, each one rendered at build time (tools/formulas.py)
    text = page.evaluate(VISIBLE_TEXT_JS)
    for raw in ("\\(", "\\[", "$$"):
        if raw in text:
            at = text.index(raw)
            problems.append(f"raw TeX {raw!r} visible: ...{text[max(0, at - 40) : at + 40]}...")
    formulas = page.evaluate(FORMULAS_JS)
    problems += [f"formula not rendered: {f}" for f in formulas["unrendered"]]

    # images: loaded, with alt text
    for image in page.evaluate(IMAGES_JS):
        if not image["alt"]:
            problems.append(f"image without alt text: {image['src']}")
        if image["width"] == 0:
            problems.append(f"image did not load: {image['src']}")

    # internal links and anchors
    links = page.eval_on_selector_all("a[href]", "as => as.map(a => a.href)")
    for url in sorted(set(links)):
        if url.startswith(site_url):
            problem = _link_problem(url, site_url)
            if problem:
                problems.append(f"broken link {url}: {problem}")

    # a copy button on every code block
    code = page.evaluate(CODE_BLOCKS_JS)
    problems += [f"code block without a copy button: {m!r}" for m in code["missing"]]

    # what happened on the wire and in the console while all of that ran
    problems += page.watch.problems
    problems += [f"request to another host: {u}" for u in page.context.foreign_requests]
    page.context.foreign_requests.clear()

    assert not problems, f"{site_page}:\n  " + "\n  ".join(problems)
