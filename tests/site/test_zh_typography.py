"""Chinese typography on the built pages, as a reader's browser renders them.

The sources are checked by ``make lint`` (tools/zh_text.py); this checks what reaches the
reader after Markdown, the snippets and the hooks: inside a run of Chinese text no whitespace
(Chromium renders a newline between two Chinese characters as a space), none around
full-width punctuation, and no italics on Chinese characters (Chinese fonts have none).
Code, formulas and block boundaries are not text runs.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tools import layout

SITE = layout.site_dir()
pytestmark = pytest.mark.site

if not (SITE / "index.html").exists():
    pytest.skip(
        "site/ is not built: run `make build` (make test does it first)", allow_module_level=True
    )

PAGES = sorted(p for p in (SITE / "zh").rglob("index.html") if "assets" not in p.parts)
IDS = [p.parent.relative_to(SITE).as_posix() for p in PAGES]

HAN = "\u3400-\u9fff\uf900-\ufaff"
FULL_WIDTH = "，。：；！？、（）“”《》"
OPAQUE = "\ue000"  # stands for code or a formula inside a run of text
BREAK = "\x00"  # a block boundary: text on either side is not one run
_SKIPPED = {"script", "style", "pre", "svg", "math", "annotation"}
_OPAQUE = {"code", "kbd"}
_BLOCKS = {
    "p", "li", "ul", "ol", "td", "th", "tr", "table", "div", "br", "h1", "h2", "h3", "h4",
    "h5", "h6", "dd", "dt", "dl", "figcaption", "figure", "blockquote", "summary", "details",
    "nav", "header", "footer", "section", "img", "hr",
}  # fmt: skip


class _Runs(HTMLParser):
    """The article's text, block by block, with code and formulas as one opaque character."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.italic: list[str] = []
        self._in_article = 0
        self._hidden = 0  # inside something that is not prose
        self._stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if tag == "article":
            self._in_article += 1
        if self._hidden or tag in _SKIPPED or "katex" in classes or "katex-display" in classes:
            if tag not in ("br", "img", "hr", "input", "meta", "link"):
                self._hidden += 1
                self._stack.append(tag)
            if not self._hidden - 1 and ("katex" in classes or tag == "math"):
                self.text.append(OPAQUE)
            return
        if tag in _OPAQUE:
            self._hidden += 1
            self._stack.append(tag)
            self.text.append(OPAQUE)
        elif tag in _BLOCKS:
            self.text.append(BREAK)
        elif tag in ("em", "i"):
            self.italic.append("")
            self._stack.append("@italic")

    def handle_endtag(self, tag):
        if tag == "article":
            self._in_article -= 1
        if self._stack and self._stack[-1] == tag and self._hidden:
            self._stack.pop()
            self._hidden -= 1
            return
        if tag in _BLOCKS:
            self.text.append(BREAK)
        elif tag in ("em", "i") and self._stack and self._stack[-1] == "@italic":
            self._stack.pop()

    def handle_data(self, data):
        if not self._in_article or self._hidden:
            return
        self.text.append(data)
        if "@italic" in self._stack and self.italic:
            self.italic[-1] += data


def _runs(page: Path) -> _Runs:
    parser = _Runs()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def _context(text: str, match: re.Match[str]) -> str:
    return repr(text[max(0, match.start() - 12) : match.end() + 12].replace(BREAK, "¶"))


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_no_space_inside_chinese_text(page: Path) -> None:
    text = "".join(_runs(page).text)
    bad = [
        _context(text, m)
        for pattern in (
            rf"[{HAN}][ \t\n\r]+[{HAN}]",  # a line break or space between two characters
            rf"[{FULL_WIDTH}][ \t\n\r]+(?=[^\s{BREAK}])",  # ... after full-width punctuation
            rf"(?<=[^\s{BREAK}])[ \t\n\r]+[{FULL_WIDTH}]",  # ... or before it
        )
        for m in re.finditer(pattern, text)
    ]
    assert not bad, f"{len(bad)} space(s) a reader sees inside Chinese text: {bad[:8]}"


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_no_italics_on_chinese(page: Path) -> None:
    italic = [run for run in _runs(page).italic if re.search(f"[{HAN}]", run)]
    assert not italic, f"italic Chinese text (use bold): {italic[:8]}"


# Words that label a figure but are names, not prose: implementations and layouts as the code
# calls them, shown in the code font of the page's tables too.
CODE_NAMES = {
    "copy", "posenc", "compiled", "half", "interleaved", "broadcast", "materialised", "flex",
    "bias", "table", "eager", "stack", "flatten",
}  # fmt: skip
_SVG_TEXT = re.compile(r"<text\b[^>]*>(.*?)</text>", re.DOTALL)


def _english_words(svg: Path) -> set[str]:
    """Lower-case English words (4+ letters) in a figure's text, code names left out."""
    words = set()
    for text in _SVG_TEXT.findall(svg.read_text(encoding="utf-8")):
        text = re.sub(r"<[^>]+>", "", text)
        for word in re.findall(r"(?<![\w_])[a-z]{4,}(?![\w_])", text):
            words.add(word)
    return words - CODE_NAMES


# mkdocs-static-i18n publishes docs/figures/x.zh.svg as zh/figures/x.svg and points the
# Chinese pages' ../figures/x.svg (or x.zh.svg) there.
FIGURES = sorted((SITE / "figures").glob("*.svg"))


@pytest.mark.parametrize("figure", FIGURES, ids=lambda f: f.name)
def test_figures_with_words_have_a_chinese_version(figure: Path) -> None:
    words = _english_words(figure)
    chinese = SITE / "zh" / "figures" / figure.name
    assert not words or chinese.is_file(), (
        f"{figure.name} is labelled in English {sorted(words)[:6]}: its script should also "
        f"save {figure.stem}.zh.svg with Chinese labels for the Chinese page"
    )
    if chinese.is_file():
        text = " ".join(_SVG_TEXT.findall(chinese.read_text(encoding="utf-8")))
        assert re.search(f"[{HAN}]", text), f"zh/figures/{figure.name} has no Chinese label"


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_chinese_pages_show_the_chinese_figures(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    for source in re.findall(r'<img[^>]*src="([^"]*figures/[^"]+\.svg)"', html):
        shown = (page.parent / source).resolve()
        name = shown.name.replace(".zh.svg", ".svg")
        if (SITE / "zh" / "figures" / name).is_file():
            assert shown == (SITE / "zh" / "figures" / name).resolve(), (
                f"{page.relative_to(SITE)} shows {source}, not the Chinese version"
            )
