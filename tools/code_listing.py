"""Lighter code listings: the same colours with about half the elements.

Pygments wraps every token of a listing in a ``<span>``, and pymdownx puts an empty anchor
before every line (``anchor_linenums``; there are no line numbers to click in a listing
without them). On a chapter, code was two thirds of the page's elements, and the browser
styles and lays out each one (Lighthouse: "Style & Layout" was most of the main thread's
work). Inside the listings material highlights (``<div class="language-* highlight">``),
this module

* drops the empty line anchors (no page links to one: ``#__codelineno-*``);
* unwraps the spans whose colour is the listing's own (``n``, ``kc``: material gives them
  ``--md-code-hl-name-color``, which is ``--md-code-fg-color``; ``w``: whitespace);
* merges neighbouring spans that material colours alike (punctuation and operators share
  ``--md-code-hl-punctuation-color``'s value; the string classes share one colour, ...),
  across the spaces between them.

Comments stay one span each: material finds code annotations (``# (1)!``) in them. Listings
with line numbers (mkdocstrings' source code, ``<td class="code">``) keep their line anchors,
which the numbers link to.
Notebook cells (nbconvert's own stylesheet) are not touched.
"""

from __future__ import annotations

import re

# material's colour of each Pygments class (main.css, the same variables in both schemes)
_GROUPS = {
    "light": "p o ow",
    "string": "cpf l s s1 s2 sb sc si ss",
    "special": "cp se sh sr sx",
    "number": "il m mb mf mh mi mo",
    "keyword": "k kd kn kp kr kt nd ni nl nt",
    "constant": "bp nb no",
    "function": "nc ne nf nn",
    "variable": "na nv vc vg vi",
}
GROUP = {cls: group for group, classes in _GROUPS.items() for cls in classes.split()}
PLAIN = {"n", "kc", "w"}

_LISTING = re.compile(
    r'(?P<head>(?:<div class="language-[^"]*highlight">(?:<span class="filename">[^<]*</span>)?'
    r'|<td class="code"><div>)<pre[^>]*>(?:<span></span>)?<code>)'
    r"(?P<body>.*?)(?P<tail></code></pre>)",
    re.DOTALL,
)
_LINE_ANCHOR = re.compile(r'<a id="(__codelineno-[\d-]+)" name="\1" href="#\1"></a>')
_SPAN = re.compile(r'<span class="(?P<cls>[a-z0-9]+)">(?P<text>[^<]*)</span>')


def _slim_body(body: str) -> str:
    body = _LINE_ANCHOR.sub("", body)
    pieces: list[list[str | None]] = []  # [class, text]; class None: raw text or markup

    def add(cls: str | None, text: str) -> None:
        if not text:
            return
        if cls is None and pieces and pieces[-1][0] is None:
            pieces[-1][1] += text  # raw text joins raw text
            return
        # a span after (span, spaces) or right after a span of the same colour joins it
        if cls is not None:
            for back in (1, 2):
                if len(pieces) < back:
                    break
                prev = pieces[-back]
                spaces = pieces[-1][1] if back == 2 else ""
                if back == 2 and (pieces[-1][0] is not None or spaces.strip()):
                    break
                if prev[0] is not None and GROUP.get(prev[0], prev[0]) == GROUP.get(cls, cls):
                    prev[1] += spaces + text
                    del pieces[len(pieces) - back + 1 :]
                    return
        pieces.append([cls, text])

    pos = 0
    for span in _SPAN.finditer(body):
        add(None, body[pos : span.start()])
        cls = span.group("cls")
        add(None if cls in PLAIN else cls, span.group("text"))
        pos = span.end()
    add(None, body[pos:])
    return "".join(
        text if cls is None else f'<span class="{cls}">{text}</span>' for cls, text in pieces
    )


def slim_listings(page_html: str) -> str:
    """``page_html`` with every material code listing slimmed (same text, same colours)."""
    if '<div class="language-' not in page_html and '<td class="code">' not in page_html:
        return page_html
    return _LISTING.sub(
        lambda m: m.group("head") + _slim_body(m.group("body")) + m.group("tail"), page_html
    )
