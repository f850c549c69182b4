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
        # nor the Chinese definition the glossary page shows
        assert not glossary.avoided_terms(term.def_zh), (term.id, term.def_zh)
        assert len(term.shown) == len(term.avoid)


# A sentence for each rejected variant whose pattern needs more than the word itself.
PLANTED = {
    "(?<![关按])键(?=和|与|的位置|之间)": "query 和键之间的点积。",
    "中文句子里单独的 id": "图像的最大 id 加一。",
    "位置 id、时间 id": "每个 token 有三个时间 id。",
    "checkpoint": "加载这个 checkpoint 就行。",
    "ramp": "YaRN 的 ramp 不取整。",
}


@pytest.mark.parametrize(
    ("term", "pattern", "shown"),
    [(t, p, s) for t in glossary.terms() for p, s in zip(t.avoid, t.shown, strict=True)],
    ids=lambda v: v.id if isinstance(v, glossary.Term) else None,
)
def test_every_rejected_variant_is_reported(term, pattern: str, shown: str) -> None:
    sentence = PLANTED.get(pattern) or PLANTED.get(shown) or f"这一段写了{shown}这个词。"
    assert re.search(pattern, sentence), f"plant {shown!r} in PLANTED: {pattern!r}"
    found = [message for _, message in zt.problems(sentence)]
    assert any(f"#{term.id})" in message for message in found), (sentence, found)
    # and where a reader sees it: the description, a notebook cell, a figure label
    assert any(f"#{term.id})" in m for _, m in zt.problems(f"---\ndescription: {sentence}\n---\n"))
    label = f'LABELS = {{"en": {{"x": "x"}}, "zh": {{"x": {sentence!r}}}}}\n'
    assert any(f"#{term.id})" in m for _, m in zt.code_problems(label))


@pytest.mark.parametrize(
    "line",
    [
        "取平均后的句向量是置换不变的。",  # invariance is another idea than 置换等变
        "词表里每个 token id 对应一行，位置编号（position id）另算。",
        "不是逐位置相加。",
        "先读一份权重（checkpoint）再说。",
        "代码里的 `ramp` 函数。",
        "softmax 缩放系数仍是 \\(1/\\sqrt{d}\\)。",
        "页面的布局偏移（CLS）。",
        "在笔记本电脑上运行。",
        "全局注意力和滑动窗口注意力交替，全局层每 4 层一个。",
        "分组查询注意力（GQA）。",
        "attention sink（注意力汇聚点）。",
        "编码器和解码器各有一张表。",
    ],
)
def test_legitimate_neighbours_of_a_rejected_variant_pass(line: str) -> None:
    assert zt.problems(line) == []


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("见 YaRN §3.2。", "第 3.2 节"),
        ("找回 20 %。", "no space before %"),
        ("配套的 [ALiBi Notebook](x.ipynb)可以下载。", "no space between Chinese and Latin"),
        ("见[第 2 章](x.md)和 RoPE（`rotate_half`）的代码。", ""),
        ("用PI和 YaRN。", "no space between Chinese and Latin"),
        ("公式\\(x\\)在这里。", "no space between Chinese and Latin"),
        ("比较 PI、YaRN and NTK-aware。", "English 'and'"),
    ],
)
def test_conventions_are_reported(line: str, problem: str) -> None:
    found = " ".join(message for _, message in zt.problems(line))
    assert problem in found if problem else found == ""


@pytest.mark.parametrize(
    "line",
    [
        "见 YaRN 第 3.2 节，找回 20%。",
        "配套的 [ALiBi Notebook](x.ipynb) 可以下载，见[第 2 章](x.md)。",
        "称之为“过大而稀疏”（excessively large and sparse）。",
        "- Press, Smith and Lewis (2022). *Train Short and Test Long*. [arXiv](u). 斜率与外推。",
        "苏剑林《从熵不变性看Attention的Scale操作》。",
    ],
)
def test_conventions_leave_good_prose_alone(line: str) -> None:
    assert zt.problems(line) == []


def test_the_glossary_pages_define_and_anchor_every_term() -> None:
    for lang in ("en", "zh"):
        page = glossary.page(lang)
        for group in glossary.groups():
            assert f"{{ #{group.id} }}" in page
        for term in glossary.terms():
            assert page.count(f"{{ #{term.id} }}") == 1
            assert (term.def_zh if lang == "zh" else term.def_en) in page
            if term.formula:
                assert f"\\[\n{term.formula}\n\\]" in page
            for shown in term.rejected():
                assert shown in page
    # the chapter links point at the page in the reader's language, by anchor
    assert "[第 5 章“底数的选择”](../chapters/05-rope.md#base)" in glossary.page("zh")
    assert "[chapter 5, *Choice of base*](../chapters/05-rope.md#base)" in glossary.page("en")
    # what the Chinese page says in its own voice passes the prose check ("英文：" names the
    # English term and "不用：" lists the variants, both on purpose)
    page = glossary.page("zh").split("\n")
    prose = [line for line in page if not line.startswith(("不用：", "英文："))]
    assert zt.problems("\n".join(prose)) == []
    with pytest.raises(ValueError, match="lang must be one of"):
        glossary.page("fr")


def test_a_chapter_link_to_a_missing_heading_fails(tmp_path: Path) -> None:
    term = glossary.terms()[0]
    broken = glossary.Term(**{**term.__dict__, "chapter": "chapters/05-rope.md#no-such-section"})
    with pytest.raises(ValueError, match="no heading"):
        glossary.chapter_link(broken, "zh")


def test_a_malformed_glossary_is_refused(tmp_path) -> None:
    bad = tmp_path / "g.toml"
    head = '[[group]]\nid = "g"\nen = "G"\nzh = "组"\n[[term]]\nid = "x"\ngroup = "g"\n'
    full = head + 'en = "x"\nzh = "叉"\ndef_en = "An x."\ndef_zh = "一个叉。"\n'
    bad.write_text(full + 'avoid = ["("]\n', encoding="utf-8")
    with pytest.raises(ValueError, match="term 'x'"):
        glossary.terms(bad)
    bad.write_text(head + 'en = "x"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="needs"):
        glossary.terms(bad)
    bad.write_text(full.replace('group = "g"', 'group = "nope"'), encoding="utf-8")
    with pytest.raises(ValueError, match="no group"):
        glossary.terms(bad)
    bad.write_text(full + 'avoid = [{ re = "叉子" }]\n', encoding="utf-8")
    with pytest.raises(ValueError, match="needs re and shown"):
        glossary.terms(bad)


def test_chinese_strings_in_code_are_checked_english_ones_and_comments_are_not() -> None:
    source = (
        "# 缩放因子 in a comment is not shown to a reader\n"
        'LABELS = {"en": {"y": "scaling factor"}, "zh": {"y": f"缩放因子 {1}"}}\n'
        'print("hidden states")\n'
    )
    found = zt.code_problems(source)
    assert [(line, "#scaling-factor)" in message) for line, message in found] == [(2, True)]
    data = '{"note_en": "see §3.2", "note_zh": "见技术报告 §3.2，找回 20 %"}'
    found = [message for _, message in zt.code_problems(data, is_json=True)]
    assert len(found) == 2 and "第 3.2 节" in found[0] and "%" in found[1]


def test_a_notebook_cell_to_fix_is_reported_code_cells_only_for_the_glossary(
    tmp_path: Path,
) -> None:
    cell = {"cell_type": "markdown", "metadata": {}, "source": ["位置编码,以及 RoPE"]}
    code = {"cell_type": "code", "metadata": {}, "source": ["x = 1,2"], "outputs": []}
    label = {
        "cell_type": "code",
        "metadata": {},
        "source": ["%matplotlib inline\n", 'plt.xlabel("缩放因子 s")'],
        "outputs": [],
    }
    notebook = tmp_path / "x.zh.ipynb"
    notebook.write_text(json.dumps({"cells": [code, cell, label]}), encoding="utf-8")
    found = zt.notebook_problems(notebook)
    assert found[0] == "cell 2: punctuation or line breaks that zh_text --fix changes"
    assert len(found) == 2 and found[1].startswith(
        "cell 3 (code), line 2: glossary: write '缩放倍数'"
    )
