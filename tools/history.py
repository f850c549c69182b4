"""When files last changed, from git: the page dates and the outdated-translation checks.

One ``git log`` call gives the date of every file (cached per commit: i18n's second language
build reuses it) and one ``git status`` call the files changed since. A file with uncommitted
changes, or not in git at all, counts as changed now. Without git (a source tarball) nothing
has a date.
"""

from __future__ import annotations

import subprocess
import time
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from tools.layout import ROOT


def git(root: Path, *args: str) -> str | None:
    """Output of ``git args`` in ``root``, or None when git is missing or fails."""
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


def repository_root(path: Path) -> Path | None:
    top = git(path, "rev-parse", "--show-toplevel")
    return Path(top.strip()) if top else None


@cache
def _committed(root: Path, head: str) -> dict[str, int]:
    log = git(root, "log", "--format=%x01%ct", "--name-only", "--no-renames") or ""
    stamps: dict[str, int] = {}
    for entry in log.split("\x01")[1:]:
        stamp, *names = entry.strip("\n").split("\n")
        for name in names:
            if name:
                stamps.setdefault(name, int(stamp))  # newest commit first: keep the first seen
    return stamps


def committed(root: Path = ROOT) -> dict[str, int]:
    """{path relative to ``root``: Unix time of the last commit that touched it}."""
    head = git(root, "rev-parse", "HEAD")
    return {} if head is None else _committed(root, head.strip())


def uncommitted(root: Path = ROOT) -> set[str]:
    """Paths (relative to ``root``) with uncommitted changes, or not in git yet."""
    status = git(root, "status", "--porcelain", "--untracked-files=all")
    if status is None:
        return set()
    return {line[3:].split(" -> ")[-1].strip('"') for line in status.splitlines() if line}


class History:
    """The last change of every file of one repository, read once."""

    def __init__(self, root: Path = ROOT) -> None:
        self.root = root
        self.known = repository_root(root) is not None  # without git, nothing has a date
        self.stamps = committed(root)
        self.dirty = uncommitted(root)
        self.now = int(time.time())

    def last_change(self, path: Path | str) -> int:
        """Unix time of the last change; uncommitted or untracked files changed now."""
        rel = Path(path).resolve().relative_to(self.root.resolve()).as_posix()
        if rel in self.dirty or rel not in self.stamps:
            return self.now
        return self.stamps[rel]

    def last_change_of(self, paths: list[Path | str]) -> int:
        return max(self.last_change(path) for path in paths)


def day(stamp: int) -> str:
    """``YYYY-MM-DD`` (UTC) of a Unix time."""
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d")
