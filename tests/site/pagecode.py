"""Read the code blocks of a page exactly as a reader sees them.

A page is first expanded with pymdownx.snippets configured from mkdocs.yml (so
``--8<-- "snippets/x.py:section"`` becomes the code it includes, and a missing file or
section fails here as it fails the build). The fence info string is normalised
(``python title="x.py"`` -> ``python``) because pytest-codeblocks compares it whole, then
pytest-codeblocks extracts the blocks with their markers:

* ``<!--pytest-codeblocks:expected-output-->`` before a fence: that fence is the output the
  block above must print;
* ``<!--pytest.mark.skip(reason="...")-->`` before a block: do not run it (a reason is
  required; the run reports every skip with it).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import markdown
from mkdocs.config import load_config
from pytest_codeblocks.main import CodeBlock, extract_from_buffer

from tools import layout
from tools.layout import ROOT

DOCS = layout.DOCS
RUNNABLE = {"python", "bash"}
# languages that must never appear on a page without being run or explicitly skipped
SHELL_ALIASES = {
    "sh": "bash",
    "shell": "bash",
    "console": "bash",
    "py": "python",
    "python3": "python",
    "pycon": "python",
}


@dataclass(frozen=True)
class PageBlock:
    page: str  # path relative to docs/
    index: int  # position among the page's runnable blocks
    block: CodeBlock

    @property
    def id(self) -> str:
        return f"{self.page}:{self.block.lineno}"

    @property
    def skip_reason(self) -> str | None:
        for mark in self.block.marks:
            if mark.startswith("pytest.mark.skip"):
                found = re.search(r"reason\s*=\s*(['\"])(.+?)\1", mark)
                if not found:
                    raise ValueError(f'{self.id}: a skipped block needs reason="...": {mark}')
                return found.group(2)
        return None


@cache
def _snippet_config() -> dict:
    config = load_config(str(ROOT / "mkdocs.yml"))
    for ext in config["markdown_extensions"]:
        if ext == "pymdownx.snippets":
            return dict(config["mdx_configs"].get(ext, {}))
    raise RuntimeError("mkdocs.yml does not enable pymdownx.snippets")


def expand(page: Path) -> str:
    """The page's Markdown with every snippet include replaced by the included text."""
    md = markdown.Markdown(
        extensions=["pymdownx.snippets"], extension_configs={"pymdownx.snippets": _snippet_config()}
    )
    snippets = md.preprocessors["snippet"]
    lines = page.read_text(encoding="utf-8").split("\n")
    return "\n".join(snippets.run(lines))


_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<ticks>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)$", re.MULTILINE
)


def _normalise_fences(text: str) -> str:
    def fix(match: re.Match[str]) -> str:
        info = match.group("info").strip()
        lang = info.split()[0].lstrip(".{") if info else ""
        lang = SHELL_ALIASES.get(lang, lang)
        return f"{match.group('indent')}{match.group('ticks')}{lang}"

    return _FENCE.sub(fix, text)


def page_blocks(page: Path) -> list[PageBlock]:
    text = _normalise_fences(expand(page))
    found = extract_from_buffer(io.StringIO(text))
    rel = page.relative_to(DOCS).as_posix()
    runnable = [b for b in found if b.syntax in RUNNABLE]
    return [PageBlock(rel, i, b) for i, b in enumerate(runnable)]


def pages() -> list[Path]:
    return layout.markdown_pages()
