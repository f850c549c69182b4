"""Check that every snippet a page includes exists, without building the site.

For every page in ``docs/`` (both languages):

* each ``--8<-- "path"`` / ``--8<-- "path:section"`` names an existing file, and the file
  marks that section with ``# --8<-- [start:section]`` ... ``# --8<-- [end:section]``;
* a chapter ``docs/chapters/NN-some-name.md`` includes snippets only from
  ``snippets/some_name/`` (its own folder: dashes become underscores; data files from
  elsewhere, such as benchmark results, are fine);
* a ``title="..."`` on a code fence names the file the fence includes;
* each figure ``../figures/<name>.svg`` is saved by a ``figure_*.py`` script of the page's
  snippet folder, and a chapter's figure names start with the chapter name; the Chinese
  version of a figure is ``<name>.zh.svg``, saved by the same script.

For every file in ``snippets/``: sections open and close once, in order, never nested in
another section of the same name. Sections that no page shows are notes, not errors.

    python -m tools.check_snippets     # exit 1 and list every problem as path:line: message
    python -m tools.check_snippets -v  # also list the sections no page shows
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tools import layout
from tools.layout import ROOT

_FENCE_TITLE = re.compile(r'^\s*(?:`{3,}|~{3,})\s*\w+.*?\btitle="(?P<title>[^"]+)"')


def sections(path: Path, root: Path = ROOT) -> tuple[dict[str, int], list[str]]:
    """({section name: line of its start marker}, [problems]) for one snippet file."""
    found: dict[str, int] = {}
    problems: list[str] = []
    open_at: dict[str, int] = {}
    rel = path.relative_to(root).as_posix()
    for lineno, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        for m in layout.SECTION_MARKER.finditer(line):
            name = m.group("name")
            if m.group("kind") == "start":
                if name in found:
                    problems.append(
                        f"{rel}:{lineno}: section '{name}' starts a second time "
                        f"(first at line {found[name]}): give it another name"
                    )
                    continue
                found[name] = lineno
                open_at[name] = lineno
            elif name in open_at:
                del open_at[name]
            else:
                problems.append(
                    f"{rel}:{lineno}: '[end:{name}]' without a '[start:{name}]' above it"
                )
    for name, lineno in open_at.items():
        problems.append(
            f"{rel}:{lineno}: section '{name}' is never closed: add "
            f"'# --8<-- [end:{name}]' after its last line"
        )
    return found, problems


def _saved_by(folder: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("figure_*.py")))


def check_page(
    page: Path,
    cache: dict[Path, tuple[dict[str, int], list[str]]],
    used: set[tuple[str, str]],
    root: Path = ROOT,
) -> list[str]:
    problems: list[str] = []
    rel = page.relative_to(root).as_posix()
    chapter = layout.chapter_of(page, root)
    own = chapter.folder if chapter else None
    text = page.read_text(encoding="utf-8")
    lines = text.split("\n")
    for include in layout.includes(text):
        path, section, where = include.path, include.section, f"{rel}:{include.line}"
        target = root / path
        if not target.is_file():
            problems.append(f"{where}: includes {path}, which does not exist")
            continue
        if (
            own is not None
            and path.startswith("snippets/")
            and not path.startswith(f"snippets/{own}/")
        ):
            problems.append(
                f"{where}: a chapter includes code only from its own folder "
                f"snippets/{own}/, not {path}"
            )
        if target.suffix == ".py" and target not in cache:
            cache[target] = sections(target, root)
        if section is None:
            used.add((path, "*"))
        elif not include.is_line_range:  # "path:3:8" is pymdownx syntax too
            known = cache.get(target, ({}, []))[0]
            if section not in known:
                names = ", ".join(sorted(known)) or "none"
                problems.append(
                    f"{where}: {path} has no section '{section}' (it has: {names}); mark it "
                    f"with '# --8<-- [start:{section}]' and '# --8<-- [end:{section}]'"
                )
            used.add((path, section))
        fence = lines[include.line - 2] if include.line >= 2 else ""
        title = _FENCE_TITLE.match(fence)
        if title and title.group("title") != path:
            problems.append(
                f"{rel}:{include.line - 1}: the fence title says "
                f"{title.group('title')!r} but the block includes {path}"
            )
    if chapter is None:
        return problems
    for name, line in layout.figure_references(text):
        where = f"{rel}:{line}"
        if not name.startswith(chapter.figure_prefix):
            problems.append(f"{where}: figure {name} must be named {chapter.slug}-<what>.svg")
        saved = _saved_by(chapter.snippet_folder)
        if name not in saved and name.replace(".zh.svg", ".svg") not in saved:
            problems.append(
                f"{where}: no snippets/{own}/figure_*.py saves {name}: write a "
                f'figure script that calls savefig("{name}")'
            )
    return problems


def all_problems(root: Path = ROOT) -> tuple[list[str], list[str]]:
    """([errors], [notes])."""
    cache: dict[Path, tuple[dict[str, int], list[str]]] = {}
    used: set[tuple[str, str]] = set()
    problems: list[str] = []
    for page in layout.markdown_pages(root):
        problems += check_page(page, cache, used, root)
    notes: list[str] = []
    for script in layout.snippet_files(root):
        known, bad = cache.get(script) or sections(script, root)
        problems += bad
        rel = script.relative_to(root).as_posix()
        if (rel, "*") in used:
            continue
        for name, lineno in known.items():
            if (rel, name) not in used:
                notes.append(f"{rel}:{lineno}: note: section '{name}' is not shown on any page")
    return sorted(set(problems)), notes


def main() -> int:
    problems, notes = all_problems()
    for line in (notes if "-v" in sys.argv[1:] else []) + problems:
        print(line)
    print(f"snippets: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
