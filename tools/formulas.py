"""Build-time math: turn the TeX left in the HTML into MathML.

Why at build time: client-side MathJax was most of a page's load time (NOTES.md), and a
page with pre-rendered math needs no script, works offline and survives material's instant
navigation untouched. The renderer runs in one long-lived Node process
(tools/render_formulas.cjs).

Why MathML alone: every current browser lays out MathML Core (Chromium since 109, Firefox,
Safari). KaTeX's HTML output drew each formula twice (HTML for the eye, MathML for screen
readers) and needed KaTeX's 23 kB stylesheet and its fonts; the MathML written by Temml (a
KaTeX fork that writes MathML Core: Unicode letters for \\mathbb and \\mathcal, spacing after
\\cos) with a subset of Noto Sans Math that carries the OpenType MATH table (stretchy
brackets, big operators) renders the site's formulas with a fifth of the bytes. The page
"How fast the site loads" (docs/reference/site-speed.md) prints the measurement
(``benchmarks/lighthouse.py --compare-math``); ``POSENC_MATH_OUTPUT`` builds the site with
another output (`OUTPUTS`) to compare again.

Every output is wrapped as KaTeX wraps its own, ``<span class="katex">`` (inside
``<span class="katex-display">`` for a display formula): KaTeX's stylesheet needs those
classes for the ``katex-html`` comparison build, and one wrapper for every output lets the
site's stylesheet, the tests and ``benchmarks/lighthouse.py`` find formulas the same way in
each build. The module is named for what it does; only that wrapper keeps KaTeX's name.

Two sources of TeX reach the HTML:
* Markdown pages and docstrings, through ``pymdownx.arithmatex`` (generic mode):
  ``<span class="arithmatex">\\(..\\)</span>`` and ``<div class="arithmatex">\\[..\\]</div>``.
* Notebook markdown cells, through nbconvert: raw ``$..$`` / ``$$..$$`` (and ``\\(..\\)``)
  inside ``<div class="... jp-MarkdownOutput ...">``.
"""

from __future__ import annotations

import atexit
import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from tools.layout import ROOT

RENDERER = Path(__file__).resolve().parent / "render_formulas.cjs"
NODE_MODULES = ROOT / "node_modules"
KATEX_DIST = NODE_MODULES / "katex" / "dist"
TEMML_CSS = NODE_MODULES / "temml" / "dist" / "Temml-NotoSans.css"
# Noto Sans Math (SIL OFL 1.1) from npm: the whole font with its OpenType MATH table, as WOFF
MATH_FONT_SOURCE = (
    NODE_MODULES / "@fontsource" / "noto-sans-math" / "files"
) / "noto-sans-math-latin-400-normal.woff"
MATH_FONT = "fonts/math.woff"  # under assets/formulas/: the subset the site's formulas use
OUTPUTS = {
    "mathml": "MathML Core written by Temml, laid out by the browser with Noto Sans Math",
    "katex-html": "KaTeX's HTML (its stylesheet and fonts) plus a MathML copy for screen readers",
    "katex-mathml": "KaTeX's MathML alone, laid out by the browser with Noto Sans Math",
}
DEFAULT_OUTPUT = "mathml"


def output_mode() -> str:
    """The formula output of this build: ``$POSENC_MATH_OUTPUT`` or `DEFAULT_OUTPUT`."""
    mode = os.environ.get("POSENC_MATH_OUTPUT") or DEFAULT_OUTPUT
    if mode not in OUTPUTS:
        raise ValueError(f"POSENC_MATH_OUTPUT must be one of {sorted(OUTPUTS)}, got {mode!r}")
    return mode


class MathError(RuntimeError):
    """A formula the renderer cannot parse; the message names the formula and the reason."""


class FormulaRenderer:
    """One Node process for the whole build; answers are memoised (pages repeat formulas)."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[str] | None = None
        self._memo: dict[tuple[str, bool], str] = {}
        self.characters: set[str] = set()  # every character inside <math>: the font's subset

    def _start(self) -> subprocess.Popen[str]:
        if not (KATEX_DIST / "katex.min.css").is_file() or not TEMML_CSS.is_file():
            raise MathError("KaTeX/Temml not installed: run `make install` (it runs `npm ci`).")
        if shutil.which("node") is None:
            raise MathError("Node.js is needed to render formulas at build time: install `node`.")
        proc = subprocess.Popen(
            ["node", str(RENDERER), output_mode()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            cwd=ROOT,
        )
        atexit.register(proc.kill)
        return proc

    def render(self, tex: str, display: bool) -> str:
        key = (tex, display)
        if key not in self._memo:
            if self._proc is None or self._proc.poll() is not None:
                self._proc = self._start()
            assert self._proc.stdin and self._proc.stdout
            self._proc.stdin.write(json.dumps({"tex": tex, "display": display}) + "\n")
            self._proc.stdin.flush()
            reply = json.loads(self._proc.stdout.readline())
            if "error" in reply:
                raise MathError(f"cannot render {tex!r}: {reply['error']}")
            self._memo[key] = _sized_fences(_primes_on_the_line(reply["html"]))
            for math in _MATH.findall(self._memo[key]):
                self.characters.update(html.unescape(_TAG.sub("", math)))
        return self._memo[key]


_MATH = re.compile(r"<math\b.*?</math>", re.DOTALL)
_ELEMENT_TAG = re.compile(r"<(/?)([a-z]+)\b[^>]*?(/?)>")
_SCRIPTED = re.compile(r"<(msup|msubsup)>")
# Temml's prime: deeper in scripts (j' in a subscript) it carries scriptlevel="2", and after a
# letter on its own (x') a second class, tml-sml-pad
_PRIME = re.compile(
    r'<mo lspace="0em" rspace="0em"(?: scriptlevel="\d+")? class="tml-prime(?: [\w-]+)*">'
    r"([′″‴]+)</mo>"
)


def _element_end(text: str, start: int) -> int:
    """Where the element whose start tag begins at ``start`` ends (after its end tag)."""
    depth = 0
    for tag in _ELEMENT_TAG.finditer(text, start):
        if tag.group(3):  # <mspace/>
            if depth == 0:
                return tag.end()
            continue
        depth += -1 if tag.group(1) else 1
        if depth == 0:
            return tag.end()
    raise ValueError(f"unbalanced MathML at {start}: {text[start : start + 80]!r}")


def _primes_on_the_line(markup: str) -> str:
    """``x'`` as ``x′`` on the base line instead of a prime in a superscript.

    TeX's ``x'`` is ``x^{\\prime}``; Temml writes it as ``<msup>`` with U+2032 as the script.
    A font with the ``ssty`` feature swaps in a larger prime for scripts, but Noto Sans Math
    has none, so the prime, already a small raised glyph, came out tiny and far too high.
    U+2032 is drawn to sit after its letter on the line (as in plain text: f′), so the prime
    leaves the script: ``<mrow>x<mo>′</mo></mrow>``, and ``x'_i`` becomes ``msub(x′, i)``.
    """
    for opening in reversed(list(_SCRIPTED.finditer(markup))):
        start, tag = opening.start(), opening.group(1)
        children, pos = [], opening.end()
        end = _element_end(markup, start)
        while pos < end - len(f"</{tag}>"):
            child_end = _element_end(markup, pos)
            children.append(markup[pos:child_end])
            pos = child_end
        prime = _PRIME.fullmatch(children[-1]) if children else None
        if prime is None:
            continue
        line = f'<mrow>{children[0]}<mo lspace="0em" rspace="0em">{prime.group(1)}</mo></mrow>'
        if tag == "msubsup":
            line = f"<msub>{line}{children[1]}</msub>"
        markup = markup[:start] + line + markup[end:]
    return markup


_SIZED_FENCE = re.compile(r'<mo fence="false"(?P<attrs>[^>]*minsize[^>]*)>(?P<char>[^<]+)</mo>')
_OPENING, _CLOSING = set("([{⟨⌊⌈"), set(")]}⟩⌋⌉")


def _sized_fences(markup: str) -> str:
    """``\\big(`` and friends as prefix/postfix operators, like ``\\left(``.

    Temml writes a sized bracket as an ``<mo>`` with no ``form``; inside a row MathML then
    takes it for an infix operator and puts 0.28em of space on both sides of it.
    """

    def form(match: re.Match[str]) -> str:
        char = match.group("char")
        which = "prefix" if char in _OPENING else "postfix" if char in _CLOSING else None
        if which is None:
            return match.group(0)
        return f'<mo fence="false" form="{which}"{match.group("attrs")}>{char}</mo>'

    return _SIZED_FENCE.sub(form, markup)


# Chromium draws a one-letter <mi> in the font's mathematical italic (text-transform:
# math-auto): U+1D434.. for Latin, U+1D6FC.. for Greek; the subset must hold those too.
def _italic(char: str) -> str | None:
    code = ord(char)
    if char == "h":
        return "\u210e"
    if "a" <= char <= "z":
        return chr(0x1D44E + code - ord("a"))
    if "A" <= char <= "Z":
        return chr(0x1D434 + code - ord("A"))
    if 0x3B1 <= code <= 0x3C9:
        return chr(0x1D6FC + code - 0x3B1)
    if 0x391 <= code <= 0x3A9 and code != 0x3A2:
        return chr(0x1D6E2 + code - 0x391)
    variants = {"ϵ": 0x1D716, "ϑ": 0x1D717, "ϰ": 0x1D718, "ϕ": 0x1D719, "ϱ": 0x1D71A}
    variants |= {"ϖ": 0x1D71B, "∂": 0x1D715, "∇": 0x1D6FB, "ı": 0x1D6A4, "ȷ": 0x1D6A5}
    return chr(variants[char]) if char in variants else None


_TAG = re.compile(r"<[^>]+>")
_renderer = FormulaRenderer()

# arithmatex (generic) wraps TeX in its delimiters inside a span/div of class "arithmatex"
_ARITHMATEX = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">(?P<body>.*?)</(?P=tag)>', re.DOTALL
)


def _strip_delimiters(body: str) -> tuple[str, bool]:
    body = body.strip()
    for left, right, display in (
        ("\\[", "\\]", True),
        ("\\(", "\\)", False),
        ("$$", "$$", True),
        ("$", "$", False),
    ):
        if body.startswith(left) and body.endswith(right) and len(body) >= len(left) + len(right):
            return body[len(left) : len(body) - len(right)], display
    # arithmatex also emits \begin{env}...\end{env} blocks without delimiters
    return body, True


def _render_arithmatex(match: re.Match[str]) -> str:
    tex, display = _strip_delimiters(html.unescape(match.group("body")))
    rendered = _renderer.render(tex, display)
    if match.group("tag") == "div":
        return f'<div class="arithmatex">{rendered}</div>'
    return f'<span class="arithmatex">{rendered}</span>'


# Notebook markdown cells: $$..$$, \[..\], then $..$, \(..\); not inside <code>/<pre>.
_NB_MATH = re.compile(
    r"(?P<code><(code|pre)\b.*?</\2>)"
    r"|\$\$(?P<d1>.+?)\$\$|\\\[(?P<d2>.+?)\\\]"
    r"|(?<![\\$])\$(?P<i1>[^$\n]+?)\$|\\\((?P<i2>.+?)\\\)",
    re.DOTALL,
)


def _render_notebook_math(match: re.Match[str]) -> str:
    if match.group("code"):
        return match.group("code")
    for name, display in (("d1", True), ("d2", True), ("i1", False), ("i2", False)):
        tex = match.group(name)
        if tex is not None:
            return _renderer.render(html.unescape(tex), display)
    raise AssertionError("unreachable")


def _markdown_cells(page_html: str):
    """Yield (start, end) spans of the jp-MarkdownOutput divs, matching nested <div>s."""
    for opening in re.finditer(r'<div[^>]*class="[^"]*jp-MarkdownOutput[^"]*"[^>]*>', page_html):
        depth, pos = 1, opening.end()
        for tag in re.finditer(r"<(/?)div\b", page_html[pos:]):
            depth += -1 if tag.group(1) else 1
            if depth == 0:
                yield opening.end(), pos + tag.start()
                break


# nbconvert's template loads MathJax from a CDN; math is rendered here instead.
_NB_MATHJAX = re.compile(
    r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->\s*"
    r"|<script[^>]*src=\"https?://[^\"]*mathjax[^\"]*\"[^>]*>\s*</script>"
    r"|<script type=\"text/x-mathjax-config\">.*?</script>",
    re.DOTALL | re.IGNORECASE,
)


def render_page(page_html: str, *, where: str) -> str:
    """Return ``page_html`` with every formula rendered; raise MathError naming ``where``."""
    try:
        out = _ARITHMATEX.sub(_render_arithmatex, page_html)
        if "jp-MarkdownOutput" in out:
            out = _NB_MATHJAX.sub("", out)
            pieces, last = [], 0
            for start, end in list(_markdown_cells(out)):
                pieces += [out[last:start], _NB_MATH.sub(_render_notebook_math, out[start:end])]
                last = end
            out = "".join(pieces) + out[last:]
    except MathError as err:
        raise MathError(f"{where}: {err}") from None
    return out


# ── Stylesheet and font ─────────────────────────────────────────────────────

# Placement of display formulas (a little larger than the text) for the MathML outputs;
# KaTeX's own stylesheet (katex-html) has its equivalent, Temml's leaves it to the page.
PLACEMENT_CSS = (
    ".katex-display{display:block;margin:1em 0;text-align:center;overflow-x:auto;"
    "overflow-y:hidden}.katex-display>.katex>math{display:block math;font-size:1.1em}"
)
FONT_FACE_CSS = (
    '@font-face{font-family:"Noto Sans Math";'
    f'src:url({MATH_FONT}) format("woff");font-display:swap}}'
)


def _minify(css: str) -> str:
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL)
    css = re.sub(r"\s+", " ", css)
    return re.sub(r"\s*([{};:,>])\s*", r"\1", css).replace(";}", "}").strip()


def formula_css(mode: str | None = None) -> str:
    """The stylesheet the formulas of ``mode`` (default: this build's) need; font addresses
    are relative to ``assets/formulas/``.

    * ``mathml``: Temml's stylesheet for Noto Sans Math (Chromium's prime, accents and
      WebKit/Firefox corrections), its font rule replaced by ours for the subset we ship.
    * ``katex-mathml``: the font and the placement of display formulas only.
    * ``katex-html``: KaTeX's stylesheet with only the WOFF2 source of each font (all
      current browsers read WOFF2), so no rule points at a file the site does not ship.
    """
    mode = mode or output_mode()
    if mode == "mathml":
        temml = re.sub(r"@font-face\s*{[^}]*}", "", TEMML_CSS.read_text(encoding="utf-8"))
        temml = temml.replace('"NotoSans Math"', '"Noto Sans Math"')
        return FONT_FACE_CSS + _minify(temml) + PLACEMENT_CSS
    if mode == "katex-mathml":
        return FONT_FACE_CSS + 'math{font-family:"Noto Sans Math",math}' + PLACEMENT_CSS
    css = (KATEX_DIST / "katex-swap.min.css").read_text(encoding="utf-8")
    return re.sub(r',url\(fonts/[^)]+\.(?:woff|ttf)\) format\("(?:woff|truetype)"\)', "", css)


def uses_math_font(mode: str | None = None) -> bool:
    return (mode or output_mode()) in ("mathml", "katex-mathml")


def write_math_font(target: Path, characters: set[str]) -> int:
    """Noto Sans Math cut down to ``characters`` (with their MATH table variants and
    assemblies: stretched brackets, big operators, primes), as WOFF; returns its size."""
    from fontTools import subset  # a dependency of matplotlib; only the build needs it

    options = subset.Options()
    options.flavor = "woff"  # zlib: WOFF2 would need brotli, for ~20 % fewer bytes
    options.layout_features = ["*"]  # ssty (primes, scripts), ss01 (calligraphic), ...
    options.name_IDs = ["*"]  # the copyright and licence records stay (SIL OFL 1.1)
    font = subset.load_font(str(MATH_FONT_SOURCE), options, dontLoadGlyphNames=True)
    font.recalcTimestamp = False  # the same characters give the same bytes
    subsetter = subset.Subsetter(options)
    italic = {_italic(c) for c in characters} - {None}
    # and what the browser draws without a character in the markup: the radical of <msqrt>
    drawn = {"\u221a", " ", "\u00a0"}
    subsetter.populate(unicodes={ord(c) for c in characters | italic | drawn})
    subsetter.subset(font)
    target.parent.mkdir(parents=True, exist_ok=True)
    subset.save_font(font, str(target), options)
    return target.stat().st_size


def copy_assets(site_dir: Path) -> None:
    """Write the formulas' fonts: the Noto Sans Math subset for the MathML outputs, KaTeX's
    WOFF2 fonts for its HTML. Their stylesheet is written into each page (`style_page`)."""
    target = site_dir / "assets" / "formulas"
    target.mkdir(parents=True, exist_ok=True)
    if uses_math_font():
        write_math_font(target / MATH_FONT, _renderer.characters)
        return
    (target / "fonts").mkdir(exist_ok=True)
    for font in (KATEX_DIST / "fonts").glob("*.woff2"):
        shutil.copyfile(font, target / "fonts" / font.name)


# mkdocs.yml lists this stylesheet in extra_css, so that material writes its link where the
# page's stylesheets go; no such file is written: `style_page` replaces the link with the
# stylesheet itself on a page with formulas and removes it from every other page.
_STYLESHEET_LINK = re.compile(
    r'<link rel="stylesheet" href="(?P<href>[^"]*assets/formulas/formulas\.css)">'
)


def style_page(page_html: str) -> str:
    """A page with formulas gets their stylesheet inline, in place of the link to
    ``assets/formulas/formulas.css`` (and a preload of the math font, so it arrives with the
    page rather than after the first layout); a page without loses the link."""
    link = _STYLESHEET_LINK.search(page_html)
    if link is None:
        return page_html
    if 'class="katex"' not in page_html:
        return page_html[: link.start()] + page_html[link.end() :]
    folder = link.group("href").rsplit("/", 1)[0] + "/"
    css = formula_css().replace("url(fonts/", f"url({folder}fonts/")
    head = ""
    if uses_math_font():
        head = (
            f'<link rel="preload" href="{folder}{MATH_FONT}" as="font" type="font/woff" '
            "crossorigin>"
        )
    return page_html[: link.start()] + f"{head}<style>{css}</style>" + page_html[link.end() :]
