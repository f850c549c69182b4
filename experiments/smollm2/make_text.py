"""Rebuild data/text.txt: the English prose of this site's chapters 1-16, chapter 8 left out.

The text the model reads is the project's own writing: it was written in 2026, after
SmolLM2 was trained (released November 2024), so it cannot be in the model's training data,
and it ships in the repository, so nothing is downloaded. Code blocks, tables, figures, HTML
comments, admonition titles and heading anchors are dropped; what is left is technical
English prose with inline formulas. Chapter 8, and every paragraph that mentions a pass key,
is left out, so that the filler never talks about the needle the model is asked to find.

The text is frozen in data/text.txt (the pages keep changing); this script documents how it
was made:

    python experiments/smollm2/make_text.py
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = [n for n in range(1, 17) if n != 8]


def prose(markdown: str) -> list[str]:
    """The paragraphs of a page, each on one line, without code, tables, figures or anchors."""
    text = re.sub(r"\A---\n.*?\n---\n", "", markdown, flags=re.S)  # front matter
    text = re.sub(r"^( *)(```|~~~).*?^\1\2\s*$", "", text, flags=re.S | re.M)  # code fences
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    paragraphs = []
    for block in re.split(r"\n\s*\n", text):
        line = " ".join(part.strip() for part in block.splitlines()).strip()
        if not line or re.search(r"pass ?key", line, flags=re.I):
            continue
        if line.startswith(("!!!", "???", "![", "|", "--8<--", "<")):
            continue
        paragraphs.append(re.sub(r"\s*\{ *#[^}]*\}", "", line))
    return paragraphs


def main() -> None:
    folder = ROOT / "docs" / "chapters"
    pages = [
        page
        for n in CHAPTERS
        for page in sorted(folder.glob(f"{n:02d}-*.md"))
        if not page.name.endswith(".zh.md")
    ]
    text = "\n\n".join("\n\n".join(prose(page.read_text(encoding="utf-8"))) for page in pages)
    out = Path(__file__).resolve().parent / "data" / "text.txt"
    out.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {out} ({len(text)} characters from {len(pages)} pages)")


if __name__ == "__main__":
    main()
