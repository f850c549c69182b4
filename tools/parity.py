"""Check that every page has its twin in the other language and that the twins match.

Twins (``page.md`` / ``page.zh.md``, ``nb.ipynb`` / ``nb.zh.ipynb``) must include the same
snippet sections and figures, in the same order, and have the same number of headings per
level, display and inline formulas, admonitions and code blocks. The prose is free; the
structure is not. A translation last changed in git before its original is reported as a
warning (the built page then carries an "outdated translation" notice).

    python -m tools.parity          # exit 1 and list the differences, if any
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

from tools import history, layout

_FENCE = re.compile(r"^\s*(```|~~~)", re.MULTILINE)


def _outside_code(text: str) -> str:
    """The text with fenced code blocks removed (their bodies are code, not structure)."""
    out, inside = [], False
    for line in text.split("\n"):
        if _FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            out.append(line)
    return "\n".join(out)


def structure(page: Path) -> dict[str, object]:
    text = page.read_text(encoding="utf-8")
    prose = _outside_code(text)
    return {
        "snippet sections": [
            include.path + (f":{include.section}" if include.section else "")
            for include in layout.includes(text)
        ],
        # a Chinese page shows the Chinese version of a figure where there is one
        "figures": [target.replace(".zh.svg", ".svg") for target in layout.figure_targets(text)],
        "headings per level": sorted(
            Counter(len(m) for m in re.findall(r"^(#{1,6})\s", prose, re.MULTILINE)).items()
        ),
        "display formulas": len(re.findall(r"\\\[|^\s*\$\$\s*$", prose, re.MULTILINE)),
        "inline formulas": len(re.findall(r"\\\(", prose)),
        "admonitions": len(re.findall(r"^\s*(?:!!!|\?\?\?\+?)\s", prose, re.MULTILINE)),
        "code blocks": len(_FENCE.findall(text)) // 2,
    }


def notebook_structure(notebook: Path) -> dict[str, object]:
    """Twin notebooks: the same cells in the same order, and exactly the same code."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return {
        "cell types": [cell["cell_type"] for cell in cells],
        "code cells": ["".join(cell["source"]) for cell in cells if cell["cell_type"] == "code"],
    }


def differences(page: Path, docs: Path = layout.DOCS) -> list[str]:
    twin = layout.twin_of(page)
    rel = page.relative_to(docs).as_posix()
    if not twin.exists():
        return [f"{rel}: no twin ({twin.relative_to(docs).as_posix()})"]
    read = notebook_structure if page.suffix == ".ipynb" else structure
    ours, theirs = read(page), read(twin)
    return [
        f"{rel} vs {twin.name}: {key} differ: {ours[key]} != {theirs[key]}"
        for key in ours
        if ours[key] != theirs[key]
    ]


def all_differences(root: Path = layout.ROOT) -> list[str]:
    found: list[str] = []
    for page in layout.pages(root):
        # compare each pair once (from the default-language side); report lone translations too
        if layout.language_of(page) == layout.DEFAULT_LANGUAGE or not layout.twin_of(page).exists():
            found += differences(page, layout.docs(root))
    return found


def outdated_translations(root: Path = layout.ROOT) -> list[str]:
    """Translated pages last changed in git before their default-language twin: they may miss
    what changed since. A warning, not an error: the built page says so to readers
    (tools/hooks/translation_notice.py)."""
    record = history.History(root)
    found = []
    for page in layout.pages(root):
        if layout.language_of(page) == layout.DEFAULT_LANGUAGE:
            continue
        original = layout.in_language(page, layout.DEFAULT_LANGUAGE)
        if original.exists() and record.last_change(page) < record.last_change(original):
            docs = layout.docs(root)
            found.append(
                f"{page.relative_to(docs).as_posix()}: older than "
                f"{original.relative_to(docs).as_posix()} (outdated translation)"
            )
    return found


def main() -> int:
    found = all_differences()
    for line in found:
        print(line)
    for line in outdated_translations():
        print(f"warning: {line}")
    print(f"parity: {len(found)} difference(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
