"""Scaffold a new chapter: both pages, a snippet file, a figure script, a test stub, the nav.

    python -m tools.new_chapter my-topic --title "My topic" --zh-title "我的主题"
    make chapter NAME=my-topic TITLE="My topic" ZH_TITLE="我的主题"

creates, with the next free chapter number NN,

    docs/chapters/NN-my-topic.md            English page (from tools/templates/)
    docs/chapters/NN-my-topic.zh.md         Chinese page, same structure
    snippets/my_topic/my_topic.py           the chapter's code, in named sections
    snippets/my_topic/figure_example.py     a figure script (saves my-topic-example.svg)
    tests/chapters/test_my_topic.py         a test that fails until you write the real tests

and adds the page to the nav in mkdocs.yml (English title under "Chapters:", Chinese title
under the zh ``nav_translations``) and to the chapter list on both home pages.

Every place you still have to write is marked ``TODO(new-chapter)``; the test
``tests/test_scaffold.py::test_no_scaffold_placeholders_left`` lists the ones left.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from string import Template

from tools import layout
from tools.layout import ROOT

TEMPLATES = Path(__file__).resolve().parent / "templates"
PLACEHOLDER = "TODO(new-chapter)"


class ScaffoldError(Exception):
    """The chapter cannot be created as asked; the message says why and what to do."""


def _yaml_scalar(text: str) -> str:
    """``text`` as a YAML scalar: plain where that is safe, double-quoted otherwise."""
    if re.fullmatch(r"[^\s:#'\"{}\[\],&*!|>%@`?-][^:#]*[^\s:]|[^\s:#'\"{}\[\],&*!|>%@`?-]", text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _add_nav(config: str, title: str, zh_title: str, page: str) -> str:
    """mkdocs.yml with the page under ``Chapters:`` (numeric order) and its zh title."""
    lines = config.split("\n")
    try:
        start = next(i for i, line in enumerate(lines) if re.match(r"^\s*- Chapters:\s*$", line))
    except StopIteration:
        raise ScaffoldError("mkdocs.yml has no '- Chapters:' entry under nav:") from None
    indent = len(lines[start]) - len(lines[start].lstrip()) + 4
    entry = f"{' ' * indent}- {_yaml_scalar(title)}: {page}"
    at = start + 1
    while at < len(lines) and lines[at].startswith(" " * indent + "- "):
        found = re.search(r"chapters/(\d{2})-", lines[at])
        if found and found.group(1) > page.split("/")[-1][:2]:
            break
        at += 1
    lines.insert(at, entry)

    try:
        nt = next(
            i
            for i, line in enumerate(lines)
            if line.strip() == "nav_translations:"
            and any("locale: zh" in x for x in lines[max(0, i - 12) : i])
        )
    except StopIteration:
        raise ScaffoldError("mkdocs.yml has no nav_translations: for the zh language") from None
    key_indent = len(lines[nt]) - len(lines[nt].lstrip()) + 2
    end = nt + 1
    while end < len(lines) and lines[end].startswith(" " * key_indent) and lines[end].strip():
        end += 1
    lines.insert(end, f"{' ' * key_indent}{_yaml_scalar(title)}: {_yaml_scalar(zh_title)}")
    return "\n".join(lines)


# Where each home page says how many chapters there are (tests/site/test_navigation.py checks
# the number; the scaffold raises it with each chapter it adds).
CHAPTER_COUNT = {
    "index.md": re.compile(r"There are (\d+) chapters"),
    "index.zh.md": re.compile(r"全书共 (\d+) 章"),
}


def _recount(text: str, home: str) -> str:
    """The home page with its chapter count equal to the entries of its chapter list."""
    listed = len(re.findall(r"^\d+\. \[", text, re.MULTILINE))
    return CHAPTER_COUNT[home].sub(lambda m: m.group(0).replace(m.group(1), str(listed)), text, 1)


def _add_to_home(text: str, item: str) -> str | None:
    """The home page with ``item`` after the last entry of its chapter list, or None."""
    lines = text.split("\n")
    heading = next(
        (i for i, line in enumerate(lines) if line.startswith("## ") and "{ #chapters }" in line),
        None,
    )
    if heading is None:
        return None
    last = None
    for i in range(heading + 1, len(lines)):
        if lines[i].startswith("#"):
            break
        if re.match(r"^\d+\.\s", lines[i]):
            last = i
            while last + 1 < len(lines) and lines[last + 1].startswith("   "):
                last += 1
    if last is None:
        return None
    lines.insert(last + 1, item)
    return "\n".join(lines)


def _check_config(text: str, title: str, zh_title: str, page: str) -> None:
    """Parse the edited mkdocs.yml (tags ignored) and check both entries are where mkdocs looks."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    config = yaml.load(text, Loader=Loader)
    chapters = next(e["Chapters"] for e in config["nav"] if isinstance(e, dict) and "Chapters" in e)
    assert {title: page} in chapters, "nav entry not found after editing mkdocs.yml"
    i18n = next(p["i18n"] for p in config["plugins"] if isinstance(p, dict) and "i18n" in p)
    zh = next(lang for lang in i18n["languages"] if lang["locale"] == "zh")
    assert zh["nav_translations"].get(title) == zh_title, "zh nav title not found"


def scaffold(
    name: str,
    title: str | None = None,
    zh_title: str | None = None,
    number: int | None = None,
    root: Path = ROOT,
) -> list[Path]:
    """Create the chapter ``name`` under ``root``; return the files created or changed."""
    if not layout.CHAPTER_SLUG.match(name):
        raise ScaffoldError(
            f"chapter name {name!r}: use lowercase words joined by dashes, e.g. 'rope-scaling'"
        )
    existing = layout.chapters(root)
    if taken := [c for c in existing if c.slug == name]:
        raise ScaffoldError(f"chapter {name!r} exists already: {taken[0].page().relative_to(root)}")
    number = layout.next_chapter_number(root) if number is None else number
    if number < 1 or number > 99:
        raise ScaffoldError(f"chapter number {number}: use 1 to 99")
    if taken := [c for c in existing if c.number == number]:
        raise ScaffoldError(
            f"chapter number {number:02d} is taken by {taken[0].page().name}: pick another"
        )
    chapter = layout.Chapter(number, name, root)
    title = title or name.replace("-", " ").capitalize()
    zh_title = zh_title or title
    values = {
        "name": name,
        "folder": chapter.folder,
        "number": f"{number:02d}",
        "title": title,
        "zh_title": zh_title,
        "test_file": chapter.test_file.relative_to(root).as_posix(),
    }
    page = chapter.nav_path

    new_files = {
        chapter.page("en"): "chapter.md.tmpl",
        chapter.page("zh"): "chapter.zh.md.tmpl",
        chapter.snippet_folder / f"{chapter.folder}.py": "snippet.py.tmpl",
        chapter.snippet_folder / "figure_example.py": "figure.py.tmpl",
        chapter.test_file: "test_chapter.py.tmpl",
    }
    for path in new_files:
        if path.exists():
            raise ScaffoldError(
                f"{path.relative_to(root)} exists already: remove it or pick another name"
            )

    config_path = root / "mkdocs.yml"
    config = _add_nav(config_path.read_text(encoding="utf-8"), title, zh_title, page)
    _check_config(config, title, zh_title, page)

    for path, template in new_files.items():
        text = Template((TEMPLATES / template).read_text(encoding="utf-8")).substitute(values)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    config_path.write_text(config, encoding="utf-8")
    changed = [*new_files, config_path]

    for home, line in (
        ("index.md", f"{number}. [{title}]({page}): {PLACEHOLDER} one line on what it shows."),
        (
            "index.zh.md",
            f"{number}. [{zh_title}]({page})\uff1a{PLACEHOLDER} 一句话说明本章内容。",
        ),
    ):
        path = root / "docs" / home
        if path.exists() and (text := _add_to_home(path.read_text(encoding="utf-8"), line)):
            path.write_text(_recount(text, home), encoding="utf-8")
            changed.append(path)
    return changed


NEXT_STEPS = """
Next steps (CONTRIBUTING.md, "Add a chapter", has the details):
  1. Write both pages; replace every {placeholder} (the checks list the ones left).
  2. Put the code in {snippet}, in named sections; run it: .venv/bin/python {snippet}
  3. Paste what each block prints under it (the expected-output blocks).
  4. Write the tests in {test}; it fails until you do.
  5. Check everything for this chapter: make test-chapter NAME={name}
     and the whole repository before you push: make lint && make test
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Scaffold a new chapter (both languages).")
    parser.add_argument("name", help="lowercase words joined by dashes, e.g. rope-scaling")
    parser.add_argument("--title", help="English title (default: from the name)")
    parser.add_argument("--zh-title", help="Chinese title (default: the English title)")
    parser.add_argument("--number", type=int, help="chapter number (default: next free)")
    args = parser.parse_args(argv)
    try:
        changed = scaffold(args.name, args.title, args.zh_title, args.number)
    except ScaffoldError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for path in changed:
        print(f"  wrote {path.relative_to(ROOT)}")
    chapter = layout.find_chapter(args.name)
    print(
        NEXT_STEPS.format(
            placeholder=PLACEHOLDER,
            name=args.name,
            snippet=(chapter.snippet_folder / f"{chapter.folder}.py").relative_to(ROOT),
            test=chapter.test_file.relative_to(ROOT),
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
