"""Formulas as MathML (tools/formulas.py): the math font the site ships holds every character
the formulas use, and Chromium lays the formulas out with it: brackets stretch around a
matrix, primes sit on the line, no formula collapses."""

from __future__ import annotations

import re
from html import unescape

import pytest

from tests.browser import sitepages
from tools import formulas

FONT = sitepages.SITE / "assets" / "formulas" / formulas.MATH_FONT
MATH = re.compile(r"<math\b.*?</math>", re.DOTALL)
TAG = re.compile(r"<[^>]+>")
MATHML_OUTPUT = formulas.uses_math_font()
# Noto Sans Math has no overline (U+203E, Temml's \\bar accent): it comes from the text font,
# which every system has with it, and Temml's stylesheet places it (checked on screenshots)
FROM_THE_TEXT_FONT = {"\u203e"}


def _formulas(page: sitepages.Page) -> list[str]:
    return MATH.findall(page.file.read_text(encoding="utf-8"))


def _math_pages() -> list[sitepages.Page]:
    return [page for page in sitepages.pages() if "<math" in page.file.read_text("utf-8")]


def _most_formulas() -> sitepages.Page | None:
    """The page with the most formulas, among those with a matrix if any has one."""
    pages = _math_pages()
    with_matrix = [page for page in pages if "<mtable" in page.file.read_text("utf-8")]
    pages = with_matrix or pages
    return max(pages, key=lambda page: len(_formulas(page))) if pages else None


needs_mathml = pytest.mark.skipif(
    not MATHML_OUTPUT or not sitepages.built(), reason="site not built with MathML output"
)


@needs_mathml
def test_math_font_has_every_character_the_formulas_use() -> None:
    from fontTools.ttLib import TTFont

    cmap = TTFont(str(FONT)).getBestCmap()
    used = {}
    for page in _math_pages():
        for formula in _formulas(page):
            for char in unescape(TAG.sub("", formula)):
                used.setdefault(char, str(page))
    missing = {
        f"U+{ord(c):04X} {c}": where
        for c, where in used.items()
        if ord(c) not in cmap
        and c not in FROM_THE_TEXT_FONT
        and not c.isspace()
        and not ("\u2060" <= c <= "\u2064")
        and not ("\u4e00" <= c <= "\u9fff")  # Chinese in \text{} comes from the text font
        and not ("\uff00" <= c <= "\uffef")  # ... and so does its full-width punctuation
    }
    assert not missing, f"characters the math font lacks (first page using each): {missing}"
    assert ord("√") in cmap, "the radical <msqrt> draws is missing"


@needs_mathml
def test_no_prime_left_in_a_script() -> None:
    """x' is x′ on the line (tools/formulas.py `_primes_on_the_line`)."""
    offenders = [
        str(page) for page in _math_pages() if 'class="tml-prime"' in page.file.read_text("utf-8")
    ]
    assert not offenders


@pytest.mark.browser
@needs_mathml
def test_formulas_laid_out_with_the_math_font(page) -> None:
    target = _most_formulas()
    assert target is not None
    page.goto(target.rel, wait_until="load")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    page.evaluate("document.fonts.ready")
    page.wait_for_timeout(300)
    state = page.evaluate(
        """async () => {
          await document.fonts.load('16px "Noto Sans Math"');
          const math = [...document.querySelectorAll('.md-content math')];
          const visible = math.filter(m => m.getClientRects().length);
          const collapsed = visible.filter(m => {
            const r = m.getBoundingClientRect(); return r.width < 2 || r.height < 2;
          }).map(m => m.textContent.slice(0, 60));
          const fonts = [...document.fonts].filter(f => f.family.includes('Noto Sans Math'));
          const brackets = [...document.querySelectorAll('.md-content mtable')]
            .map(t => t.previousElementSibling)
            .filter(mo => mo && mo.tagName.toLowerCase() === 'mo' && mo.getClientRects().length)
            .map(mo => mo.getBoundingClientRect().height /
                       parseFloat(getComputedStyle(mo).fontSize));
          return {count: math.length, collapsed,
                  loaded: fonts.map(f => f.status),
                  family: math.length ? getComputedStyle(math[0]).fontFamily : '',
                  brackets};
        }"""
    )
    assert state["count"] > 0
    assert "Noto Sans Math" in state["family"]
    assert "loaded" in state["loaded"], state["loaded"]
    assert not state["collapsed"], state["collapsed"]
    if state["brackets"]:  # a bracket around a two-row matrix spans both rows
        assert min(state["brackets"]) > 1.8, state["brackets"]
    assert not page.watch.problems, page.watch.problems
