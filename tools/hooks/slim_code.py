"""MkDocs hook: code listings with about half the elements, the same text and colours
(tools/code_listing.py): fewer elements for the browser to style and lay out."""

from __future__ import annotations

from tools.code_listing import slim_listings


def on_post_page(output: str, page, config, **kwargs) -> str:
    return slim_listings(output)
