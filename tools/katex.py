"""Build-time math: turn the TeX left in the HTML into KaTeX HTML + MathML.

Why at build time: client-side MathJax was most of a page's load time (NOTES.md), and a
page with pre-rendered math needs no script, works offline and survives material's instant
navigation untouched. KaTeX runs in one long-lived Node process (tools/katex_render.cjs).

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
import re
import shutil
import subprocess
from pathlib import Path

from tools.layout import ROOT

RENDERER = Path(__file__).resolve().parent / "katex_render.cjs"
KATEX_DIST = ROOT / "node_modules" / "katex" / "dist"


class MathError(RuntimeError):
    """A formula KaTeX cannot render; the message names the formula and the reason."""


class KatexRenderer:
    """One Node process for the whole build; answers are memoised (pages repeat formulas)."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[str] | None = None
        self._memo: dict[tuple[str, bool], str] = {}

    def _start(self) -> subprocess.Popen[str]:
        if not (KATEX_DIST / "katex.min.css").is_file():
            raise MathError("KaTeX is not installed: run `make install` (it runs `npm ci`).")
        if shutil.which("node") is None:
            raise MathError("Node.js is needed to render formulas at build time: install `node`.")
        proc = subprocess.Popen(
            ["node", str(RENDERER)],
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
            self._memo[key] = reply["html"]
        return self._memo[key]


_renderer = KatexRenderer()

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


def katex_css() -> str:
    """KaTeX's stylesheet with only the WOFF2 source of each font (all current browsers read
    WOFF2), so no rule points at a file the site does not ship."""
    css = (KATEX_DIST / "katex-swap.min.css").read_text(encoding="utf-8")
    return re.sub(r',url\(fonts/[^)]+\.(?:woff|ttf)\) format\("(?:woff|truetype)"\)', "", css)


def copy_assets(site_dir: Path) -> None:
    """Copy KaTeX's stylesheet and its WOFF2 fonts."""
    target = site_dir / "assets" / "katex"
    (target / "fonts").mkdir(parents=True, exist_ok=True)
    (target / "katex.min.css").write_text(katex_css(), encoding="utf-8")
    for font in (KATEX_DIST / "fonts").glob("*.woff2"):
        shutil.copyfile(font, target / "fonts" / font.name)
