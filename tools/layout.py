"""Where everything lives: the one module that knows the project's layout.

Every tool, mkdocs hook, test and the chapter scaffold asks this module for paths instead of
building them, so a rule such as "chapter ``NN-some-name`` keeps its code in
``snippets/some_name/``" is written once::

    docs/chapters/NN-<slug>.md        the English page      (Chapter.page("en"))
    docs/chapters/NN-<slug>.zh.md     its Chinese twin      (Chapter.page("zh"))
    snippets/<folder>/                its code, where folder = slug with "_" for "-"
    snippets/<folder>/figure_*.py     its figure scripts, saving <slug>-<what>.svg
    tests/chapters/test_<folder>.py   the tests of its claims

Functions that scan the tree take ``root`` (default: this repository), so the tests can point
them at a scratch copy.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LANGUAGES = ("en", "zh")  # the default language first; the others are page-name suffixes
DEFAULT_LANGUAGE = LANGUAGES[0]
TRANSLATIONS = LANGUAGES[1:]

# Committed data that pages and figures read: a change must redraw the figures that plot it.
RESULT_FILES = (
    "benchmarks/results/*.json",
    "experiments/*/results/*.json",
    "snippets/*/*.json",
)


def docs(root: Path = ROOT) -> Path:
    return root / "docs"


def snippets(root: Path = ROOT) -> Path:
    return root / "snippets"


def figures_dir(root: Path = ROOT) -> Path:
    """Where the build puts the figures the snippets draw (git-ignored)."""
    return docs(root) / "figures"


def site_dir(root: Path = ROOT) -> Path:
    """The built site the tests read: ``site/``, or ``$POSENC_SITE_DIR`` for a site built
    elsewhere (``mkdocs build -d DIR``)."""
    return Path(os.environ.get("POSENC_SITE_DIR") or root / "site").resolve()


def cache_dir(root: Path = ROOT) -> Path:
    return root / ".cache"


# ── pages and their twins ────────────────────────────────────────────────────────────────


def language_of(page: Path) -> str:
    """``"zh"`` for ``x.zh.md`` / ``x.zh.ipynb``, the default language otherwise."""
    for lang in TRANSLATIONS:
        if page.name.endswith((f".{lang}.md", f".{lang}.ipynb")):
            return lang
    return DEFAULT_LANGUAGE


def in_language(page: Path, lang: str) -> Path:
    """The version of ``page`` in ``lang`` (which may not exist)."""
    stem = page.name.removesuffix(page.suffix)
    current = language_of(page)
    if current != DEFAULT_LANGUAGE:
        stem = stem.removesuffix(f".{current}")
    suffix = page.suffix if lang == DEFAULT_LANGUAGE else f".{lang}{page.suffix}"
    return page.with_name(stem + suffix)


def twin_of(page: Path) -> Path:
    """The page's twin: the Chinese page of an English one, and the English of a Chinese one."""
    lang = language_of(page)
    return in_language(page, TRANSLATIONS[0] if lang == DEFAULT_LANGUAGE else DEFAULT_LANGUAGE)


def pages(root: Path = ROOT) -> list[Path]:
    """Every page of the site in every language: Markdown and notebooks under docs/."""
    found = [*docs(root).rglob("*.md"), *docs(root).rglob("*.ipynb")]
    return sorted(p for p in found if ".ipynb_checkpoints" not in p.parts)


def markdown_pages(root: Path = ROOT) -> list[Path]:
    return [p for p in pages(root) if p.suffix == ".md"]


# ── chapters ─────────────────────────────────────────────────────────────────────────────

_CHAPTER_FILE = re.compile(r"^(?P<number>\d{2})-(?P<slug>[a-z0-9]+(?:-[a-z0-9]+)*)\.md$")
CHAPTER_SLUG = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Chapter:
    """One chapter: its number and slug, and every path that belongs to it."""

    number: int
    slug: str  # "length-extrapolation"
    root: Path = ROOT

    @property
    def name(self) -> str:
        """``"07-length-extrapolation"``: the page's file name without extension."""
        return f"{self.number:02d}-{self.slug}"

    @property
    def folder(self) -> str:
        """``"length_extrapolation"``: the snippet folder's and the test file's name."""
        return self.slug.replace("-", "_")

    def page(self, lang: str = DEFAULT_LANGUAGE) -> Path:
        english = docs(self.root) / "chapters" / f"{self.name}.md"
        return in_language(english, lang)

    @property
    def nav_path(self) -> str:
        """The page as mkdocs.yml's nav names it."""
        return f"chapters/{self.name}.md"

    @property
    def snippet_folder(self) -> Path:
        return snippets(self.root) / self.folder

    @property
    def test_file(self) -> Path:
        return self.root / "tests" / "chapters" / f"test_{self.folder}.py"

    @property
    def figure_prefix(self) -> str:
        """Every figure of the chapter is named ``<slug>-<what>.svg``."""
        return f"{self.slug}-"

    def figure_scripts(self) -> list[Path]:
        return sorted(self.snippet_folder.glob("figure_*.py"))


def chapters(root: Path = ROOT) -> list[Chapter]:
    """The chapters, in order, read from the English pages in docs/chapters/."""
    found = []
    for page in (docs(root) / "chapters").glob("*.md"):
        match = _CHAPTER_FILE.match(page.name)
        if match and language_of(page) == DEFAULT_LANGUAGE:
            found.append(Chapter(int(match["number"]), match["slug"], root))
    return sorted(found, key=lambda chapter: chapter.number)


def chapter_of(page: Path, root: Path = ROOT) -> Chapter | None:
    """The chapter a page (either language) belongs to, or None for other pages."""
    english = in_language(page, DEFAULT_LANGUAGE)
    if english.parent != docs(root) / "chapters":
        return None
    match = _CHAPTER_FILE.match(english.name)
    return Chapter(int(match["number"]), match["slug"], root) if match else None


def find_chapter(name: str, root: Path = ROOT) -> Chapter:
    """A chapter by slug (``rope``), folder (``length_extrapolation``) or page name.

    Raises:
        LookupError: No chapter has that name; the message lists the names there are.
    """
    wanted = name.removesuffix(".md").replace("_", "-")
    for chapter in chapters(root):
        if wanted in (chapter.slug, chapter.name):
            return chapter
    known = ", ".join(chapter.slug for chapter in chapters(root))
    raise LookupError(f"no chapter named {name!r}; the chapters are: {known}")


def next_chapter_number(root: Path = ROOT) -> int:
    return max((chapter.number for chapter in chapters(root)), default=0) + 1


# ── what a page includes ────────────────────────────────────────────────────────────────

# pymdownx.snippets: --8<-- "path" or --8<-- "path:section" (or a line range "path:3:8")
_INCLUDE = re.compile(r'--8<--\s+"(?P<path>[^":]+)(?::(?P<section>[^"]+))?"')
# the start and end markers of a named section inside an included file
SECTION_MARKER = re.compile(r"--8<--\s*\[(?P<kind>start|end):(?P<name>[^\]]+)\]")
# a figure drawn by a snippet: ![alt](../figures/name.svg)
_FIGURE = re.compile(r"!\[[^\]]*\]\((?P<target>(?:\.\./)+figures/(?P<name>[^)\s]+\.svg))")


@dataclass(frozen=True)
class Include:
    path: str  # relative to the repository root: "snippets/rope/use.py"
    section: str | None  # "cache", a line range "3:8", or None for the whole file
    line: int  # where the include stands in the page (1-based)

    @property
    def is_line_range(self) -> bool:
        return self.section is not None and re.fullmatch(r"[\d:,-]+", self.section) is not None


def includes(text: str) -> list[Include]:
    """The ``--8<--`` includes of a page's Markdown, in order."""
    return [
        Include(m["path"], m["section"], text.count("\n", 0, m.start()) + 1)
        for m in _INCLUDE.finditer(text)
    ]


def figure_references(text: str) -> list[tuple[str, int]]:
    """``(figure file name, line)`` for every snippet-drawn figure a page shows."""
    return [(m["name"], text.count("\n", 0, m.start()) + 1) for m in _FIGURE.finditer(text)]


def figure_targets(text: str) -> list[str]:
    """The figure addresses as written in the page (``../figures/x.svg``), in order."""
    return [m["target"] for m in _FIGURE.finditer(text)]


def figure_scripts(root: Path = ROOT) -> list[Path]:
    """Every figure script: ``snippets/<folder>/figure_*.py``."""
    return sorted(snippets(root).glob("*/figure_*.py"))


def snippet_files(root: Path = ROOT) -> list[Path]:
    """Every runnable snippet file."""
    return sorted(snippets(root).glob("*/*.py"))


def result_files(root: Path = ROOT) -> list[Path]:
    """The committed data files pages and figures read (see RESULT_FILES)."""
    return sorted(p for pattern in RESULT_FILES for p in root.glob(pattern) if p.is_file())


DOCS = docs()
SNIPPETS = snippets()


def iter_chapter_pages(root: Path = ROOT) -> Iterator[tuple[Chapter, Path]]:
    """``(chapter, page)`` for every chapter page in every language that exists."""
    for chapter in chapters(root):
        for lang in LANGUAGES:
            if chapter.page(lang).exists():
                yield chapter, chapter.page(lang)


def main(argv: list[str]) -> int:
    """``python -m tools.layout chapter-tests NAME``: the test paths of one chapter (make)."""
    if len(argv) == 2 and argv[0] == "chapter-tests":
        try:
            chapter = find_chapter(argv[1])
        except LookupError as error:
            print(f"error: {error}")
            return 1
        print(chapter.test_file.relative_to(ROOT).as_posix(), chapter.folder, chapter.slug)
        return 0
    print("usage: python -m tools.layout chapter-tests NAME")
    return 2


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
