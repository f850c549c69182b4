"""MkDocs hook: figures are fetched and decoded when the reader scrolls near them.

A chapter's figures are SVG files drawn by matplotlib (up to 35 kB compressed each). Each
one the browser loads becomes a small document of its own that is parsed and laid out on the
main thread; on a slow phone the figures far below the first screen took a third of a
second of it while the page loaded (Lighthouse's "unattributable" long tasks). Every figure
has its width and height in the markup, so a lazy image reserves its space and nothing moves
when it arrives.
"""

from __future__ import annotations

import re

_IMG = re.compile(r"<img\b(?![^>]*\bloading=)([^>]*\bsrc=\"[^\"]*figures/[^\"]+\.svg\"[^>]*)>")


def lazy_figures(page_html: str) -> str:
    """Every ``<img>`` of a figure without a ``loading`` attribute gets ``loading="lazy"``
    and ``decoding="async"``."""
    return _IMG.sub(r'<img loading="lazy" decoding="async"\1>', page_html)


def on_page_content(html: str, page, config, files, **kwargs) -> str:
    return lazy_figures(html)
