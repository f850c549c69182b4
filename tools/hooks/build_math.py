"""MkDocs hook: every formula rendered to KaTeX HTML + MathML at build time (tools/katex.py),
and KaTeX's stylesheet and fonts copied into the site. Pages ship no math JavaScript."""

from __future__ import annotations

from pathlib import Path

from tools import katex


def on_post_page(output: str, page, config, **kwargs) -> str:
    return katex.render_page(output, where=page.file.src_uri)


def on_post_build(config, **kwargs) -> None:
    katex.copy_assets(Path(config.site_dir))
