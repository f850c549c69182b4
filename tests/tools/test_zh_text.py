"""tools/zh_text.py and tools/glossary.py: Chinese prose as a Chinese reader expects it.

Full-width punctuation and joined line breaks are fixed mechanically; glossary variants,
italics, comma-joined digits, mixed-width brackets and visible spaces are reported. Code,
formulas and links are never touched.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tools import glossary
from tools import zh_text as zt


def test_prose_is_fixed() -> None:
    assert zt.fix_line("先看公式(第 2 章),再看代码:") == "先看公式（第 2 章），再看代码："
    assert zt.fix_line('"猫抓老鼠"和"老鼠抓猫"') == "“猫抓老鼠”和“老鼠抓猫”"
    assert zt.fix_line("这样对吗?") == "这样对吗？"
    # quotes pair from the left: English quoted words stay, the Chinese between is not "quoted"
    assert zt.fix_line('对 "dog bites man" 和 "人咬狗"') == '对 "dog bites man" 和 “人咬狗”'


def test_code_math_links_and_syntax_are_kept() -> None:
    for line in (
        "调用 `f(x, y)`:",
        "公式 \\(a, b\\) 中",
        "见 [链接](https://a.b/c,d)",
        "English (only), here: fine",
        '--8<-- "snippets/x.py:part"',
    ):
        kept = zt.fix_line(line)
        for protected in (
            "`f(x, y)`",
            "\\(a, b\\)",
            "(https://a.b/c,d)",
            "(only), here:",
            '"snippets/x.py:part"',
        ):
            if protected in line:
                assert protected in kept
    assert zt.fix_line('!!! warning "常见错误:斜率"') == '!!! warning "常见错误：斜率"'
    text = "---\ndescription: 位置,编码\n---\n\n```python\nprint(1, 2)  # 中文,注释\n```\n"
    fixed = zt.fix_text(text)
    assert "description: 位置，编码" in fixed and "print(1, 2)  # 中文,注释" in fixed


def test_line_breaks_inside_chinese_paragraphs_are_joined() -> None:
    text = (
        "第一行说到一半\n接着说完。这里有 `code`\n和公式 \\(x\\)，\nRoPE 继续。\n"
        "\n- 列表项\n  的续行。\n- 第二项\n\n\\[\na,\n中\n\\]\n\n```python\n# 注释\n# 中\n```\n"
        "## 标题\n正文\n"
    )
    joined = zt.join_soft_breaks(text)
    # between two Chinese characters: nothing; Chinese next to code or Latin: one space;
    # after full-width punctuation: nothing
    assert "第一行说到一半接着说完。这里有 `code` 和公式 \\(x\\)，RoPE 继续。" in joined
    assert "- 列表项的续行。\n- 第二项" in joined
    assert "\\[\na,\n中\n\\]" in joined  # display math is left alone
    assert "# 注释\n# 中" in joined  # so is code
    assert "## 标题\n正文" in joined  # a heading is its own block


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("这里用了通道这个词。", "glossary"),
        ("这是 *斜体* 的中文。", "italics"),
        ("batch 为 2,8 个头。", "ASCII comma"),
        ("括号（宽度不一)。", "mixed widths"),
        ("**标题。** 正文", "space"),
        ("中文 中文", "space"),
        ("对 “dog” 说", "space"),
    ],
)
def test_what_a_person_must_rewrite_is_reported(line: str, problem: str) -> None:
    found = " ".join(message for _, message in zt.problems(line))
    assert problem in found


@pytest.mark.parametrize(
    "line",
    [
        "这里用维度，不用那个词。",
        "**粗体**没问题，`*x*` 与 \\(a_{*}\\) 也没问题。",
        "一万写作 10000，列表写作 2、8。",
        "第 i 对维度（见第 5 章）。",
        "中文和 English 之间有空格，`code` 也是。",
        "## 标题 { #heading }",
        "苏剑林《Transformer升级之路：2、博采众长的旋转式位置编码》。",
    ],
)
def test_good_prose_passes(line: str) -> None:
    assert zt.problems(line) == []


def test_glossary_terms_are_well_formed_and_unique() -> None:
    terms = glossary.terms()
    assert len({t.en for t in terms}) == len(terms) and len({t.zh for t in terms}) == len(terms)
    for term in terms:  # an avoided variant never matches the term that replaces it
        for pattern in term.avoid:
            assert not re.search(pattern, term.zh), (term.zh, pattern)


def test_glossary_table_has_one_row_per_term_in_each_language() -> None:
    for lang in ("en", "zh"):
        rows = glossary.table(lang).split("\n")
        assert len(rows) == 2 + len(glossary.terms())
    assert glossary.table("zh").startswith("| 英文 | 中文 | 说明 |")
    with pytest.raises(ValueError, match="lang must be one of"):
        glossary.table("fr")


def test_a_malformed_glossary_is_refused(tmp_path) -> None:
    bad = tmp_path / "g.toml"
    bad.write_text('[[term]]\nen = "x"\nzh = "叉"\navoid = ["("]\n', encoding="utf-8")
    with pytest.raises(ValueError, match="term 'x'"):
        glossary.terms(bad)
    bad.write_text('[[term]]\nen = "x"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="needs both"):
        glossary.terms(bad)


def test_a_notebook_cell_to_fix_is_reported_code_cells_are_not_read(tmp_path: Path) -> None:
    cell = {"cell_type": "markdown", "metadata": {}, "source": ["位置编码,以及 RoPE"]}
    code = {"cell_type": "code", "metadata": {}, "source": ["x = 1,2"], "outputs": []}
    notebook = tmp_path / "x.zh.ipynb"
    notebook.write_text(json.dumps({"cells": [code, cell]}), encoding="utf-8")
    assert zt.notebook_problems(notebook) == [
        "cell 2: punctuation or line breaks that zh_text --fix changes"
    ]
