"""tools/page_dates.py: the date under each page comes from git, one log call per commit."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import page_dates  # noqa: E402


def _commit(repo: Path, date: str, *files: str) -> None:
    for name in files:
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{name} {date}\n", encoding="utf-8")
    env = dict(
        os.environ, GIT_COMMITTER_DATE=f"{date}T12:00:00", GIT_AUTHOR_DATE=f"{date}T12:00:00"
    )
    subprocess.run(["git", "add", *files], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", date],
        cwd=repo,
        check=True,
        env=env,
    )


def test_dates_come_from_the_last_commit_and_changes_count_as_today(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    _commit(tmp_path, "2026-01-05", "docs/a.md", "docs/b.zh.md", "snippets/x/x.py")
    _commit(tmp_path, "2026-03-07", "docs/b.zh.md")
    dates = page_dates.committed_dates(tmp_path)
    assert dates["docs/a.md"] == "2026-01-05"
    assert dates["docs/b.zh.md"] == "2026-03-07"  # the newest commit wins

    (tmp_path / "docs" / "a.md").write_text("changed\n", encoding="utf-8")
    (tmp_path / "docs" / "new.md").write_text("new\n", encoding="utf-8")
    assert page_dates.changed_files(tmp_path) == {"docs/a.md", "docs/new.md"}

    today = datetime.date.today().isoformat()
    page_dates._state.update(root=tmp_path, dates=dates, dirty=page_dates.changed_files(tmp_path))
    try:
        assert page_dates.page_date(["docs/a.md"]) == today  # modified, not committed
        assert page_dates.page_date(["docs/new.md"]) == today  # not in git yet
        assert page_dates.page_date(["docs/b.zh.md"]) == "2026-03-07"
        # a page is as new as the newest snippet it includes
        assert page_dates.page_date(["snippets/x/x.py", "docs/b.zh.md"]) == "2026-03-07"
    finally:
        page_dates._state.update(root=None, dates={}, dirty=set())


def test_no_git_means_no_date(tmp_path: Path) -> None:
    assert page_dates.committed_dates(tmp_path) == {}
    assert page_dates.page_date(["docs/a.md"]) is None
