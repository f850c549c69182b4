"""tools/notebook_css.py: a notebook page keeps the CSS rules its HTML can use (that nothing it
uses is lost: tests/browser/test_notebook_styles.py)."""

from __future__ import annotations

from tools import notebook_css
from tools.hooks.notebook_styles import slim_notebook_styles


def test_rules_are_kept_by_the_classes_of_the_page() -> None:
    css = ".a{color:red}.b{color:blue}.a .c{margin:0}p{padding:0}.a,.b{top:0}"
    kept = notebook_css.purge_rules(css, {"a"})
    assert kept == ".a{color:red}p{padding:0}.a{top:0}"


def test_classes_inside_not_are_not_needed() -> None:
    assert notebook_css.purge_rules(".a:not(.absent){x:1}", {"a"}) == ".a:not(.absent){x:1}"
    assert notebook_css.purge_rules(".absent:not(.a){x:1}", {"a"}) == ""


def test_a_selector_list_is_split_at_top_level_commas_only() -> None:
    css = ":is(.a, .b) .c, .d{x:1}"
    assert notebook_css.purge_rules(css, {"a", "b", "c"}) == ":is(.a, .b) .c{x:1}"


def test_media_blocks_keep_their_used_rules_and_vanish_when_empty() -> None:
    css = "@media (min-width: 10px){.a{x:1}.b{y:2}}@media print{.b{y:2}}@font-face{src:url(f)}"
    assert notebook_css.purge_rules(css, {"a"}) == (
        "@media (min-width: 10px){.a{x:1}}@font-face{src:url(f)}"
    )


def test_classes_added_by_the_page_scripts_are_kept() -> None:
    assert notebook_css.purge_rules(".jp-mod-warning{x:1}", set()) == ".jp-mod-warning{x:1}"


def test_custom_properties_go_when_nothing_reads_them() -> None:
    css = (
        ".w{--used:1px;--chain:var(--used);--unused:2px;--read-outside:3px}.a{margin:var(--chain)}"
    )
    slim = notebook_css.drop_unused_properties(css, {"--read-outside"})
    assert slim == ".w{--used:1px;--chain:var(--used);--read-outside:3px}.a{margin:var(--chain)}"
    # a property read only by a dropped one goes too
    assert notebook_css.drop_unused_properties(".w{--x:1;--y:var(--x)}") == ".w{}"


def test_pages_without_a_notebook_are_not_touched() -> None:
    head = "<html><head><style>.x{y:1}</style></head>"
    page = head + "<body><article><style>.z{a:b}</style></article></body></html>"
    assert slim_notebook_styles(page) == page
