"""The built site as the browser tests see it: its pages, enumerated from site/ at test time
(never from a hand-kept list), their languages and twins, and the ids each page defines."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tools import layout

SITE = layout.site_dir()  # POSENC_SITE_DIR: a site built elsewhere (`mkdocs build -d DIR`)
LANGS = ("en", "zh")  # default language first; the others live under /<lang>/


@dataclass(frozen=True)
class Page:
    rel: str  # address relative to the site root: "", "chapters/01-x/", "zh/chapters/01-x/"

    @property
    def lang(self) -> str:
        first = self.rel.split("/", 1)[0]
        return first if first in LANGS[1:] else LANGS[0]

    @property
    def base(self) -> str:
        """The address without its language prefix (the same for both twins)."""
        return self.rel if self.lang == LANGS[0] else self.rel[len(self.lang) + 1 :]

    def in_lang(self, lang: str) -> Page:
        return Page(self.base if lang == LANGS[0] else f"{lang}/{self.base}")

    @property
    def twin(self) -> Page:
        return self.in_lang(LANGS[1] if self.lang == LANGS[0] else LANGS[0])

    @property
    def is_chapter(self) -> bool:
        return self.base.startswith("chapters/")

    @property
    def is_notebook(self) -> bool:
        return self.base.startswith("notebooks/")

    @property
    def file(self) -> Path:
        return SITE / self.rel / "index.html"

    @property
    def id(self) -> str:
        return self.rel.rstrip("/") or "home"

    def __str__(self) -> str:
        return self.id


def built() -> bool:
    return (SITE / "index.html").is_file()


def pages() -> list[Page]:
    """Every HTML page of the site in every language (not the 404 page, not assets)."""
    if not built():
        return []
    found = []
    for index in SITE.rglob("index.html"):
        rel = index.parent.relative_to(SITE).as_posix()
        if rel.split("/", 1)[0] in ("assets", "search", "404"):
            continue
        found.append(Page("" if rel == "." else rel + "/"))
    return sorted(found, key=lambda p: (p.base, p.lang))


def chapters() -> list[Page]:
    return [p for p in pages() if p.is_chapter]


def page_with(path_part: str, lang: str = LANGS[0]) -> Page | None:
    """The first chapter whose address contains ``path_part``, in ``lang`` (None if none)."""
    for page in chapters():
        if page.lang == lang and path_part in page.base:
            return page
    return None


_ID = re.compile(r"""\s(?:id|name)=["']?([^"'\s>]+)""")


@cache
def ids_in(file: Path) -> frozenset[str]:
    """Every id (and <a name>) in an HTML file, i.e. every anchor a link may point to."""
    return frozenset(_ID.findall(file.read_text(encoding="utf-8", errors="replace")))
