"""MkDocs hook: notebooks rendered under mkdocs-static-i18n, each language's cache kept.

* mkdocs-static-i18n rebuilds the file list with plain ``File`` objects, for which ``.ipynb``
  is not a documentation page: notebooks would be published as raw JSON and ``--strict``
  would not notice (NOTES.md). Counting ``.ipynb`` as a page lets i18n localise it like a
  Markdown page (``name.zh.ipynb`` -> ``/zh/.../name/``); mkdocs-jupyter then renders it.
* i18n runs one build per language, and mkdocs-jupyter evicts every cache entry the current
  build did not use, i.e. the other language's notebooks: all of them are marked as used.
* nbconvert leaves headings written only in Chinese with an empty id: the page's table of
  contents' anchors are copied onto them. Plots get a caption-like alt text per language.
* A download link to the notebook (which mkdocs-jupyter copies next to the page) under the
  page's title, in the page's language.
* mkdocs-jupyter puts a Mermaid loader on every notebook page: an 11 kB module script that,
  on a page with a diagram, imports Mermaid from cdnjs.cloudflare.com. The site makes no
  request to another host, and no notebook has a diagram: the loader and its styles go, and
  a notebook with a diagram stops the build.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File

_is_markdown_page = File.is_documentation_page


def _is_documentation_page(self: File) -> bool:
    return self.src_uri.endswith(".ipynb") or _is_markdown_page(self)


def on_startup(**kwargs) -> None:
    # before any file list is built (mkdocs has no per-file hook for what counts as a page)
    File.is_documentation_page = _is_documentation_page


def on_config(config, **kwargs):
    # mkdocs-jupyter takes cache_dir as a plain string, relative to the working directory;
    # anchor it at the project so building from another directory reuses the same cache.
    jupyter = config.plugins.get("mkdocs-jupyter")
    if jupyter is not None:
        root = Path(config.config_file_path).parent
        jupyter.config["cache_dir"] = str(root / jupyter.config["cache_dir"])
    return config


def on_env(env, config, files, **kwargs):
    jupyter = config.plugins.get("mkdocs-jupyter")
    if jupyter is not None and getattr(jupyter, "_used_cache_paths", None) is not None:
        from mkdocs_jupyter.plugin import _compute_cache_key, _get_cache_path

        for notebook in Path(config.docs_dir).rglob("*.ipynb"):
            key = _compute_cache_key(str(notebook), jupyter.config, jupyter.config["execute"])
            jupyter._used_cache_paths.add(_get_cache_path(jupyter.config["cache_dir"], key))
    return env


def _toc_anchors(items) -> list[str]:
    anchors = []
    for item in items:
        anchors.append(item.id)
        anchors += _toc_anchors(item.children)
    return anchors


def on_page_content(html: str, page, config, files, **kwargs) -> str:
    # mkdocs-jupyter builds the page's contents from the same headings, in the same order,
    # linking to "#_1", "#_2", ...: give the id-less headings those anchors.
    if not page.file.src_uri.endswith(".ipynb"):
        return html
    anchors = iter(_toc_anchors(page.toc.items))

    def fill(match: re.Match[str]) -> str:
        anchor = next(anchors, None)
        if anchor is None or match.group("id"):
            return match.group(0)
        heading = match.group(0).replace('id=""', f'id="{anchor}"', 1)
        return heading.replace('href="#"', f'href="#{anchor}"', 1)

    heading = r'<h[1-6][^>]*\bid="(?P<id>[^"]*)"[^>]*>.*?</h[1-6]>'
    html = re.sub(heading, fill, html, flags=re.DOTALL)
    return _with_download_link(html, page, config)


# mkdocs-jupyter (include_source) copies the notebook next to its page and sets page.nb_url,
# but material's templates never show it: the page gets its own link, under the title.
_DOWNLOAD = {
    "en": "Download this notebook (.ipynb)",
    "zh": "下载这个 Notebook（.ipynb）",
}


def _with_download_link(html: str, page, config) -> str:
    language = getattr(page.file, "locale", None) or config.theme.get("language", "en")
    name = Path(page.file.abs_src_path).name  # the name mkdocs-jupyter copies it under
    link = (
        f'<p class="posenc-notebook-download"><a href="{name}" download="{name}">'
        f"{_DOWNLOAD.get(language, _DOWNLOAD['en'])}</a></p>"
    )
    title = re.search(r"</h1>", html)
    if title is None:
        return link + html
    return html[: title.end()] + link + html[title.end() :]


# nbconvert gives every plot in a notebook the same placeholder alt text
_NOTEBOOK_ALT = 'alt="No description has been provided for this image"'
_NOTEBOOK_ALT_BY_LANGUAGE = {
    "en": 'alt="Plot drawn by the code cell above"',
    "zh": 'alt="上方代码单元绘制的图"',
}


# from the loader's module script to the comment mkdocs-jupyter ends its Mermaid part with
_MERMAID_LOADER = re.compile(
    r'<script type="module">(?:(?!</script>).)*?\.jp-Mermaid'
    r".*?<!-- End of mermaid configuration -->",
    re.DOTALL,
)


_MERMAID_DIAGRAM = re.compile(r'class="(?:[^"]* )?jp-Mermaid[ "]')


def without_mermaid_loader(page_html: str, name: str) -> str:
    """``page_html`` without mkdocs-jupyter's Mermaid loader; ValueError on a page with a
    Mermaid diagram (drawing it would need the loader, and a request to cdnjs)."""
    if _MERMAID_DIAGRAM.search(page_html):
        raise ValueError(
            f"{name}: a Mermaid diagram would be drawn by Mermaid from cdnjs.cloudflare.com "
            "and the site makes no request to another host; make it a figure drawn by a snippet"
        )
    return _MERMAID_LOADER.sub("", page_html, count=1)


def on_post_page(output: str, page, config, **kwargs) -> str:
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    language = getattr(page.file, "locale", None) or config.theme.get("language", "en")
    output = without_mermaid_loader(output, page.file.src_uri)
    return output.replace(_NOTEBOOK_ALT, _NOTEBOOK_ALT_BY_LANGUAGE.get(language, _NOTEBOOK_ALT))
