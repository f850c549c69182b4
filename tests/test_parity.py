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
