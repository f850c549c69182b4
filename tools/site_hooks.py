"""MkDocs hooks for the posenc site (listed under ``hooks:`` in mkdocs.yml).

* figures: draw every figure from ``snippets/*/figure_*.py`` before the file list is read;
* notebooks: keep mkdocs-jupyter working under mkdocs-static-i18n (NOTES.md);
* math: render every formula to KaTeX HTML + MathML at build time (tools/site_math.py).
"""

from __future__ import annotations

import json
import logging
import re
import sys
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

sys.path.insert(0, str(Path(__file__).resolve().parent))

import figures  # noqa: E402  (tools/ is not a package; the path above makes it importable)
import site_math  # noqa: E402


class _DropMessage(logging.Filter):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def filter(self, record: logging.LogRecord) -> bool:
        return self.text not in record.getMessage()


# i18n warns that its page-level language links do not survive material's instant
# navigation (the header is not re-rendered). overrides/main.html re-points the links on
# every page change, so the warning is handled; dropping it keeps --strict meaningful.
logging.getLogger("mkdocs.plugins.mkdocs_static_i18n.reconfigure").addFilter(
    _DropMessage("language switcher contextual link is not compatible")
)


def on_config(config, **kwargs):
    # mkdocs-jupyter takes cache_dir as a plain string, relative to the working directory;
    # anchor it at the project so building from another directory reuses the same cache.
    jupyter = config.plugins.get("mkdocs-jupyter")
    if jupyter is not None:
        root = Path(config.config_file_path).parent
        jupyter.config["cache_dir"] = str(root / jupyter.config["cache_dir"])
    return config


def on_pre_build(config, **kwargs) -> None:
    # before mkdocs lists docs/, so the SVGs are ordinary files and broken links fail --strict
    figures.build()


# mkdocs-static-i18n rebuilds the file list with plain File objects, for which `.ipynb` is
# not a documentation page: notebooks would be published as raw JSON, and --strict would
# not notice (NOTES.md). Counting `.ipynb` as a page lets i18n localise it like a Markdown
# page (name.zh.ipynb -> /zh/.../name/); mkdocs-jupyter then renders it (it replaces
# page.render for every notebook in on_pre_page).
_is_markdown_page = File.is_documentation_page


def _is_documentation_page(self: File) -> bool:
    return self.src_uri.endswith(".ipynb") or _is_markdown_page(self)


File.is_documentation_page = _is_documentation_page


def on_env(env, config, files, **kwargs):
    # i18n runs one build per language and mkdocs-jupyter evicts every cache entry the
    # current build did not use, i.e. the other language's notebooks. Mark the entries of
    # all notebooks in docs/ as used so a warm build executes nothing.
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
    # nbconvert gives headings written only in Chinese an empty id, while the page's table of
    # contents (built by mkdocs-jupyter from the same headings, in the same order) links to
    # "#_1", "#_2", ...: copy the contents' anchors onto those headings.
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
    return re.sub(heading, fill, html, flags=re.DOTALL)


# Material fetches `sitemap.xml` relative to every <link rel="alternate"> in the head; with
# i18n's page-level links that is a 404 per language on every page. The twins' addresses move
# into a hidden list at the top of the article instead: material's instant navigation swaps the
# article in before it announces the new page, so overrides/main.html always reads the twins of
# the page being shown (the head is merged later, and read too early it gave the previous one).
_ALTERNATE = re.compile(r'<link rel="alternate" (href="[^"]*" hreflang="[^"]*")>')


# nbconvert gives every plot in a notebook the same placeholder alt text
_NOTEBOOK_ALT = 'alt="No description has been provided for this image"'
_NOTEBOOK_ALT_BY_LANGUAGE = {
    "en": 'alt="Plot drawn by the code cell above"',
    "zh": 'alt="上方代码单元绘制的图"',
}


def _inline_small_stylesheets(output: str, docs_dir: Path) -> str:
    """Put KaTeX's and our own small stylesheets into the page instead of linking them.

    Each linked stylesheet blocks the first paint for one more round trip; these two are small
    (about 23 kB and 1 kB before compression), material's own two stay linked and cached.
    mkdocstrings' stylesheet is only needed on the API pages: elsewhere it is dropped.
    """

    def inline(match: re.Match[str]) -> str:
        href = match.group("href")
        folder = href.rsplit("/", 1)[0] + "/"
        if href.endswith("assets/katex/katex.min.css"):
            css = site_math.katex_css().replace("url(fonts/", f"url({folder}fonts/")
        elif href.endswith("assets/stylesheets/posenc.css"):
            css = (docs_dir / "assets" / "stylesheets" / "posenc.css").read_text(encoding="utf-8")
        elif href.endswith("assets/_mkdocstrings.css") and 'class="doc doc-' not in output:
            return ""
        else:
            return match.group(0)
        return f"<style>{css}</style>"

    return re.sub(r'<link rel="stylesheet" href="(?P<href>[^"]+)">', inline, output)


def _move_twins_into_article(output: str) -> str:
    twins = "".join(f"<a {attrs}></a>" for attrs in _ALTERNATE.findall(output))
    output = _ALTERNATE.sub("", output)
    return re.sub(
        r'(<article class="md-content__inner[^"]*">)',
        rf"\1<div hidden data-posenc-twins>{twins}</div>",
        output,
        count=1,
    )


def on_post_page(output: str, page, config, **kwargs) -> str:
    output = _move_twins_into_article(output)
    output = _inline_small_stylesheets(output, Path(config.docs_dir))
    language = getattr(page.file, "locale", None) or config.theme.get("language", "en")
    output = output.replace(_NOTEBOOK_ALT, _NOTEBOOK_ALT_BY_LANGUAGE.get(language, _NOTEBOOK_ALT))
    return site_math.render_page(output, where=page.file.src_uri)


@event_priority(-200)  # after mkdocs-static-i18n (-100): its sitemap and merged search index
def on_post_build(config, **kwargs) -> None:
    site_dir = Path(config.site_dir)
    site_math.copy_assets(site_dir)
    _write_language_sitemaps(site_dir)
    _slim_search_index(site_dir)


def _slim_search_index(site_dir: Path) -> None:
    """Leave code listings out of the search index, and the Chinese copy of the API reference.

    Every page downloads the index (both languages) as soon as it loads, competing with the
    page itself on a slow connection: at 700 kB it pushed a chapter's largest paint on a
    simulated phone from ~2 s to ~3.6 s. Two thirds of it were code listings; readers search
    for ideas and names, and names stay findable in the prose, the headings and the API
    reference, whose docstrings are English in both languages (so the zh copy is a duplicate).
    The JSON is also written as UTF-8 instead of \\u escapes (6 bytes per Chinese character).
    """
    index_file = site_dir / "search" / "search_index.json"
    if not index_file.exists():
        return
    index = json.loads(index_file.read_text(encoding="utf-8"))
    docs = index["docs"]
    index["docs"] = [doc for doc in docs if not doc["location"].startswith("zh/reference/")]
    for doc in index["docs"]:
        doc["text"] = _CODE_LISTING.sub(" ", doc["text"])
    index_file.write_text(
        json.dumps(index, ensure_ascii=False, separators=(",", ":")), encoding="utf-8"
    )


_CODE_LISTING = re.compile(r"<pre\b.*?</pre>", re.DOTALL)


def _write_language_sitemaps(site_dir: Path) -> None:
    """Write /<lang>/sitemap.xml for every non-default language.

    Material's instant navigation only follows links listed in the sitemap next to the
    current language's root; i18n writes one sitemap (default language, with hreflang
    alternates), so on /zh/ pages the lookup 404s and instant navigation is off.
    """
    sitemap = site_dir / "sitemap.xml"
    if not sitemap.exists():
        return
    text = sitemap.read_text(encoding="utf-8")
    languages = set(re.findall(r'hreflang="([^"]+)"', text))
    for lang in languages:
        urls = re.findall(
            rf'<url>.*?<xhtml:link rel="alternate" hreflang="{lang}" href="([^"]+)"/>.*?</url>',
            text,
            flags=re.DOTALL,
        )
        if not urls or not (site_dir / lang).is_dir():
            continue
        # the same <url> entries, with this language's address as <loc>
        blocks = re.findall(r"<url>.*?</url>", text, flags=re.DOTALL)
        localized = [
            re.sub(r"<loc>[^<]*</loc>", f"<loc>{url}</loc>", block, count=1)
            for block, url in zip(blocks, urls, strict=True)
        ]
        head, _, _ = text.partition("<url>")
        (site_dir / lang / "sitemap.xml").write_text(
            head + "\n    ".join(localized) + "\n</urlset>\n", encoding="utf-8"
        )
