"""The project's glossary (tools/glossary.toml): one Chinese term per idea, defined.

Used by the Chinese prose check (`avoided_terms`, in ``make lint``) and by the glossary pages,
which the ``tools/hooks/glossary_table.py`` hook renders from the same file (`page`): one
section per topic, one entry per term, each with an anchor that chapters can link to
(``reference/glossary.md#rope-base``), its definition in the page's language, the formula
where one helps, the chapter that introduces it and the Chinese variants it replaces.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from tools import layout

FILE = Path(__file__).resolve().parent / "glossary.toml"

_TERM_KEYS = {
    "id", "group", "en", "zh", "chapter", "def_en", "def_zh", "formula", "note_en", "note_zh",
    "avoid",
}  # fmt: skip
_REQUIRED = ("id", "group", "en", "zh", "def_en", "def_zh")


@dataclass(frozen=True)
class Group:
    id: str
    en: str
    zh: str


@dataclass(frozen=True)
class Term:
    id: str  # the anchor on both glossary pages
    group: str
    en: str
    zh: str
    def_en: str
    def_zh: str
    chapter: str = ""  # the page that introduces it: "chapters/05-rope.md#base"
    formula: str = ""  # LaTeX, without delimiters
    note_en: str = ""  # why this word, for English readers
    note_zh: str = ""  # 为什么用这个词
    avoid: tuple[str, ...] = field(default=())  # regular expressions: rejected variants
    shown: tuple[str, ...] = field(default=())  # each of them as a reader reads it

    def rejected(self) -> list[str]:
        """The rejected variants as a reader reads them, each once."""
        return list(dict.fromkeys(self.shown))


def _shown(pattern: str) -> str:
    """A plain ``avoid`` pattern as a reader reads it: its look-arounds (the contexts where
    the word is fine) left out."""
    return re.sub(r"\(\?<?[=!](?:[^()]|\([^()]*\))*\)", "", pattern)


@cache
def _load(file: Path = FILE) -> tuple[tuple[Group, ...], tuple[Term, ...]]:
    data = tomllib.loads(file.read_text(encoding="utf-8"))
    groups = []
    for number, entry in enumerate(data.get("group", []), 1):
        if set(entry) != {"id", "en", "zh"}:
            raise ValueError(f"{file.name}: group {number} needs exactly 'id', 'en' and 'zh'")
        groups.append(Group(**entry))
    group_ids = {g.id for g in groups}
    found = []
    for number, entry in enumerate(data.get("term", []), 1):
        if unknown := set(entry) - _TERM_KEYS:
            raise ValueError(f"{file.name}: term {number} has unknown keys {sorted(unknown)}")
        if missing := [key for key in _REQUIRED if not entry.get(key)]:
            raise ValueError(f"{file.name}: term {number} needs {missing}")
        if entry["group"] not in group_ids:
            raise ValueError(f"{file.name}: term {entry['id']!r}: no group {entry['group']!r}")
        if not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", entry["id"]):
            raise ValueError(f"{file.name}: term {entry['id']!r}: the id is lowercase-with-dashes")
        patterns, shown = [], []
        for item in entry.get("avoid", []):
            # a plain pattern, or { re = "...", shown = "..." } where the pattern is no word
            pattern = item if isinstance(item, str) else item.get("re", "")
            if not isinstance(item, str) and set(item) != {"re", "shown"}:
                raise ValueError(f"{file.name}: term {entry['id']!r}: {item!r} needs re and shown")
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(
                    f"{file.name}: term {entry['id']!r}: {pattern!r}: {error}"
                ) from None
            patterns.append(pattern)
            shown.append(_shown(item) if isinstance(item, str) else item["shown"])
        found.append(Term(**{**entry, "avoid": tuple(patterns), "shown": tuple(shown)}))
    ids = [t.id for t in found] + [g.id for g in groups]  # one page: no anchor twice
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"{file.name}: an id is used twice: {twice}")
    return tuple(groups), tuple(found)


def groups(file: Path = FILE) -> tuple[Group, ...]:
    """The glossary's topics, in page order."""
    return _load(file)[0]


def terms(file: Path = FILE) -> tuple[Term, ...]:
    """The glossary's entries, in file order.

    Raises:
        ValueError: An entry lacks a required key, has an unknown key, an id that is not
            lowercase-with-dashes or is used twice, a group that is not declared, or an
            ``avoid`` pattern that is not a valid regular expression (the message names it).
    """
    return _load(file)[1]


def avoided_terms(prose: str) -> list[tuple[str, Term]]:
    """``(what was found, the entry that says what to write instead)`` in Chinese prose."""
    hits = []
    for term in terms():
        for pattern in term.avoid:
            hits += [(m.group(0), term) for m in re.finditer(pattern, prose)]
    return hits


# ── the glossary pages ─────────────────────────────────────────────────────────────────────

_HEADING = re.compile(r"^(#+)\s+(.*?)\s*(?:\{[^}]*\})?\s*$")


def _heading(path: Path, anchor: str) -> str:
    """The text of the heading that carries ``{ #anchor }`` (the page's title without one)."""
    for line in path.read_text(encoding="utf-8").split("\n"):
        m = _HEADING.match(line)
        if m and (f"#{anchor} " in line or (not anchor and m.group(1) == "#")):
            return m.group(2)
    raise ValueError(f"glossary: {path.name} has no heading {{ #{anchor} }}")


def chapter_link(term: Term, lang: str, root: Path = layout.ROOT) -> str:
    """A Markdown link, from a page in ``docs/reference/``, to where ``term`` is introduced,
    labelled in ``lang`` with the chapter's number and the section's heading."""
    target, _, anchor = term.chapter.partition("#")
    source = layout.in_language(layout.docs(root) / target, lang)
    if not source.is_file():
        raise ValueError(f"glossary: term {term.id!r}: no page {source.relative_to(root)}")
    section = _heading(source, anchor)
    number = re.match(r"(\d\d)-", source.name)
    href = f"../{target}#{anchor}" if anchor else f"../{target}"
    if lang == "zh":
        label = f"第 {int(number.group(1))} 章“{section}”" if number else f"“{section}”"
    else:
        label = f"chapter {int(number.group(1))}, *{section}*" if number else f"*{section}*"
    return f"[{label}]({href})"


def _entry(term: Term, lang: str, root: Path) -> list[str]:
    zh = lang == "zh"
    heading = term.zh if zh else term.en[0].upper() + term.en[1:]
    lines = [f"### {heading} {{ #{term.id} }}", ""]
    other = f"英文：{term.en}" if zh else f"Chinese: **{term.zh}**"
    if term.chapter:
        where = chapter_link(term, lang, root)
        other += f"。见{where}。" if zh else f". Introduced in {where}."
    else:
        other += "。" if zh else "."
    lines += [other, "", term.def_zh if zh else term.def_en, ""]
    if term.formula:
        lines += [f"\\[\n{term.formula}\n\\]", ""]
    rejected = term.rejected()
    note = term.note_zh if zh else term.note_en
    if rejected or note:
        if zh:
            text = ("不用：" + "、".join(rejected) + "。") if rejected else ""
        else:
            text = f"The Chinese pages do not write {', '.join(rejected)}. " if rejected else ""
        lines += [(text + note).strip(), ""]
    return lines


def page(lang: str, root: Path = layout.ROOT) -> str:
    """The glossary as Markdown for the page in ``lang`` ("en" or "zh"): one ``##`` section
    per topic, one ``###`` entry per term."""
    if lang not in layout.LANGUAGES:
        raise ValueError(f"lang must be one of {sorted(layout.LANGUAGES)}, got {lang!r}")
    lines: list[str] = []
    for group in groups():
        members = [t for t in terms() if t.group == group.id]
        if not members:
            continue
        lines += [f"## {group.zh if lang == 'zh' else group.en} {{ #{group.id} }}", ""]
        for term in members:
            lines += _entry(term, lang, root)
    return "\n".join(lines).rstrip() + "\n"
