"""MkDocs hook: where a page's figures and code come from.

* Every figure drawn by a snippet gets a caption naming the script that drew it, linked to
  the file in the repository (tools/figures.py records which script saved which figure).
* Every page that shows code says under it which torch and Python its code ran with: the
  versions installed where the site is built, which are the ones the tests run with (one
  lock file; ``make test`` builds and tests in the same environment, and
  tests/site/test_provenance.py checks the page against the test's own torch).
"""

from __future__ import annotations

import html
import platform
import re
from importlib import metadata
from pathlib import Path

from tools import figures, layout

CAPTION = {
    "en": 'Drawn by <a href="{href}"><code>{script}</code></a>.',
    "zh": '由 <a href="{href}"><code>{script}</code></a> 绘制。',
}
_FIGURE = re.compile(
    r'<p>(?P<img><img\b[^>]*\bsrc="(?P<src>[^"]*figures/(?P<name>[^"/]+\.svg))"[^>]*>)</p>'
)
_state: dict[str, str] = {}


def ran_with() -> str:
    """``torch 2.13.0, Python 3.11.7``: read from the installed packages, nothing imported."""
    return f"torch {metadata.version('torch')}, Python {platform.python_version()}"


def blob_url(edit_uri: str) -> str:
    """The repository's file URL prefix, from mkdocs.yml's edit link to docs/."""
    return edit_uri.replace("/edit/", "/blob/").removesuffix("docs/")


def on_config(config, **kwargs):
    _state.update(blob=blob_url(config.edit_uri or ""), ran_with=ran_with())
    return config


def caption_figures(page_html: str, lang: str, blob: str) -> str:
    def figure(match: re.Match[str]) -> str:
        script = figures.OWNERS.get(match["name"])
        if script is None:
            return match.group(0)
        caption = CAPTION.get(lang, CAPTION["en"]).format(
            href=html.escape(blob + script), script=html.escape(script)
        )
        figcaption = f"<figcaption>{caption}</figcaption>"
        return f'<figure class="posenc-figure">{match["img"]}{figcaption}</figure>'

    return _FIGURE.sub(figure, page_html)


def _shows_code(page) -> bool:
    if page.file.src_uri.endswith(".ipynb"):
        return True
    return bool(page.markdown) and "--8<--" in page.markdown


def on_page_content(page_html: str, page, config, files, **kwargs) -> str:
    lang = layout.language_of(Path(page.file.src_uri))
    if _shows_code(page):
        page.meta["posenc_ran_with"] = _state.get("ran_with") or ran_with()
    return caption_figures(page_html, lang, _state.get("blob", ""))
