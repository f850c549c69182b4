"""MkDocs hook: our small stylesheet goes into the page instead of a link.

Each linked stylesheet blocks the first paint for one more round trip; ours is small (about
1 kB before compression); material's own two stay linked and cached. The formulas'
stylesheet is inlined by tools/hooks/build_math.py, on the pages that have formulas.
mkdocstrings' stylesheet is only needed on the API pages: elsewhere it is dropped.
"""

from __future__ import annotations

import re
from pathlib import Path

_STYLESHEET = re.compile(r'<link rel="stylesheet" href="(?P<href>[^"]+)">')


def inline_small_stylesheets(output: str, docs_dir: Path) -> str:
    def inline(match: re.Match[str]) -> str:
        href = match.group("href")
        if href.endswith("assets/stylesheets/posenc.css"):
            css = (docs_dir / "assets" / "stylesheets" / "posenc.css").read_text(encoding="utf-8")
        elif href.endswith("assets/_mkdocstrings.css") and 'class="doc doc-' not in output:
            return ""
        else:
            return match.group(0)
        return f"<style>{css}</style>"

    return _STYLESHEET.sub(inline, output)


def on_post_page(output: str, page, config, **kwargs) -> str:
    return inline_small_stylesheets(output, Path(config.docs_dir))
