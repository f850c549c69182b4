"""MkDocs hook: every formula rendered to MathML at build time (tools/formulas.py), its
stylesheet inlined on the pages that have formulas (the link mkdocs.yml's extra_css puts in
every page is dropped elsewhere, the 404 page included), and the math font (a subset of Noto
Sans Math holding the characters the formulas use) written into the site. Pages ship no math
JavaScript."""

from __future__ import annotations

from pathlib import Path

from tools import formulas


def on_post_page(output: str, page, config, **kwargs) -> str:
    return formulas.style_page(formulas.render_page(output, where=page.file.src_uri))


def on_post_template(output_content: str, template_name: str, config, **kwargs) -> str:
    """The theme's own pages (404.html): no formulas, so no link to their stylesheet."""
    if template_name.endswith(".html"):
        return formulas.style_page(output_content)
    return output_content


def on_post_build(config, **kwargs) -> None:
    formulas.copy_assets(Path(config.site_dir))
