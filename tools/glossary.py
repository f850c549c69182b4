"""The project's glossary (tools/glossary.toml): one Chinese term per English term.

Used by the Chinese prose check (`avoided_terms`, in ``make lint``) and by the glossary pages,
whose table the ``tools/hooks/glossary_table.py`` hook renders from the same file.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

FILE = Path(__file__).resolve().parent / "glossary.toml"


@dataclass(frozen=True)
class Term:
    en: str
    zh: str
    note_en: str = ""
    note_zh: str = ""
    avoid: tuple[str, ...] = field(default=())


@cache
def terms(file: Path = FILE) -> tuple[Term, ...]:
    """The glossary's entries, in file order.

    Raises:
        ValueError: An entry lacks ``en`` or ``zh``, has an unknown key, or an ``avoid``
            pattern that is not a valid regular expression (the message names the entry).
    """
    entries = tomllib.loads(file.read_text(encoding="utf-8")).get("term", [])
    found = []
    for number, entry in enumerate(entries, 1):
        known = {"en", "zh", "note_en", "note_zh", "avoid"}
        if unknown := set(entry) - known:
            raise ValueError(f"{file.name}: term {number} has unknown keys {sorted(unknown)}")
        if not entry.get("en") or not entry.get("zh"):
            raise ValueError(f"{file.name}: term {number} needs both 'en' and 'zh'")
        for pattern in entry.get("avoid", []):
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(
                    f"{file.name}: term {entry['en']!r}: {pattern!r}: {error}"
                ) from None
        found.append(Term(**{**entry, "avoid": tuple(entry.get("avoid", []))}))
    return tuple(found)


def avoided_terms(prose: str) -> list[tuple[str, Term]]:
    """``(what was found, the entry that says what to write instead)`` in Chinese prose."""
    hits = []
    for term in terms():
        for pattern in term.avoid:
            hits += [(m.group(0), term) for m in re.finditer(pattern, prose)]
    return hits


_HEADERS = {
    "en": ("English", "Chinese", "Note"),
    "zh": ("英文", "中文", "说明"),
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def table(lang: str) -> str:
    """The glossary as a Markdown table for a page in ``lang`` ("en" or "zh")."""
    if lang not in _HEADERS:
        raise ValueError(f"lang must be one of {sorted(_HEADERS)}, got {lang!r}")
    english, chinese, note = _HEADERS[lang]
    rows = [f"| {english} | {chinese} | {note} |", "| --- | --- | --- |"]
    for term in terms():
        text = term.note_zh if lang == "zh" else (term.note_en or term.note_zh)
        avoid = [p for p in term.avoid if re.fullmatch(r"[\w\u3400-\u9fff ]+", p)]
        if lang == "zh" and avoid:
            # no space after a full-width stop: Chinese text runs on (a space would show)
            joint = "" if not text or text[-1] in "。；！？）" else "。"
            text = text + joint + "不用：" + "、".join(avoid) + "。"
        rows.append(f"| {_cell(term.en)} | {_cell(term.zh)} | {_cell(text)} |")
    return "\n".join(rows)
