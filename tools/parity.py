"""Check that every page has its twin in the other language and that the twins match.

Twins (``page.md`` / ``page.zh.md``, ``nb.ipynb`` / ``nb.zh.ipynb``) must include the same
snippet sections and figures, in the same order, and have the same number of headings per
level, display and inline formulas, admonitions and code blocks. The prose is free; the
structure is not. A translation last changed in git before its original is reported as a
warning (the built page then carries an "outdated translation" notice).

    python tools/parity.py          # exit 1 and list the differences, if any
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
LANGS = ("zh",)  # suffixes of the non-default languages

_FENCE = re.compile(r"^\s*(```|~~~)", re.MULTILINE)


def twin_of(page: Path) -> Path:
    name = page.name
    for lang in LANGS:
        for ext in (".md", ".ipynb"):
            if name.endswith(f".{lang}{ext}"):
                return page.with_name(name[: -len(f".{lang}{ext}")] + ext)
    return page.with_name(page.stem + f".{LANGS[0]}" + page.suffix)


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
        "snippet sections": re.findall(r'--8<--\s+"([^"]+)"', text),
        "figures": re.findall(r"!\[[^\]]*\]\(([^)\s]+)", text),
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


def differences(page: Path) -> list[str]:
    twin = twin_of(page)
    rel = page.relative_to(DOCS).as_posix()
    if not twin.exists():
        return [f"{rel}: no twin ({twin.relative_to(DOCS).as_posix()})"]
    if page.suffix == ".ipynb":
        ours, theirs = notebook_structure(page), notebook_structure(twin)
    else:
        ours, theirs = structure(page), structure(twin)
    return [
        f"{rel} vs {twin.name}: {key} differ: {ours[key]} != {theirs[key]}"
        for key in ours
        if ours[key] != theirs[key]
    ]


def all_differences() -> list[str]:
    found: list[str] = []
    for page in sorted([*DOCS.rglob("*.md"), *DOCS.rglob("*.ipynb")]):
        if ".ipynb_checkpoints" in page.parts:
            continue
        is_default = not any(page.name.endswith(f".{lang}{page.suffix}") for lang in LANGS)
        # compare each pair once (from the default-language side); report lone zh pages too
        if is_default or not twin_of(page).exists():
            found += differences(page)
    return found


def last_change(path: Path) -> int:
    """When ``path`` last changed in git (Unix time); a file with uncommitted changes, or
    not committed at all, counts as changed now."""
    import subprocess
    import time

    rel = path.resolve().relative_to(ROOT).as_posix()

    def git(*args: str) -> str:
        run = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return run.stdout.strip() if run.returncode == 0 else ""

    if git("status", "--porcelain", "--", rel):
        return int(time.time())
    stamp = git("log", "-1", "--format=%ct", "--", rel)
    return int(stamp) if stamp else int(time.time())


def outdated_translations() -> list[str]:
    """Translated pages last changed in git before their default-language twin: they may
    miss what changed since. A warning, not an error: the built page says so to readers
    (tools/translation_status.py)."""
    found = []
    for page in sorted([*DOCS.rglob("*.md"), *DOCS.rglob("*.ipynb")]):
        if ".ipynb_checkpoints" in page.parts:
            continue
        if any(page.name.endswith(f".{lang}{page.suffix}") for lang in LANGS):
            original = twin_of(page)
            if original.exists() and last_change(page) < last_change(original):
                found.append(
                    f"{page.relative_to(DOCS).as_posix()}: older than "
                    f"{original.relative_to(DOCS).as_posix()} (outdated translation)"
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
