"""tools/audit.py: every page has a claims audit, and every claim in it is settled."""

from __future__ import annotations

from pathlib import Path

from tools import audit


def test_every_page_is_audited_and_every_claim_settled() -> None:
    found = audit.problems()
    assert not found, f"{len(found)} audit problem(s):\n" + "\n".join(found[:40])


def _repo(tmp_path: Path, audit_text: str | None) -> Path:
    (tmp_path / "docs" / "chapters").mkdir(parents=True)
    (tmp_path / "docs" / "chapters" / "01-x.md").write_text("# X { #x }\n\n## A { #a }\n")
    (tmp_path / "docs" / "chapters" / "01-x.zh.md").write_text("# 叉 { #x }\n\n## 甲 { #a }\n")
    if audit_text is not None:
        (tmp_path / "audit" / "chapters").mkdir(parents=True)
        (tmp_path / "audit" / "chapters" / "01-x.toml").write_text(audit_text)
    return tmp_path


CLAIM = (
    '[[claim]]\npage = "chapters/01-x.md"\nanchor = "{anchor}"\nclaim = "c"\n'
    'source = "https://arxiv.org/abs/2104.09864"\nverdict = "{verdict}"\n'
)


def test_a_page_without_an_audit_is_reported(tmp_path: Path) -> None:
    assert any("no audit file" in p for p in audit.problems(_repo(tmp_path, None)))


def test_open_verdicts_and_unknown_anchors_are_reported(tmp_path: Path) -> None:
    root = _repo(tmp_path, CLAIM.format(anchor="a", verdict="wrong"))
    assert any("verdict 'wrong' is open" in p for p in audit.problems(root))
    root = _repo(tmp_path / "b", CLAIM.format(anchor="nowhere", verdict="fixed"))
    assert any("has no #nowhere" in p for p in audit.problems(root))
    root = _repo(tmp_path / "c", CLAIM.format(anchor="a", verdict="correct"))
    assert audit.problems(root) == []


def test_a_page_without_claims_must_say_why(tmp_path: Path) -> None:
    assert any("no `no_claims` reason" in p for p in audit.problems(_repo(tmp_path, "")))
    root = _repo(tmp_path / "b", 'no_claims = "only translations"\n')
    assert audit.problems(root) == []
