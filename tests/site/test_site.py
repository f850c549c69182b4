"""Checks on the built site (``make test`` builds it first with ``mkdocs build --strict``).

Every page in both languages: formulas rendered at build time, images present with alt text,
no request to another host, code blocks carrying their language, a language switch that leads
to the page's own twin, links named by words (not by a formula alone); notebook pages
rendered (not raw JSON) with a download link; Chinese search entries segmented into words.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlparse

import pytest

from tools import layout

SITE = layout.site_dir()
pytestmark = pytest.mark.site

if not (SITE / "index.html").exists():
    pytest.skip(
        "site/ is not built: run `make build` (make test does it first)", allow_module_level=True
    )

PAGES = sorted(p for p in SITE.rglob("index.html") if "assets" not in p.parts)
IDS = [p.parent.relative_to(SITE).as_posix() or "/" for p in PAGES]


class _Tags(HTMLParser):
    """Collect start tags with their attributes, and text outside <code>, <pre>, <script>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        if tag in ("code", "pre", "script", "style", "math", "annotation"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("code", "pre", "script", "style", "math", "annotation") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


def _parse(page: Path) -> _Tags:
    parser = _Tags()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def _url(page: Path) -> str:
    return "http://site/" + page.parent.relative_to(SITE).as_posix() + "/"


def _local(url: str) -> Path | None:
    parsed = urlparse(url)
    if parsed.netloc != "site":
        return None
    path = SITE / parsed.path.lstrip("/")
    return path / "index.html" if parsed.path.endswith("/") else path


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_formulas_are_rendered(page: Path) -> None:
    text = " ".join(_parse(page).text)
    for raw in ("\\(", "\\[", "$$"):
        assert raw not in text, f"raw TeX {raw!r} left in the page text"


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_no_request_to_another_host(page: Path) -> None:
    """Anything the browser loads by itself (scripts, styles, images, fonts, frames)."""
    loaded = []
    for tag, attrs in _parse(page).tags:
        if tag in ("script", "img", "iframe", "source", "audio", "video", "embed"):
            loaded.append(attrs.get("src", ""))
        if tag == "link" and attrs.get("rel") in ("stylesheet", "preload", "icon", "modulepreload"):
            loaded.append(attrs.get("href", ""))
    html = page.read_text(encoding="utf-8")
    loaded += re.findall(r"@import\s+url\(([^)]+)\)", html)
    loaded += re.findall(r"url\((['\"]?https?:[^)]+)\)", html)
    foreign = [u for u in loaded if re.match(r"^(https?:)?//", u.strip("'\""))]
    assert not foreign, f"requests to other hosts: {foreign}"


@pytest.mark.parametrize("page", [*PAGES, SITE / "404.html"], ids=[*IDS, "404"])
def test_what_a_page_loads_exists(page: Path) -> None:
    """Scripts, stylesheets and preloads of the site's own files (the formulas' stylesheet
    link that mkdocs.yml puts in every page is replaced or removed: no such file exists)."""
    missing = []
    for tag, attrs in _parse(page).tags:
        url = attrs.get("src", "") if tag == "script" else ""
        if tag == "link" and attrs.get("rel") in ("stylesheet", "preload", "modulepreload"):
            url = attrs.get("href", "")
        target = _local(urljoin(_url(page), url)) if url else None
        if target is not None and not target.is_file():
            missing.append(url)
    assert not missing, f"loads files the site does not have: {missing}"


def test_stylesheets_load_nothing_from_other_hosts() -> None:
    for css in SITE.rglob("*.css"):
        urls = re.findall(r"url\(\s*['\"]?([^)'\"]+)", css.read_text(encoding="utf-8"))
        assert not [u for u in urls if re.match(r"^(https?:)?//", u)], css


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_images_exist_and_have_alt_text(page: Path) -> None:
    for tag, attrs in _parse(page).tags:
        if tag != "img":
            continue
        src = attrs.get("src", "")
        alt = attrs.get("alt", "").strip()
        assert alt and "No description" not in alt, f"image without alt text: {src[:80]}"
        if src.startswith("data:image/"):
            continue  # embedded (notebook output)
        target = _local(urljoin(_url(page), src))
        assert target is not None and target.is_file(), f"missing image {src}"


_LINK = re.compile(r"<a\b([^>]*\bhref=[^>]*)>(.*?)</a>", re.DOTALL)


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_links_have_a_name_outside_formulas(page: Path) -> None:
    """A link whose only content is a formula has no name for Lighthouse's accessibility check
    (link-name: axe does not read MathML as a link's text): put words in the link."""
    text = page.read_text(encoding="utf-8")
    article = text[text.find("<article") :]
    nameless = []
    for attrs, content in _LINK.findall(article):
        if any(mark in attrs for mark in ("aria-label=", "title=", "hreflang=")):
            continue  # named by an attribute, or the hidden list of twins (languages hook)
        if "<img" in content or "<svg" in content:
            continue
        words = re.sub(r"<[^>]+>", "", re.sub(r"<math\b.*?</math>", "", content, flags=re.DOTALL))
        if not words.strip():
            nameless.append(f"<a{attrs[:80]}>")
    assert not nameless, f"links with nothing but a formula (or nothing) inside: {nameless[:5]}"


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_language_switch_leads_to_the_twin(page: Path) -> None:
    rel = page.parent.relative_to(SITE).as_posix().removeprefix(".")
    if rel == "404" or rel.startswith("404"):
        pytest.skip("the 404 page has no twin")
    is_zh = rel == "zh" or rel.startswith("zh/")
    twin_rel = (rel[3:] if rel.startswith("zh/") else "") if is_zh else f"zh/{rel}".rstrip("/")
    links = {
        a["hreflang"]: a["href"]
        for tag, a in _parse(page).tags
        if tag == "a" and "md-select__link" in a.get("class", "")
    }
    assert set(links) == {"en", "zh"}
    other = "en" if is_zh else "zh"
    target = urljoin(_url(page), links[other])
    assert urlparse(target).path.strip("/") == twin_rel.strip("/"), (rel, links)
    assert _local(target).is_file()


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_code_blocks_carry_their_language(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    for block in re.findall(r'<div class="([^"]*highlight[^"]*)"><pre', html):
        if "highlight-ipynb" in block:
            continue
        assert "language-" in block, f"code block without a language class: {block}"


NOTEBOOKS = sorted(SITE.glob("**/notebooks/*/index.html"))


@pytest.mark.parametrize("page", NOTEBOOKS, ids=[p.parent.name for p in NOTEBOOKS])
def test_notebook_pages_are_rendered(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    assert '"cells":' not in html and '"nbformat"' not in html, "notebook shipped as raw JSON"
    assert "jp-OutputArea" in html, "no rendered output cells"
    assert "katex" in html, "notebook formulas not rendered"
    downloads = [a.get("href", "") for tag, a in _parse(page).tags if tag == "a"]
    ipynb = [h for h in downloads if h.endswith(".ipynb")]
    assert ipynb, "no download link to the .ipynb"
    assert (page.parent / ipynb[0].split("/")[-1]).is_file() or _local(
        urljoin(_url(page), ipynb[0])
    ).is_file()


def test_both_languages_have_notebooks() -> None:
    assert {p.parent.relative_to(SITE).parts[0] == "zh" for p in NOTEBOOKS} == {True, False}


def _search_hits(word: str) -> set[str]:
    """Pages whose search entries contain ``word`` as a whole token, splitting the text with the
    index's own separator (what the search box does): Chinese is found only if jieba put
    U+200B between the words when the index was built."""
    index = json.loads((SITE / "search" / "search_index.json").read_text(encoding="utf-8"))
    separator = re.compile(index["config"]["separator"])
    return {
        doc["location"].split("#")[0]
        for doc in index["docs"]
        if word in {t.lower() for t in separator.split(doc["title"] + " " + doc["text"])}
    }


@pytest.mark.parametrize(
    ("word", "page"),
    [
        ("位置", "zh/chapters/01-why-position/"),
        ("编码", "zh/chapters/01-why-position/"),
        ("置换", "zh/chapters/01-why-position/"),
        ("permutation", "chapters/01-why-position/"),
    ],
)
def test_search_finds_words_in_both_languages(word: str, page: str) -> None:
    assert page in _search_hits(word)


@pytest.mark.parametrize(
    ("word", "page"), [("旋转", "zh/chapters/05-rope/"), ("rotary", "chapters/05-rope/")]
)
def test_search_finds_the_rope_chapter(word: str, page: str) -> None:
    if not (SITE / page).is_dir():
        pytest.skip("the RoPE chapter is not built")
    assert page in _search_hits(word)


def test_every_page_has_a_description() -> None:
    for page in PAGES:
        html = page.read_text(encoding="utf-8")
        assert re.search(r'<meta name="description" content="[^"]+">', html), page


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_in_page_anchors_resolve(page: Path) -> None:
    tags = _parse(page).tags
    ids = {attrs["id"] for _, attrs in tags if attrs.get("id")}
    ids |= {attrs["name"] for tag, attrs in tags if tag == "a" and attrs.get("name")}
    targets = {
        attrs["href"][1:]
        for tag, attrs in tags
        if tag == "a" and attrs.get("href", "").startswith("#") and len(attrs["href"]) > 1
    }
    assert not targets - ids, f"links to missing anchors: {sorted(targets - ids)}"


def _ids(page: Path) -> set[str]:
    tags = _parse(page).tags
    ids = {attrs["id"] for _, attrs in tags if attrs.get("id")}
    return ids | {attrs["name"] for tag, attrs in tags if tag == "a" and attrs.get("name")}


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_links_to_other_pages_reach_their_anchors(page: Path) -> None:
    """A link like ../05-rope/#derivation lands on a heading that exists (the strict build
    checks the pages it links to, not always the anchor in them)."""
    missing = []
    for tag, attrs in _parse(page).tags:
        href = attrs.get("href", "") if tag == "a" else ""
        if "#" not in href or href.startswith(("#", "http:", "https:", "mailto:")):
            continue
        target = _local(urljoin(_url(page), href.split("#")[0]))
        anchor = href.split("#", 1)[1]
        if target is None or not target.is_file() or not anchor:
            continue
        if anchor not in _ids(target):
            missing.append(href)
    assert not missing, f"links to missing anchors on other pages: {sorted(set(missing))}"
