"""MkDocs hook: the language switch leads to the page's own twin, on every page.

* Material fetches ``sitemap.xml`` relative to every ``<link rel="alternate">`` in the head;
  with i18n's page-level links that is a 404 per language on every page. The twins'
  addresses move into a hidden list at the top of the article instead: material's instant
  navigation swaps the article in before it announces the new page, so
  ``overrides/main.html`` always reads the twins of the page being shown.
* Material's instant navigation only follows links listed in the sitemap next to the current
  language's root; i18n writes one sitemap, so /zh/sitemap.xml is written here.
* i18n warns that its page-level language links do not survive instant navigation;
  overrides/main.html re-points them on every page change, so the warning is dropped to keep
  ``--strict`` meaningful.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from mkdocs.plugins import event_priority

_ALTERNATE = re.compile(r'<link rel="alternate" (href="[^"]*" hreflang="[^"]*")>')
_HANDLED_WARNING = "language switcher contextual link is not compatible"


class _DropMessage(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return _HANDLED_WARNING not in record.getMessage()


def on_startup(**kwargs) -> None:
    logging.getLogger("mkdocs.plugins.mkdocs_static_i18n.reconfigure").addFilter(_DropMessage())


def move_twins_into_article(output: str) -> str:
    twins = "".join(f"<a {attrs}></a>" for attrs in _ALTERNATE.findall(output))
    output = _ALTERNATE.sub("", output)
    return re.sub(
        r'(<article class="md-content__inner[^"]*">)',
        rf"\1<div hidden data-posenc-twins>{twins}</div>",
        output,
        count=1,
    )


def on_post_page(output: str, page, config, **kwargs) -> str:
    return move_twins_into_article(output)


def write_language_sitemaps(site_dir: Path) -> None:
    """Write /<lang>/sitemap.xml for every non-default language: i18n's <url> entries, with
    that language's address as <loc>."""
    sitemap = site_dir / "sitemap.xml"
    if not sitemap.exists():
        return
    text = sitemap.read_text(encoding="utf-8")
    for lang in set(re.findall(r'hreflang="([^"]+)"', text)):
        urls = re.findall(
            rf'<url>.*?<xhtml:link rel="alternate" hreflang="{lang}" href="([^"]+)"/>.*?</url>',
            text,
            flags=re.DOTALL,
        )
        if not urls or not (site_dir / lang).is_dir():
            continue
        blocks = re.findall(r"<url>.*?</url>", text, flags=re.DOTALL)
        localized = [
            re.sub(r"<loc>[^<]*</loc>", f"<loc>{url}</loc>", block, count=1)
            for block, url in zip(blocks, urls, strict=True)
        ]
        head, _, _ = text.partition("<url>")
        (site_dir / lang / "sitemap.xml").write_text(
            head + "\n    ".join(localized) + "\n</urlset>\n", encoding="utf-8"
        )


@event_priority(-200)  # after mkdocs-static-i18n (-100) has written its sitemap
def on_post_build(config, **kwargs) -> None:
    write_language_sitemaps(Path(config.site_dir))
