"""The home pages list every chapter, in order, under the title the navigation gives it."""

from __future__ import annotations

import re

import pytest
import yaml

from tools import layout, new_chapter


def _config() -> dict:
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)  # !ENV, !relative
    return yaml.load((layout.ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)


def _titles(lang: str) -> dict[str, str]:
    """{chapter page: its title in the navigation of ``lang``}."""
    config = _config()
    chapters = {}
    for entry in config["nav"]:
        for items in entry.values():
            if isinstance(items, list):
                for item in items:
                    ((title, page),) = item.items()
                    if isinstance(page, str) and page.startswith("chapters/"):  # not a sub-section
                        chapters[page] = title
    if lang == layout.DEFAULT_LANGUAGE:
        return chapters
    i18n = next(p["i18n"] for p in config["plugins"] if isinstance(p, dict) and "i18n" in p)
    translations = next(x for x in i18n["languages"] if x["locale"] == lang)["nav_translations"]
    return {page: translations.get(title, title) for page, title in chapters.items()}


@pytest.mark.parametrize("lang", layout.LANGUAGES)
def test_home_page_lists_every_chapter_under_its_navigation_title(lang: str) -> None:
    home = layout.in_language(layout.DOCS / "index.md", lang).read_text(encoding="utf-8")
    listed = re.findall(r"^\d+\. \[([^\]]+)\]\((chapters/[^)]+\.md)\)", home, re.MULTILINE)
    expected = [(title, page) for page, title in _titles(lang).items()]
    assert [(t, p) for t, p in listed] == expected
    assert [chapter.nav_path for chapter in layout.chapters()] == [p for _, p in expected]
    # and says how many there are, in its opening
    name = layout.in_language(layout.DOCS / "index.md", lang).name
    said = new_chapter.CHAPTER_COUNT[name].search(home)
    assert said and int(said.group(1)) == len(expected), "the home page's chapter count"
