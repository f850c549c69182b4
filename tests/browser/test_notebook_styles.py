"""A notebook page with JupyterLab's full stylesheet and with the slim one that
tools/hooks/notebook_styles.py leaves: every element looks the same."""

from __future__ import annotations

import shutil

import pytest

from tests.browser import sitepages
from tests.browser.server import SiteServer
from tools import layout
from tools.hooks.notebook_styles import slim_notebook_styles

pytestmark = pytest.mark.browser

COMPUTED_JS = """() => [...document.querySelectorAll('article *')].map(e => {
  const style = getComputedStyle(e);
  let out = e.tagName + '|';
  for (let i = 0; i < style.length; i++)  // custom properties show up through what reads them
    if (!style[i].startsWith('--')) out += style[i] + ':' + style.getPropertyValue(style[i]) + ';';
  for (const pseudo of ['::before', '::after']) {
    const p = getComputedStyle(e, pseudo);
    out += pseudo + p.content + p.color + p.backgroundColor + p.display;
  }
  return out;
})"""


FINISHED_JS = """() => Promise.all(document.getAnimations()
  .filter(a => a.effect && a.effect.getComputedTiming().endTime !== Infinity)
  .map(a => a.finished))"""


@pytest.mark.parametrize("notebook", ["alibi.ipynb", "rope-playground.zh.ipynb"])
def test_every_element_of_a_notebook_looks_the_same(browser, notebook, tmp_path) -> None:
    """A notebook converted the way mkdocs-jupyter converts it (its full JupyterLab
    stylesheet) and the same page slimmed: every element of the article has the same computed
    style, pseudo-elements included, in the light and the dark scheme."""
    from mkdocs_jupyter.nbconvert2 import nb2html

    if not (sitepages.SITE / "assets" / "stylesheets").is_dir():
        pytest.skip("the site is not built (make build): material's stylesheets come from it")
    body = nb2html(str(layout.ROOT / "docs" / "notebooks" / notebook))
    shutil.copytree(sitepages.SITE / "assets", tmp_path / "assets")
    links = "".join(
        f'<link rel="stylesheet" href="../../assets/stylesheets/{css.name}">'
        for css in sorted((sitepages.SITE / "assets" / "stylesheets").glob("*.css"))
    )
    # each page is written in its colour scheme: switched after loading, material's colour
    # transitions (125-250 ms) would be read half-way, at a point that depends on the load
    # of the machine (the slate comparison failed so in a busy make test)
    for scheme in ("default", "slate"):
        full = (
            f'<!doctype html><html><head><meta charset="utf-8">{links}</head>'
            f'<body data-md-color-scheme="{scheme}">'
            f'<article class="md-content__inner md-typeset">{body}</article></body></html>'
        )
        slim = slim_notebook_styles(full)
        assert len(slim) < len(full) / 2, "the slim page kept most of the stylesheet"
        for name, text in (("full", full), ("slim", slim)):
            (tmp_path / "nb" / scheme / name).mkdir(parents=True)
            (tmp_path / "nb" / scheme / name / "index.html").write_text(text, "utf-8")
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    with SiteServer(tmp_path) as server:
        for scheme in ("default", "slate"):
            seen = {}
            for name in ("full", "slim"):
                page.goto(server.url + f"nb/{scheme}/{name}/")
                # and anything that animates on its own (none today) is read where it ends
                page.evaluate(FINISHED_JS)
                seen[name] = page.evaluate(COMPUTED_JS)
            assert len(seen["full"]) == len(seen["slim"]) > 200
            differ = [
                i for i, (a, b) in enumerate(zip(seen["full"], seen["slim"], strict=True)) if a != b
            ]
            assert not differ, _differences(notebook, scheme, seen, differ)
    page.close()


def _differences(notebook: str, scheme: str, seen: dict, differ: list[int]) -> str:
    """Which element, and which properties, differ: the full stylesheet's value and the slim
    one's (the first three elements)."""
    lines = [f"{notebook}, {scheme} scheme: {len(differ)} elements styled differently"]
    for i in differ[:3]:
        full, slim = (dict(_properties(seen[name][i])) for name in ("full", "slim"))
        changed = sorted(k for k in full.keys() | slim.keys() if full.get(k) != slim.get(k))
        lines.append(f"  element {i} <{seen['full'][i].split('|', 1)[0].lower()}>:")
        lines += [f"    {k}: full {full.get(k)!r}, slim {slim.get(k)!r}" for k in changed[:8]]
    return "\n".join(lines)


def _properties(computed: str):
    """(property, value) pairs of one COMPUTED_JS string ('TAG|prop:value;...::before...')."""
    styles = computed.split("|", 1)[1].split("::before", 1)[0]
    for declaration in styles.split(";"):
        if ":" in declaration:
            yield tuple(declaration.split(":", 1))
    yield ("pseudo-elements", computed.split("::before", 1)[1] if "::before" in computed else "")
