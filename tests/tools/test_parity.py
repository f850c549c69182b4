"""Both languages are first-class: every page has a twin with the same structure."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

from tools import history, parity
from tools.hooks import translation_notice


def test_every_page_has_a_matching_twin() -> None:
    assert parity.all_differences() == []


def _pair(docs: Path, en: str, zh: str | None) -> Path:
    docs.mkdir(exist_ok=True)
    (docs / "p.md").write_text(en, encoding="utf-8")
    if zh is not None:
        (docs / "p.zh.md").write_text(zh, encoding="utf-8")
    return docs / "p.md"


def test_missing_twin_is_reported(tmp_path) -> None:
    docs = tmp_path / "docs"
    page = _pair(docs, "# A\n", None)
    assert parity.differences(page, docs) == ["p.md: no twin (p.zh.md)"]
    (docs / "q.zh.md").write_text("# 只有中文\n", encoding="utf-8")
    assert "q.zh.md: no twin (q.md)" in parity.all_differences(tmp_path)


def test_different_snippets_figures_and_headings_are_reported(tmp_path) -> None:
    en = (
        '# T\n\n## A\n\n```python\n--8<-- "snippets/x/a.py:one"\n```\n\n'
        "![alt](../figures/f.svg)\n\n\\(x\\)\n"
    )
    zh = '# T\n\n```python\n--8<-- "snippets/x/a.py:two"\n```\n\n\\(x\\) \\(y\\)\n'
    found = " ".join(parity.differences(_pair(tmp_path, en, zh), tmp_path))
    for key in ("snippet sections", "figures", "headings per level", "inline formulas"):
        assert key in found


def test_identical_structure_passes(tmp_path) -> None:
    en = '# Title\n\nProse.\n\n```python\n--8<-- "s/a.py:x"\n```\n\n!!! note "N"\n    text\n'
    zh = '# 标题\n\n正文。\n\n```python\n--8<-- "s/a.py:x"\n```\n\n!!! note "注"\n    文字\n'
    assert parity.differences(_pair(tmp_path, en, zh), tmp_path) == []


# ── outdated translations: a zh page last changed in git before its en twin ─────────────


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


def _repo(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    _git(tmp_path, "init", "-q")
    (docs / "p.zh.md").write_text("# 标题\n\n正文。\n", encoding="utf-8")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "zh", when=1_700_000_000)
    (docs / "p.md").write_text("# Title\n\nText.\n", encoding="utf-8")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "en", when=1_700_086_400)
    return docs


def test_translation_older_than_its_original_is_reported(tmp_path) -> None:
    docs = _repo(tmp_path)
    assert history.History(tmp_path).last_change(docs / "p.zh.md") == 1_700_000_000
    outdated = parity.outdated_translations(tmp_path)
    assert outdated == ["p.zh.md: older than p.md (outdated translation)"]
    assert parity.all_differences(tmp_path) == []  # a warning, not a difference
    # an uncommitted change counts as now: the translation is then the newer one
    (docs / "p.zh.md").write_text("# 标题\n\n新的正文。\n", encoding="utf-8")
    assert parity.outdated_translations(tmp_path) == []


def test_outdated_translation_gets_a_notice_in_the_build(tmp_path) -> None:
    docs = _repo(tmp_path)
    config = SimpleNamespace(docs_dir=str(docs), config_file_path=str(tmp_path / "mkdocs.yml"))

    def build(src: str, url: str, markdown: str) -> str:
        translation_notice.on_config(config)  # a new build reads git again
        page = SimpleNamespace(file=SimpleNamespace(src_uri=src), url=url)
        return translation_notice.on_page_markdown(markdown, page, config, None)

    out = build("p.zh.md", "zh/p/", "# 标题\n\n正文。\n")
    assert out.startswith("# 标题\n\n!!! warning outdated-translation")
    assert 'href="../../p/"' in out and "2023-11-15" in out and "2023-11-14" in out
    assert build("p.md", "p/", "# Title\n") == "# Title\n"  # originals never get one
    (docs / "p.zh.md").write_text("# 标题\n\n新的正文。\n", encoding="utf-8")
    assert build("p.zh.md", "zh/p/", "# 标题\n") == "# 标题\n"  # up to date: no notice


def test_notebook_twins_must_share_their_code(tmp_path) -> None:
    import json

    def notebook(name: str, code: str) -> Path:
        cells = [
            {"cell_type": "markdown", "source": ["text"]},
            {"cell_type": "code", "source": [code]},
        ]
        (tmp_path / name).write_text(json.dumps({"cells": cells}), encoding="utf-8")
        return tmp_path / name

    page = notebook("n.ipynb", "print(1)")
    notebook("n.zh.ipynb", "print(1)")
    assert parity.differences(page, tmp_path) == []
    notebook("n.zh.ipynb", "print(2)")
    assert "code cells differ" in " ".join(parity.differences(page, tmp_path))
