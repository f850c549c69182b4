"""MkDocs hook: show on every page the date it last changed, taken from git.

A page's date is the newest of the page file itself and the snippet files it includes
(``--8<-- "snippets/..."``), since a change to a snippet changes what the page shows.
A file with uncommitted changes, or not yet in git, counts as changed today. Without git
(a source tarball) pages show no date.

The dates of all files come from ONE ``git log`` call, cached per commit, plus one
``git status`` call per build; i18n's second language build reuses both.
The date goes into ``page.meta["git_revision_date"]`` (``YYYY-MM-DD``), which
``overrides/partials/source-file.html`` shows under the page next to the edit link.

Note for CI: a shallow clone (``fetch-depth: 1``) gives every file the date of its one
commit; deploy from a full clone to get real dates.
"""

from __future__ import annotations

import datetime
import re
import subprocess
from pathlib import Path

_INCLUDE = re.compile(r'--8<--\s+"([^":]+)')
_by_commit: dict[str, dict[str, str]] = {}  # HEAD -> {path: date of last commit}
_state: dict[str, object] = {"root": None, "dates": {}, "dirty": set()}


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-c", "core.quotePath=false", *args],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def committed_dates(root: Path) -> dict[str, str]:
    """{path relative to the repository root: date of the last commit touching it}."""
    head = _git(root, "rev-parse", "HEAD")
    if head is None:
        return {}
    head = head.strip()
    if head not in _by_commit:
        log = _git(root, "log", "--format=%x01%cs", "--name-only", "--no-renames") or ""
        dates: dict[str, str] = {}
        for entry in log.split("\x01")[1:]:
            date, *names = entry.strip("\n").split("\n")
            for name in names:
                if name:
                    dates.setdefault(name, date)  # newest commit first: keep the first seen
        _by_commit.clear()
        _by_commit[head] = dates
    return _by_commit[head]


def changed_files(root: Path) -> set[str]:
    """Paths with uncommitted changes or untracked (relative to the repository root)."""
    status = _git(root, "status", "--porcelain", "--untracked-files=all")
    if status is None:
        return set()
    return {line[3:].split(" -> ")[-1].strip('"') for line in status.splitlines() if line}


def page_date(sources: list[str]) -> str | None:
    """The date to show for a page built from ``sources`` (paths relative to the root)."""
    if _state["root"] is None:
        return None
    today = datetime.date.today().isoformat()
    found = []
    for path in sources:
        if path in _state["dirty"] or path not in _state["dates"]:
            found.append(today)
        else:
            found.append(_state["dates"][path])
    return max(found) if found else None


def on_config(config, **kwargs):
    config_dir = Path(config.config_file_path).resolve().parent
    top = _git(config_dir, "rev-parse", "--show-toplevel")
    if top is None:
        _state.update(root=None, dates={}, dirty=set())
        return config
    root = Path(top.strip())
    _state.update(root=root, dates=committed_dates(root), dirty=changed_files(root))
    return config


def on_page_context(context, page, config, nav, **kwargs):
    root = _state["root"]
    if root is None or page.file.abs_src_path is None:
        return context
    source = Path(page.file.abs_src_path).resolve()
    try:
        sources = [source.relative_to(root).as_posix()]
    except ValueError:
        return context
    if source.suffix == ".md":
        config_dir = Path(config.config_file_path).resolve().parent
        for include in _INCLUDE.findall(source.read_text(encoding="utf-8")):
            path = (config_dir / include).resolve()
            if path.is_file() and path.is_relative_to(root):
                sources.append(path.relative_to(root).as_posix())
    date = page_date(sorted(set(sources)))
    if date is not None:
        page.meta["git_revision_date"] = date
    return context
