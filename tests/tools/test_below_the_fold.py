"""tools/hooks/below_the_fold.py: which blocks and images of an article are marked to wait
(that no marked block lands on a real first screen, and that nothing shifts while a page
loads: tests/browser/test_browser_pages.py)."""

from __future__ import annotations

import re

from tools.hooks.below_the_fold import FOLD_PX, LINE_PX, below_the_fold, estimate, mark_below_fold

FILLER = "<p>" + "word " * 60 + "</p>\n"  # one paragraph of 300 characters
MANY = FILLER * 100  # far more than a screen of text


def tops(html: str) -> list[float]:
    return [block.top for block in estimate(html)[0]]


def test_a_short_article_is_left_as_it_is() -> None:
    html = "<h1>Title</h1>\n<p>Intro.</p>\n<table><tr><td>a</td></tr></table>\n"
    assert mark_below_fold(html) == html


def test_blocks_past_the_fold_are_marked_and_those_before_are_not() -> None:
    marked = mark_below_fold(MANY)
    paragraphs = re.findall(r"<p[^>]*>", marked)
    first_marked = paragraphs.index("<p data-below-fold>")
    assert first_marked > 0
    assert all(p == "<p>" for p in paragraphs[:first_marked])
    assert all(p == "<p data-below-fold>" for p in paragraphs[first_marked:])
    assert tops(MANY)[first_marked - 1] <= FOLD_PX < tops(MANY)[first_marked]


def test_marking_adds_attributes_and_changes_nothing_else() -> None:
    html = MANY + '<figure><img alt="x" src="f.svg" width="10" height="10" /></figure>\n'
    marked = mark_below_fold(html)
    assert marked != html
    unmarked = marked.replace(" data-below-fold", "").replace(
        ' loading="lazy" decoding="async"', ""
    )
    assert unmarked == html


def test_text_moves_later_blocks_down_by_its_width_in_lines() -> None:
    latin, wide = "<p>" + "a" * 2000 + "</p>", "<p>" + "字" * 1000 + "</p>"
    assert tops(latin + "<p>x</p>")[1] == tops(wide + "<p>x</p>")[1] > 10 * LINE_PX


def test_inline_formulas_run_on_with_the_text_display_ones_make_a_line() -> None:
    inline = "<p>" + "a <math><mi>x</mi></math> " * 20 + "</p><p>after</p>"
    display = '<p>a</p><math display="block"><mi>x</mi></math><p>after</p>'
    assert tops(inline)[-1] == LINE_PX  # 20 formulas in 80 characters: one line
    assert tops(display)[-1] == 2 * LINE_PX


def test_code_counts_by_its_lines() -> None:
    one, many = "<pre><code>x = 1\n</code></pre>", "<pre><code>" + "x = 1\n" * 50 + "</code></pre>"
    assert tops(many + "<p>x</p>")[-1] > tops(one + "<p>x</p>")[-1] + 40 * 17


def test_what_a_closed_details_hides_takes_no_room() -> None:
    closed = "<details><summary>More</summary>" + MANY + "</details><p>after</p>"
    opened = closed.replace("<details>", "<details open>")
    assert tops(closed)[-1] < 3 * LINE_PX
    assert tops(opened)[-1] > FOLD_PX
    assert "data-below-fold" not in mark_below_fold(closed)


def test_only_the_first_tab_takes_room() -> None:
    def tabs(*blocks: str) -> str:
        inner = "".join(f'<div class="tabbed-block">{b}</div>' for b in blocks)
        return f'<div class="tabbed-set"><div class="tabbed-content">{inner}</div></div><p>x</p>'

    assert tops(tabs("<p>short</p>", MANY))[-1] < 3 * LINE_PX
    assert tops(tabs(MANY, "<p>short</p>"))[-1] > FOLD_PX


def test_cells_side_by_side_make_one_row() -> None:
    one_cell = "<table><tr><td>a</td></tr></table><p>x</p>"
    three_cells = "<table><tr><td>a</td><td>b</td><td>c</td></tr></table><p>x</p>"
    assert tops(one_cell)[-1] == tops(three_cells)[-1] == LINE_PX


def test_a_marked_table_keeps_no_class() -> None:
    # mkdocs-material wraps (and styles) only tables without a class: table:not([class])
    marked = mark_below_fold(MANY + "<table><tr><td>a</td></tr></table>")
    assert "<table data-below-fold>" in marked


def test_images_take_their_height_scaled_to_the_column() -> None:
    tall = '<p><img src="a.svg" width="100" height="2000"></p><p>x</p>'
    wide = '<p><img src="a.svg" width="6900" height="2000"></p><p>x</p>'
    assert tops(tall)[-1] >= 2000
    assert tops(wide)[-1] < 300  # 6900 px wide in a 690 px column: a tenth of its height


def test_images_wait_when_far_or_hidden_and_keep_their_own_loading() -> None:
    near = '<p><img src="near.svg"></p>'
    far = '<p><img src="far.svg"></p><p><img loading="eager" src="own.svg"></p>'
    hidden = '<details><summary>s</summary><img src="hidden.svg"></details>'
    marked = mark_below_fold(near + hidden + MANY + far)
    assert '<img src="near.svg">' in marked
    assert '<img loading="lazy" decoding="async" src="hidden.svg">' in marked
    assert '<img loading="lazy" decoding="async" src="far.svg">' in marked
    assert '<img loading="eager" src="own.svg">' in marked


def test_blocks_of_api_documentation_are_candidates_nested_text_is_not() -> None:
    html = '<div class="doc"><div class="doc-contents">' + MANY + "<ul><li><p>x</p></li></ul>"
    marked = mark_below_fold(html + "</div></div>")
    assert "<ul data-below-fold><li><p>x</p>" in marked
    assert '<div class="doc-contents">' in marked  # the containers are not candidates


def test_cells_of_a_notebook_are_candidates_the_notebook_is_not() -> None:
    # mkdocs-jupyter: one wrapper and one notebook around every cell of the page
    cell = '<div class="jp-Cell jp-CodeCell"><div class="highlight"><pre>x\n</pre></div></div>'
    html = '<div class="jupyter-wrapper"><div class="jp-Notebook">' + MANY + cell + "</div></div>"
    marked = mark_below_fold(html)
    assert '<div data-below-fold class="jp-Cell jp-CodeCell"><div class="highlight">' in marked
    assert '<div class="jupyter-wrapper"><div class="jp-Notebook">' in marked


def test_only_the_article_of_a_page_is_touched() -> None:
    page = '<html><body><nav><p>menu</p></nav><article class="md-content__inner md-typeset">'
    page += MANY + "</article><footer>" + FILLER + "</footer></body></html>"
    marked = below_the_fold(page)
    assert marked.count("data-below-fold") == mark_below_fold(MANY).count("data-below-fold") > 0
    assert marked.endswith("<footer>" + FILLER + "</footer></body></html>")
    redirect = "<html><body>redirect</body></html>"
    assert below_the_fold(redirect) == redirect
