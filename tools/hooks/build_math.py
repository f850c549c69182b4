"""MkDocs hook: every formula rendered to MathML at build time (tools/katex.py), its
stylesheet inlined on the pages that have formulas (dropped elsewhere), and the math font
(a subset of Noto Sans Math holding the characters the formulas use) written into the site.
Pages ship no math JavaScript."""

from __future__ import annotations

from pathlib import Path

from tools import katex


def on_post_page(output: str, page, config, **kwargs) -> str:
    return katex.style_page(katex.render_page(output, where=page.file.src_uri))


def on_post_build(config, **kwargs) -> None:
    katex.copy_assets(Path(config.site_dir))
