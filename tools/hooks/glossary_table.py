"""MkDocs hook: the glossary pages show the entries of tools/glossary.toml in their language.

A page marks the place with ``<!-- glossary-table -->``; the entries are rendered from the one
file the Chinese prose check also reads, so the page and the check cannot disagree.
"""

from __future__ import annotations

from pathlib import Path

from tools import glossary, layout

MARKER = "<!-- glossary-table -->"


def on_page_markdown(markdown: str, page, config, files, **kwargs) -> str:
    if MARKER not in markdown:
        return markdown
    lang = layout.language_of(Path(page.file.src_uri))
    return markdown.replace(MARKER, glossary.page(lang))
