"""Chinese prose uses full-width punctuation; code, formulas and links are never touched."""

from __future__ import annotations

from tools import zh_punctuation as zp
from tools.layout import ROOT


def test_chinese_pages_use_full_width_punctuation() -> None:
    for page in sorted((ROOT / "docs").rglob("*.zh.md")):
        text = page.read_text(encoding="utf-8")
        assert zp.fix_text(text) == text, f"run: python tools/zh_punctuation.py --fix {page}"


def test_prose_is_fixed() -> None:
    assert zp.fix_line("先看公式(第 2 章),再看代码:") == "先看公式（第 2 章），再看代码："
    assert zp.fix_line('"猫抓老鼠"和"老鼠抓猫"') == "“猫抓老鼠”和“老鼠抓猫”"
    assert zp.fix_line("这样对吗?") == "这样对吗？"
    # quotes pair from the left: English quoted words stay, the Chinese between is not "quoted"
    assert zp.fix_line('对 "dog bites man" 和 "人咬狗"') == '对 "dog bites man" 和 “人咬狗”'


def test_code_math_links_and_syntax_are_kept() -> None:
    for line in (
        "调用 `f(x, y)`:",
        "公式 \\(a, b\\) 中",
        "见 [链接](https://a.b/c,d)",
        "English (only), here: fine",
        '--8<-- "snippets/x.py:part"',
    ):
        kept = zp.fix_line(line)
        for protected in (
            "`f(x, y)`",
            "\\(a, b\\)",
            "(https://a.b/c,d)",
            "(only), here:",
            '"snippets/x.py:part"',
        ):
            if protected in line:
                assert protected in kept
    assert zp.fix_line('!!! warning "常见错误:斜率"') == '!!! warning "常见错误：斜率"'
    text = "---\ndescription: 位置,编码\n---\n\n```python\nprint(1, 2)  # 中文,注释\n```\n"
    fixed = zp.fix_text(text)
    assert "description: 位置，编码" in fixed and "print(1, 2)  # 中文,注释" in fixed
