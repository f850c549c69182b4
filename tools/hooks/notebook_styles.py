"""MkDocs hook: a notebook page keeps only the part of JupyterLab's stylesheet it uses.

mkdocs-jupyter inlines 575 kB of CSS into every notebook page; tools/notebook_css.py keeps
the rules whose classes occur on the page (about 3 % of it). Other pages are not touched.
"""

from __future__ import annotations

import re

from tools import notebook_css

_STYLE = re.compile(r"(<style[^>]*>)(.*?)(</style>)", re.DOTALL)


def slim_notebook_styles(page_html: str) -> str:
    start = page_html.find("<article")
    if start < 0 or "jupyter-wrapper" not in page_html:
        return page_html
    head, article = page_html[:start], page_html[start:]
    classes = notebook_css.classes_in(page_html)
    # first the rules each style block's page can use, then the custom properties that no
    # kept rule anywhere on the page reads (a theme block declares what another block reads)
    kept = [notebook_css.purge_rules(css, classes) for _, css, _ in _STYLE.findall(article)]
    read_outside = notebook_css.properties_read(head + _STYLE.sub("", article))
    read_by = [notebook_css.properties_read(css) for css in kept]
    counter = iter(range(len(kept)))

    def slim(match: re.Match[str]) -> str:
        index = next(counter)
        read = read_outside.union(*(r for i, r in enumerate(read_by) if i != index))
        css = notebook_css.drop_unused_properties(kept[index], read)
        return match.group(1) + css + match.group(3)

    return head + _STYLE.sub(slim, article)


def on_post_page(output: str, page, config, **kwargs) -> str:
    return slim_notebook_styles(output)
