"""tools/history.py and the page-date hook: dates come from git, uncommitted files count as
changed now, a page is as new as the newest file it includes, and without git nothing has a
date."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tools import history
from tools.hooks import page_dates


def _commit(repo: Path, date: str, *files: str, text: str = "") -> None:
    for name in files:
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text or f"{name} {date}\n", encoding="utf-8")
    env = dict(
        os.environ,
        GIT_COMMITTER_DATE=f"{date}T12:00:00+0000",
        GIT_AUTHOR_DATE=f"{date}T12:00:00+0000",
    )
    subprocess.run(["git", "add", *files], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", date],
        cwd=repo,
        check=True,
        env=env,
    )


def test_dates_come_from_the_last_commit_and_changes_count_as_now(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    page = 'Text\n\n```python\n--8<-- "snippets/x/x.py:s"\n```\n'
    _commit(tmp_path, "2026-01-05", "docs/a.md", "docs/b.zh.md", "snippets/x/x.py")
    _commit(tmp_path, "2026-03-07", "docs/b.zh.md")
    _commit(tmp_path, "2026-02-01", "docs/c.md", text=page)
    _commit(tmp_path, "2026-04-02", "snippets/x/x.py")
    record = history.History(tmp_path)
    assert history.day(record.last_change(tmp_path / "docs/a.md")) == "2026-01-05"
    assert history.day(record.last_change(tmp_path / "docs/b.zh.md")) == "2026-03-07"
    # a page is as new as the newest snippet it includes
    assert page_dates.page_date(tmp_path / "docs/c.md", record) == "2026-04-02"

    (tmp_path / "docs" / "a.md").write_text("changed\n", encoding="utf-8")
    (tmp_path / "docs" / "new.md").write_text("new\n", encoding="utf-8")
    record = history.History(tmp_path)
    assert record.dirty == {"docs/a.md", "docs/new.md"}
    today = history.day(record.now)
    assert page_dates.page_date(tmp_path / "docs/a.md", record) == today  # modified
    assert page_dates.page_date(tmp_path / "docs/new.md", record) == today  # not in git yet
    assert page_dates.page_date(tmp_path / "docs/b.zh.md", record) == "2026-03-07"


def test_no_git_means_no_date(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("x\n", encoding="utf-8")
    record = history.History(tmp_path)
    assert not record.known
    assert page_dates.page_date(tmp_path / "docs" / "a.md", record) is None
