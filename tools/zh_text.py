"""Chinese prose as a Chinese reader expects it, checked on the sources of the ``*.zh.md`` pages.

Fixed by ``--fix`` (mechanical):

* full-width punctuation in Chinese prose: ，：；！？（）“” instead of , : ; ! ? ( ) "";
* no line break inside a Chinese paragraph: Chromium renders a newline between two Chinese
  characters as a visible space, so continuation lines are joined (with a space only where a
  Chinese character meets a Latin letter, a digit, code or a formula).

Reported, for a person to rewrite (`problems`):

* a term the glossary (tools/glossary.toml) replaces, with the term to use;
* italics on Chinese characters (Chinese fonts have none: use bold);
* digits joined by an ASCII comma (``2,8`` reads as a number; large numbers are written
  without separators in Chinese prose, or with 万/亿);
* a bracket pair of mixed widths, ``（...)`` or ``(...）``;
* a space the reader sees: after or before full-width punctuation, between two characters;
* no space between Chinese and Latin letters, digits, code or a formula (a link counts as its
  text: ``[ALiBi Notebook](x)可以`` lacks one);
* a section cited as ``§3.2`` (Chinese prose writes 第 3.2 节), a space before ``%`` (20%),
  and an English ``and`` inside a Chinese sentence (a list takes 、 and 和).

The same checks read the ``description:`` of the front matter. Titles quoted in 《》 are the
author's wording and are not checked; code, formulas, links, HTML and attribute lists are
never touched.

Chinese notebooks (``*.zh.ipynb``) get the same checks on each Markdown cell; ``--fix`` does
not rewrite a notebook (its JSON is written by Jupyter): a cell to fix is reported. The
glossary is also checked in the Chinese strings of the code a Chinese reader sees: figure
labels and printed tables in ``snippets/`` (``"zh": ...``), Chinese text in the library's
docstrings (``src/posenc``) and the code cells of the Chinese notebooks.

    python -m tools.zh_text          # list the problems, exit 1 if any
    python -m tools.zh_text --fix    # apply the mechanical fixes in place
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

from tools import glossary, layout
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


def _prose_lines(text: str):
    """Yield ``(index, line, kind)`` for every line: kind is "front", "fence", "math" or "prose"."""
    front = fenced = math = False
    for i, line in enumerate(text.split("\n")):
        stripped = line.strip()
        if i == 0 and line == "---":
            front = True
            yield i, line, "front"
            continue
        if front:
            front = line != "---"
            yield i, line, "front"
            continue
        if re.match(r"^\s*(```|~~~)", line):
            fenced = not fenced
            yield i, line, "fence"
            continue
        if fenced:
            yield i, line, "fence"
            continue
        if not math and (stripped.startswith("\\[") or stripped == "$$"):
            # display math: up to the line that closes it (maybe this one)
            closes = stripped.endswith("\\]") if stripped.startswith("\\[") else False
            math = not closes
            yield i, line, "math"
            continue
        if math:
            math = not (stripped.endswith("\\]") or stripped == "$$")
            yield i, line, "math"
            continue
        yield i, line, "prose"


def fix_text(text: str) -> str:
    """Full-width punctuation in the prose, and soft line breaks inside Chinese joined."""
    out = []
    for _, line, kind in _prose_lines(text):
        if kind == "front" and line.startswith("description:"):
            line = "description: " + fix_line(line[len("description:") :].lstrip())
        elif kind == "prose":
            line = fix_line(line)
        out.append(line)
    return join_soft_breaks("\n".join(out))


_CJK_CHAR = re.compile(CJK)
# a line that starts a block of its own: never joined to the line above it
_BLOCK_START = re.compile(
    r"^\s*(?:#|[-*+] |\d+[.)] |\||!!!|\?\?\?|<|\\\[|\$\$|--8<--|:::|\{|\[\^|>|=== )"
)


def _joinable(line: str) -> bool:
    """A prose line that continues the paragraph above it could be joined to it."""
    return bool(line.strip()) and not _BLOCK_START.match(line)


def join_soft_breaks(text: str) -> str:
    """Join a paragraph's continuation lines where the break falls next to Chinese text.

    A newline between two Chinese characters reaches the reader as a space; between Chinese
    and Latin text a space is wanted anyway (and kept), except after full-width punctuation.
    """
    lines = text.split("\n")
    kinds = [kind for _, _, kind in _prose_lines(text)]
    out: list[str] = []
    for i, line in enumerate(lines):
        previous = out[-1] if out else ""
        if (
            out
            and kinds[i] == "prose"
            and kinds[i - 1] == "prose"
            and _joinable(line)
            and previous.strip()
            and not previous.endswith(("  ", "\\"))
            and not re.match(r"^\s*(?:#|\||!!!|\?\?\?|<!--|--8<--)", previous)
        ):
            left, right = previous.rstrip()[-1], line.lstrip()[0]
            if _CJK_CHAR.match(left) or _CJK_CHAR.match(right):
                both_cjk = _CJK_CHAR.match(left) and _CJK_CHAR.match(right)
                after_punctuation = re.match(r"[\u3000-\u303f\uff00-\uffef“”‘’]", left)
                space = "" if both_cjk or after_punctuation else " "
                out[-1] = previous.rstrip() + space + line.lstrip()
                continue
        out.append(line)
    return "\n".join(out)


_ITALIC = re.compile(
    rf"(?<![*\w])([*_])(?![*_\s])([^*_\n]*?[{HAN}][^*_\n]*?)(?<![\s*_])\1(?![*\w])"
)
_COMMA_DIGITS = re.compile(r"\d,\d")
_MIXED_BRACKETS = re.compile(r"（[^（）()\n]*\)|\([^（）()\n]*）")


def _masked(line: str) -> str:
    """The line with code, math, links and HTML each replaced by one opaque character, and
    attribute lists (``{ #id }``) removed."""
    line = re.sub(r"\s*\{[:#.][^}]*\}|\s*\{ [^}]*\}", "", line)
    return _PROTECTED.sub("\ue000", line).rstrip()


_FULL_WIDTH = "，。：；！？、（）“”《》"
# bold/italic markers are not text: "。** 下一句" renders as "。 下一句"
# (a table cell's border | is not text)
_SPACE_AFTER_FULL_WIDTH = re.compile(rf"[{_FULL_WIDTH}][*_]*[ \t]+(?=[^\s|])")
_SPACE_BEFORE_FULL_WIDTH = re.compile(rf"(?<=[^\s|])[ \t]+[*_]*[{_FULL_WIDTH}]")
_SPACE_BETWEEN_CHINESE = re.compile(rf"[{HAN}][*_]*[ \t]+[*_]*[{HAN}]")


def _glossary_message(hit: str, term: glossary.Term) -> str:
    return (
        f"glossary: write {term.zh!r} ({term.en}), not {hit!r} "
        f"(docs/reference/glossary.zh.md#{term.id})"
    )


def _spaced(line: str) -> str:
    """The line as the reader reads it, for the spacing rules: a link is its text, code and
    formulas one opaque character, HTML tags and emphasis markers nothing that counts."""
    line = re.sub(r"\s*\{[:#.][^}]*\}|\s*\{ [^}]*\}", "", line)
    line = re.sub(r"`[^`]*`|\\\(.*?\\\)|\$\$.*?\$\$", "\ue000", line)
    line = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", line)
    line = re.sub(r"<[^>]*>", "\ue001", line)
    line = re.sub(r"https?://\S+", "\ue000", line)
    line = re.sub(r"《[^》]*》", "\ue001", line)
    return re.sub(r"\*\*?|(?<![A-Za-z0-9])__?|__?(?![A-Za-z0-9])", "", line)


_NO_SPACE = re.compile(rf"[A-Za-z0-9\ue000%][{HAN}]|[{HAN}][A-Za-z0-9\ue000]")
_SECTION_SIGN = re.compile(r"§\s*(\d+(?:\.\d+)*)")
_SPACE_PERCENT = re.compile(r"\d[ \u00a0]+%")
# "and" in a sentence that has Chinese before it (a reference's English part comes first);
# an English phrase kept in brackets of its own, （...）, is a quotation, not our list
_ENGLISH_AND = re.compile(rf"[{HAN}、，；：][^.!?。！？；]*?(?<![A-Za-z])and(?![A-Za-z])")


def _conventions(prose: str, spaced: str) -> list[str]:
    """Messages for the conventions a machine can check: spacing, §, %, "and"."""
    found = []
    for m in _NO_SPACE.finditer(spaced):
        found.append(
            f"no space between Chinese and Latin text, a digit, code or a formula: "
            f"{m.group(0)!r} (a link counts as its text)"
        )
    unquoted = re.sub(r"《[^》]*》", "\ue001", prose)
    for m in _SECTION_SIGN.finditer(unquoted):
        found.append(f"write 第 {m.group(1)} 节, not {m.group(0)!r}")
    for m in _SPACE_PERCENT.finditer(unquoted):
        found.append(f"no space before % in Chinese text: {m.group(0)!r}")
    english_kept = re.sub(rf"（[^（）{HAN}]*）|\*[^*]+\*", "\ue001", unquoted)
    for m in _ENGLISH_AND.finditer(english_kept):
        found.append(f"English 'and' in a Chinese sentence: {m.group(0)[-20:]!r} (write 和 or 、)")
    return found


def problems(text: str) -> list[tuple[int, str]]:
    """``(line number, message)`` for what a person must rewrite in a Chinese page."""
    found = []
    for i, line, kind in _prose_lines(text):
        if kind == "front" and line.startswith("description:"):
            line = line[len("description:") :]
        elif kind != "prose":
            continue
        if not re.search(f"[{HAN}]", line):
            continue
        prose = _masked(line)
        # a title quoted in 《》 is the author's wording, not ours
        for hit, term in glossary.avoided_terms(re.sub(r"《[^》]*》", "\ue000", prose)):
            found.append((i + 1, _glossary_message(hit, term)))
        found += [(i + 1, message) for message in _conventions(prose, _spaced(line))]
        for m in _ITALIC.finditer(prose):
            found.append((i + 1, f"italics on Chinese text {m.group(0)!r}: use **bold**"))
        for m in _COMMA_DIGITS.finditer(prose):
            found.append(
                (i + 1, f"digits joined by an ASCII comma {m.group(0)!r}: a list takes "
                 "，or 、, and a large number no separator (or 万/亿)")
            )  # fmt: skip
        for m in _MIXED_BRACKETS.finditer(prose):
            found.append((i + 1, f"brackets of mixed widths {m.group(0)!r}"))
        text = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", prose)  # the list marker's space is not text
        for pattern in (_SPACE_AFTER_FULL_WIDTH, _SPACE_BEFORE_FULL_WIDTH, _SPACE_BETWEEN_CHINESE):
            for m in pattern.finditer(text):
                found.append(
                    (
                        i + 1,
                        f"a space the reader sees in Chinese text: {m.group(0)!r} (none after "
                        "full-width punctuation or around “”; a bold lead-in takes its "
                        "punctuation outside: **标题**。正文)",
                    )
                )
    return found


def notebook_problems(notebook: Path) -> list[str]:
    """What ``fix_text`` would change and what ``problems`` reports, in each Markdown cell of
    a notebook, as ``cell N...: message``."""
    found = []
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    for number, cell in enumerate(cells, 1):
        if cell["cell_type"] != "markdown":
            continue
        text = "".join(cell["source"])
        if fix_text(text) != text:
            found.append(f"cell {number}: punctuation or line breaks that zh_text --fix changes")
        for line, message in problems(text):
            found.append(f"cell {number}, line {line}: {message}")
    for number, cell in enumerate(cells, 1):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        # IPython magics and shell lines are not Python
        source = "\n".join("" if re.match(r"\s*[%!]", s) else s for s in source.split("\n"))
        try:
            hits = code_problems(source)
        except SyntaxError:
            hits = [(1, message) for _, message in problems(source)]
        found += [f"cell {number} (code), line {line}: {message}" for line, message in hits]
    return found


def _chinese_strings(source: str) -> list[tuple[int, str]]:
    """``(line number, text)`` of every string literal in Python ``source`` that holds
    Chinese (f-strings by their literal parts)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if re.search(f"[{HAN}]", node.value):
                found.append((node.lineno, node.value))
    return sorted(found)


def _json_chinese_strings(source: str) -> list[tuple[int, str]]:
    """``(line number, text)`` of every JSON string in ``source`` that holds Chinese."""
    found = []
    for number, line in enumerate(source.split("\n"), 1):
        for m in re.finditer(r'"((?:[^"\\]|\\.)*)"', line):
            text = json.loads(m.group(0))
            if re.search(f"[{HAN}]", text):
                found.append((number, text))
    return found


def code_problems(source: str, *, is_json: bool = False) -> list[tuple[int, str]]:
    """``(line number, message)`` for glossary variants, § and "20 %" in the Chinese strings
    of Python code (or of a JSON data file): figure labels, printed tables and docstrings a
    Chinese reader sees."""
    found = []
    strings = _json_chinese_strings(source) if is_json else _chinese_strings(source)
    for line, text in strings:
        for hit, term in glossary.avoided_terms(text):
            found.append((line, _glossary_message(hit, term)))
        for m in _SECTION_SIGN.finditer(re.sub(r"《[^》]*》", "\ue001", text)):
            found.append((line, f"write 第 {m.group(1)} 节, not {m.group(0)!r}"))
        for m in _SPACE_PERCENT.finditer(text):
            found.append((line, f"no space before % in Chinese text: {m.group(0)!r}"))
    return found


def _code_files(root: Path = ROOT) -> list[Path]:
    return sorted(
        [
            *(root / "snippets").rglob("*.py"),
            *(root / "snippets").rglob("*.json"),
            *(root / "src" / "posenc").rglob("*.py"),
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fix", action="store_true", help="apply the mechanical fixes in place")
    parser.add_argument("pages", nargs="*", type=Path)
    args = parser.parse_args()
    pages = [p.resolve() for p in args.pages] or [
        *(p for p in layout.markdown_pages() if layout.language_of(p) == "zh"),
        ROOT / "CONTRIBUTING.zh.md",
    ]
    bad = 0
    for page in pages:
        rel = page.relative_to(ROOT)
        text = page.read_text(encoding="utf-8")
        fixed = fix_text(text)
        if fixed != text and args.fix:
            page.write_text(fixed, encoding="utf-8")
            text = fixed
        elif fixed != text:
            bad += 1
            print(f"{rel}: punctuation or line breaks to fix: run `python -m tools.zh_text --fix`")
        for line, message in problems(text):
            bad += 1
            print(f"{rel}:{line}: {message}")
    notebooks = [p for p in layout.pages() if p.suffix == ".ipynb"] if not args.pages else []
    for notebook in notebooks:
        if layout.language_of(notebook) != "zh":
            continue
        for problem in notebook_problems(notebook):
            bad += 1
            print(f"{notebook.relative_to(ROOT)}: {problem}")
    for path in _code_files() if not args.pages else []:
        try:
            source = path.read_text(encoding="utf-8")
        except FileNotFoundError:  # removed while we read the others
            continue
        for line, message in code_problems(source, is_json=path.suffix == ".json"):
            bad += 1
            print(f"{path.relative_to(ROOT)}:{line}: {message}")
    print(f"zh_text: {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
