"""Chinese prose uses full-width punctuation: ，：；！？（） instead of , : ; ! ? ( ).

Code, formulas, links, HTML and attribute lists are left alone; only the prose of the
``*.zh.md`` pages is checked (and, with ``--fix``, rewritten).

    python -m tools.zh_punctuation          # list the offending lines, exit 1 if any
    python -m tools.zh_punctuation --fix    # rewrite them in place
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from tools import layout
from tools.layout import ROOT

HAN = r"\u3400-\u9fff\uf900-\ufaff"  # CJK ideographs
CJK = rf"[{HAN}\u3000-\u303f\uff00-\uffef“”‘’]"  # ideographs and CJK punctuation

# spans that are not prose: inline code, math, link targets, HTML, attribute lists, URLs
_PROTECTED = re.compile(
    r"`[^`]*`"
    r"|\\\(.*?\\\)|\\\[.*?\\\]|\$\$.*?\$\$"
    r"|\]\([^)]*\)"
    r"|<[^>]*>"
    r"|\{[:#.][^}]*\}|\{ [^}]*\}"
    r"|https?://\S+"
)
_FULL = {",": "，", ":": "：", ";": "；", "!": "！", "?": "？"}
_AFTER_CJK = re.compile(rf"(?<={CJK})\s*([,:;!?])(?!\S*://)")
_BEFORE_CJK = re.compile(rf"([,;:?!])\s*(?={CJK})")
_PARENS = re.compile(r"\(([^()\n]*)\)")


def _fix_prose(text: str) -> str:
    def paren(m: re.Match[str]) -> str:
        before = text[m.start() - 1] if m.start() else ""
        if re.search(CJK, m.group(1)) or re.match(CJK, before):
            return f"（{m.group(1)}）"
        return m.group(0)

    text = _PARENS.sub(paren, text)  # first: a full-width ）makes the next , : full-width too
    text = _AFTER_CJK.sub(lambda m: _FULL[m.group(1)], text)
    text = _BEFORE_CJK.sub(lambda m: _FULL[m.group(1)], text)
    # a comma that ends a line of a Chinese paragraph (e.g. right after a formula)
    if re.search(f"[{HAN}]", text):
        text = re.sub(r",\s*$", "，", text)
    return _quotes(text)


def _quotes(text: str) -> str:
    """Straight quotes, taken in pairs from the left, become “ ” around Chinese words."""
    parts = text.split('"')
    if len(parts) % 2 == 0:  # an odd number of quotes: leave the line alone
        return text
    out = parts[0]
    for quoted, after in zip(parts[1::2], parts[2::2], strict=True):
        chinese = re.search(f"[{HAN}]", quoted)
        out += (f"“{quoted}”" if chinese else f'"{quoted}"') + after
    return out


def fix_line(line: str) -> str:
    """Full-width punctuation in the prose parts of one Markdown line."""
    kept: list[str] = []

    def hide(m: re.Match[str]) -> str:
        kept.append(m.group(0))
        return f"\x00{len(kept) - 1}\x00"

    if re.search(f"[{HAN}]", line):
        # a colon right after a link, and a comma glued between two Latin words, are Chinese
        line = re.sub(r"(\]\([^)\s]*\)):(?=\S)", r"\1：", line)
    masked = _PROTECTED.sub(hide, line)
    if re.search(f"[{HAN}]", masked):
        masked = re.sub(r"(?<=[A-Za-z]),(?=[A-Za-z])", "，", masked)
    # admonition / details headers: only the quoted title is prose
    header = re.match(r'^(\s*(?:!!!|\?\?\?\+?)\s+[\w-]+(?:\s+[\w-]+)*\s+")(.*)("\s*)$', masked)
    if header:
        masked = header.group(1) + _fix_prose(header.group(2)) + header.group(3)
    elif not re.match(r"^\s*(!!!|\?\?\?|--8<--|\||[-*] \[)", masked) or "|" in masked:
        masked = _fix_prose(masked)
    return re.sub(r"\x00(\d+)\x00", lambda m: kept[int(m.group(1))], masked)


def fix_text(text: str) -> str:
    out, fenced, front = [], False, False
    for i, line in enumerate(text.split("\n")):
        if i == 0 and line == "---":
            front = True
        elif front and line == "---":
            front = False
        elif re.match(r"^\s*(```|~~~)", line):
            fenced = not fenced
        elif front and line.startswith("description:"):
            line = "description: " + fix_line(line[len("description:") :].lstrip())
        elif not fenced and not front:
            line = fix_line(line)
        out.append(line)
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fix", action="store_true", help="rewrite the pages in place")
    parser.add_argument("pages", nargs="*", type=Path)
    args = parser.parse_args()
    pages = [p.resolve() for p in args.pages] or [
        p for p in layout.markdown_pages() if layout.language_of(p) == "zh"
    ]
    bad = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        fixed = fix_text(text)
        if fixed == text:
            continue
        if args.fix:
            page.write_text(fixed, encoding="utf-8")
            continue
        for n, (a, b) in enumerate(zip(text.split("\n"), fixed.split("\n"), strict=True), 1):
            if a != b:
                bad += 1
                print(f"{page.relative_to(ROOT)}:{n}: {a.strip()[:100]}")
    if bad:
        print(
            f"{bad} line(s) use ASCII punctuation in Chinese prose: run "
            "`python -m tools.zh_punctuation --fix`"
        )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
