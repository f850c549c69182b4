"""MkDocs hook: what lies below the first screen is fetched and laid out when the reader
scrolls near it, and nothing on the first screen waits.

A long chapter spent most of its load time on a slow phone in style and layout, and its
figures (SVG files drawn by matplotlib, each one a small document of its own parsed and laid
out on the main thread) took a third of a second more. Two browser features defer that work:
``loading="lazy"`` on a figure, and ``content-visibility: auto`` on a block (the stylesheet,
``docs/assets/stylesheets/posenc.css``, applies it to blocks marked ``data-below-fold``).
Both must stay off the first screen: a block skipped there is first drawn at its placeholder
height, then at its real one, and everything under it jumps (a layout shift: on the API index
a table of conventions three blocks from the top moved the whole page, Lighthouse's
cumulative layout shift 0.55 and a performance score of 77).

Where a block will land depends on the screen, so this hook estimates, from the HTML alone,
a lower bound of each block's distance from the top of the article on a wide desktop column
(the widest text, so the shortest page; a phone's column is half as wide and its blocks lie
about twice as far down). Text counts by its width in lines, code by its lines, figures by
their height, tables by their rows; what is hidden (a closed ``<details>`` beyond its summary,
every tab but the first) counts nothing. A block is marked only when even this lower bound
lies past ``FOLD_PX``, more than a tall desktop screen; the browser test of every page
(``tests/browser/test_browser_pages.py``) checks that no marked block is on the first screen
and that nothing shifts while a page loads.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from html.parser import HTMLParser

# A tall desktop screen (1080 px) with a margin: a block whose estimated top lies beyond this
# is below the first screen of any common window, phone or desktop.
FOLD_PX = 1500
# The wide desktop column of mkdocs-material: about 690 px of 16 px text, line height 1.6.
LINE_PX = 25.6
COLUMN_PX = 690
# Characters per line, rounded up (so the estimate stays a lower bound): a Latin character
# is about 7 px wide at 16 px, a CJK one 16 px (full width counts as 2).
UNITS_PER_LINE = 100
CODE_LINE_PX = 18  # a code line: 13.6 px text, line height 1.4, rounded down
# Elements whose text makes lines of their own (the end of one starts a new line).
LINE_BLOCKS = frozenset(
    "p li dt dd h1 h2 h3 h4 h5 h6 summary figcaption caption blockquote div ul ol dl table "
    "tr pre figure details section aside header footer nav hr".split()
)
# Candidates for content-visibility: what the stylesheet may skip (see posenc.css).
DEFERRABLE = frozenset("p ul ol table blockquote details figure div".split())
# Classes of containers whose children are candidates too: an API object's documentation, a
# notebook (mkdocs-jupyter puts every cell in one ``div.jp-Notebook``).
CONTAINERS = frozenset(("doc-contents", "jp-Notebook"))
VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())
_SKIPPED_TEXT = frozenset(("script", "style", "template", "svg"))


@dataclass
class _Open:
    tag: str
    visible: bool
    classes: tuple[str, ...] = ()
    closed_details: bool = False  # a <details> without ``open``: only its summary shows
    breaks_line: bool = False  # a block (or display formula): its end starts a new line
    tab_blocks: int = 0  # tabbed-content: how many tabbed-blocks it has had so far


@dataclass
class Placed:
    """An element's start tag (its offset in the article's HTML, its name) and the estimated
    top of the element (px from the top of the article, a lower bound on a wide column)."""

    offset: int
    tag: str
    top: float


class _Estimate(HTMLParser):
    """Walks an article's HTML once, in document order, keeping a running lower bound of the
    height laid out so far; ``blocks`` are the candidates for deferral, ``images`` every
    image (those hidden with an infinite top)."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.height = 0.0
        self.blocks: list[Placed] = []
        self.images: list[Placed] = []
        self._stack: list[_Open] = []
        self._pending_units = 0.0  # text since the last line break, in character widths
        self._rows = 0  # > 0 inside a table row: cells side by side make one row of lines
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", html)]
        self.feed(html)
        self.close()

    # ── where we are ──────────────────────────────────────────────────────
    def _offset(self) -> int:
        line, column = self.getpos()
        return self._line_starts[line - 1] + column

    def _visible(self) -> bool:
        return not self._stack or self._stack[-1].visible

    def _is_candidate(self, tag: str) -> bool:
        """A top-level block of the article, a block of an API object's documentation, or a
        notebook's cell (a notebook page is one block holding all its cells)."""
        if tag not in DEFERRABLE:
            return False
        return not self._stack or not CONTAINERS.isdisjoint(self._stack[-1].classes)

    # ── lines ─────────────────────────────────────────────────────────────
    def _break_line(self) -> None:
        if self._rows or self._pending_units <= 0:
            return
        self.height += max(1.0, self._pending_units / UNITS_PER_LINE) * LINE_PX
        self._pending_units = 0.0

    def handle_data(self, data: str) -> None:
        if not self._visible() or any(o.tag in _SKIPPED_TEXT for o in self._stack):
            return
        if any(o.tag == "pre" for o in self._stack):
            self.height += data.count("\n") * CODE_LINE_PX
            return
        text = " ".join(data.split())
        self._pending_units += sum(
            2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text
        )

    # ── tags ──────────────────────────────────────────────────────────────
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        classes = tuple((attributes.get("class") or "").split())
        parent = self._stack[-1] if self._stack else None
        # an inline formula runs on with the text around it; a display one is a line of its own
        breaks_line = tag in LINE_BLOCKS or (tag == "math" and attributes.get("display") == "block")
        if breaks_line:
            self._break_line()
        visible = self._visible() and "hidden" not in attributes
        if parent is not None and parent.closed_details and tag != "summary":
            visible = False
        if parent is not None and "tabbed-content" in parent.classes and tag == "div":
            parent.tab_blocks += 1
            visible = visible and parent.tab_blocks == 1
        if visible and self._is_candidate(tag):
            self.blocks.append(Placed(self._offset(), tag, self.height))
        if tag == "img":  # a hidden one (in a closed <details>) waits like a far one
            top = self.height if visible else float("inf")
            self.images.append(Placed(self._offset(), tag, top))
            if visible:
                self.height += _image_height(attributes)
        if tag == "tr" and visible:
            self._rows += 1
        if tag in VOID:
            return
        closed_details = tag == "details" and "open" not in attributes
        self._stack.append(_Open(tag, visible, classes, closed_details, breaks_line))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID and self._stack and self._stack[-1].tag == tag:
            self._stack.pop()

    def handle_endtag(self, tag: str) -> None:
        if not any(o.tag == tag for o in self._stack):
            return  # a stray end tag: nothing to close
        while self._stack:
            closed = self._stack.pop()
            if closed.tag == "tr" and closed.visible:
                self._rows -= 1
                self._end_row()
            if closed.tag == tag:
                break
        if closed.breaks_line:
            self._break_line()

    def _end_row(self) -> None:
        """A table row is at least one line high; the text of its cells, side by side, is
        counted as if it ran across the whole column (fewer lines than it takes)."""
        if self._rows == 0:
            self.height += max(1.0, self._pending_units / UNITS_PER_LINE) * LINE_PX
            self._pending_units = 0.0


def _image_height(attributes: dict[str, str | None]) -> float:
    """The height an image takes in the column: its height attribute, scaled down when its
    width attribute is wider than the column (0 when it has none)."""
    try:
        height = float(attributes.get("height") or 0)
        width = float(attributes.get("width") or 0)
    except ValueError:
        return 0.0
    return height * min(1.0, COLUMN_PX / width) if width > 0 else height


_ARTICLE = re.compile(r'<article class="md-content__inner[^"]*">')


def estimate(article_html: str) -> tuple[list[Placed], list[Placed]]:
    """The deferrable blocks and the images of an article's HTML, each with its estimated
    top in px (a lower bound on a wide desktop column)."""
    walk = _Estimate(article_html)
    return walk.blocks, walk.images


def mark_below_fold(article_html: str, fold_px: float = FOLD_PX) -> str:
    """``data-below-fold`` on every deferrable block, and ``loading="lazy"
    decoding="async"`` on every image (without a ``loading`` of its own), whose estimated top
    lies past ``fold_px``."""
    blocks, images = estimate(article_html)
    inserts: list[tuple[int, str]] = []
    for block in blocks:
        if block.top > fold_px:
            inserts.append((block.offset + 1 + len(block.tag), " data-below-fold"))
    for image in images:
        tag_end = article_html.find(">", image.offset)
        if image.top > fold_px and "loading=" not in article_html[image.offset : tag_end]:
            inserts.append((image.offset + len("<img"), ' loading="lazy" decoding="async"'))
    pieces, last = [], 0
    for at, text in sorted(inserts):
        pieces += [article_html[last:at], text]
        last = at
    return "".join(pieces) + article_html[last:]


def below_the_fold(page_html: str) -> str:
    """The page with its article's below-the-fold blocks and images marked (a page without
    an article, e.g. a redirect, unchanged)."""
    start = _ARTICLE.search(page_html)
    end = page_html.rfind("</article>")
    if start is None or end < start.end():
        return page_html
    inner = page_html[start.end() : end]
    return page_html[: start.end()] + mark_below_fold(inner) + page_html[end:]


def on_post_page(output: str, page, config, **kwargs) -> str:
    return below_the_fold(output)
