"""Both languages are first-class: every page has a twin with the same structure."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import parity  # noqa: E402


def test_every_page_has_a_matching_twin() -> None:
    assert parity.all_differences() == []


def _pair(tmp_path: Path, en: str, zh: str | None) -> Path:
    (tmp_path / "p.md").write_text(en, encoding="utf-8")
    if zh is not None:
        (tmp_path / "p.zh.md").write_text(zh, encoding="utf-8")
    return tmp_path / "p.md"


def test_missing_twin_is_reported(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(parity, "DOCS", tmp_path)
    page = _pair(tmp_path, "# A\n", None)
    assert parity.differences(page) == ["p.md: no twin (p.zh.md)"]
    (tmp_path / "q.zh.md").write_text("# 只有中文\n", encoding="utf-8")
    assert "q.zh.md: no twin (q.md)" in parity.all_differences()


def test_different_snippets_figures_and_headings_are_reported(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(parity, "DOCS", tmp_path)
    en = (
        '# T\n\n## A\n\n```python\n--8<-- "snippets/x/a.py:one"\n```\n\n'
        "![alt](../figures/f.svg)\n\n\\(x\\)\n"
    )
    zh = '# T\n\n```python\n--8<-- "snippets/x/a.py:two"\n```\n\n\\(x\\) \\(y\\)\n'
    found = " ".join(parity.differences(_pair(tmp_path, en, zh)))
    for key in ("snippet sections", "figures", "headings per level", "inline formulas"):
        assert key in found


def test_identical_structure_passes(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(parity, "DOCS", tmp_path)
    en = '# Title\n\nProse.\n\n```python\n--8<-- "s/a.py:x"\n```\n\n!!! note "N"\n    text\n'
    zh = '# 标题\n\n正文。\n\n```python\n--8<-- "s/a.py:x"\n```\n\n!!! note "注"\n    文字\n'
    assert parity.differences(_pair(tmp_path, en, zh)) == []


# ── outdated translations: a zh page last changed in git before its en twin ─────────────

import subprocess  # noqa: E402
import warnings  # noqa: E402
from types import SimpleNamespace  # noqa: E402

import translation_status  # noqa: E402


def test_outdated_translations_are_a_warning_not_an_error() -> None:
    """The real pages: an older translation is listed (and shown to readers), not failed."""
    for line in parity.outdated_translations():
        warnings.warn(line, stacklevel=1)


def _git(repo: Path, *args: str, when: int | None = None) -> None:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(repo),
    }
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{when} +0000"
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _repo(tmp_path: Path, monkeypatch) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    monkeypatch.setattr(parity, "ROOT", tmp_path)
    monkeypatch.setattr(parity, "DOCS", docs)
    _git(tmp_path, "init", "-q")
    (docs / "p.zh.md").write_text("# 标题\n\n正文。\n", encoding="utf-8")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "zh", when=1_700_000_000)
    (docs / "p.md").write_text("# Title\n\nText.\n", encoding="utf-8")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "en", when=1_700_086_400)
    return docs


def test_translation_older_than_its_original_is_reported(tmp_path, monkeypatch) -> None:
    docs = _repo(tmp_path, monkeypatch)
    assert parity.last_change(docs / "p.zh.md") == 1_700_000_000
    assert parity.outdated_translations() == ["p.zh.md: older than p.md (outdated translation)"]
    assert parity.all_differences() == []  # a warning, not a difference
    # an uncommitted change counts as now: the translation is then the newer one
    (docs / "p.zh.md").write_text("# 标题\n\n新的正文。\n", encoding="utf-8")
    assert parity.outdated_translations() == []


def test_outdated_translation_gets_a_notice_in_the_build(tmp_path, monkeypatch) -> None:
    docs = _repo(tmp_path, monkeypatch)
    config = SimpleNamespace(docs_dir=str(docs))

    def build(src: str, url: str, markdown: str) -> str:
        page = SimpleNamespace(file=SimpleNamespace(src_uri=src), url=url)
        return translation_status.on_page_markdown(markdown, page, config, None)

    out = build("p.zh.md", "zh/p/", "# 标题\n\n正文。\n")
    assert out.startswith("# 标题\n\n!!! warning outdated-translation")
    assert 'href="../../p/"' in out and "2023-11-15" in out
    assert build("p.md", "p/", "# Title\n") == "# Title\n"  # originals never get one
    (docs / "p.zh.md").write_text("# 标题\n\n新的正文。\n", encoding="utf-8")
    assert build("p.zh.md", "zh/p/", "# 标题\n") == "# 标题\n"  # up to date: no notice


def test_notebook_twins_must_share_their_code(tmp_path, monkeypatch) -> None:
    import json

    monkeypatch.setattr(parity, "DOCS", tmp_path)

    def notebook(name: str, code: str) -> Path:
        cells = [
            {"cell_type": "markdown", "source": ["text"]},
            {"cell_type": "code", "source": [code]},
        ]
        (tmp_path / name).write_text(json.dumps({"cells": cells}), encoding="utf-8")
        return tmp_path / name

    page = notebook("n.ipynb", "print(1)")
    notebook("n.zh.ipynb", "print(1)")
    assert parity.differences(page) == []
    notebook("n.zh.ipynb", "print(2)")
    assert "code cells differ" in " ".join(parity.differences(page))
