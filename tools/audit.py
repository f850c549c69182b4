"""The claims audit: every factual statement of every page, with the source it was checked
against and the verdict.

One file per page (both languages): ``audit/<page path without .md>.toml``, e.g.
``audit/chapters/05-rope.toml`` for ``docs/chapters/05-rope.md`` and its Chinese twin. Each
``[[claim]]`` holds::

    page     the page, relative to docs/ ("chapters/05-rope.md"; the .zh.md path for a
             statement only the Chinese page makes)
    anchor   the id of the section it stands in
    claim    the statement, paraphrased in English
    source   what it was checked against: a paper's section or equation (with its arXiv
             link), a file and lines of released code or config (with its URL), or
             "asserted: <test or snippet section>" for a claim the site's own code proves
    verdict  "correct", "fixed" (it was wrong or imprecise and the page now says what the
             source says) or "removed" (the page no longer makes it)
    note     why, and for a fix what changed

A page without factual claims says so: ``no_claims = "<why>"`` at the top of its file.

    python -m tools.audit       # check every page has an audit and every entry is complete
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from tools import layout
from tools.layout import ROOT

VERDICTS = ("correct", "fixed", "removed")
FIELDS = ("page", "anchor", "claim", "source", "verdict", "note")


@dataclass(frozen=True)
class Claim:
    page: str
    anchor: str
    claim: str
    source: str
    verdict: str
    note: str = ""


def audit_dir(root: Path = ROOT) -> Path:
    return root / "audit"


def audit_file(page: Path, root: Path = ROOT) -> Path:
    """The audit file of a page (either language) or notebook."""
    english = layout.in_language(page, layout.DEFAULT_LANGUAGE)
    rel = english.relative_to(layout.docs(root))
    return audit_dir(root) / rel.with_suffix(".toml")


def read(file: Path) -> tuple[list[Claim], str | None, list[str]]:
    """``(claims, no_claims reason, problems)`` of one audit file."""
    data = tomllib.loads(file.read_text(encoding="utf-8"))
    problems, claims = [], []
    for number, entry in enumerate(data.get("claim", []), 1):
        where = f"{file.parent.name}/{file.name}: claim {number}"
        if missing := [key for key in FIELDS[:-1] if not str(entry.get(key, "")).strip()]:
            problems.append(f"{where}: missing {missing}")
            continue
        if unknown := set(entry) - set(FIELDS):
            problems.append(f"{where}: unknown keys {sorted(unknown)}")
        if entry["verdict"] not in VERDICTS:
            problems.append(
                f"{where} ({entry['page']}#{entry['anchor']}): verdict {entry['verdict']!r} is "
                f"open: fix the page and say 'fixed', or 'removed'; allowed: {VERDICTS}"
            )
        claims.append(Claim(**{key: entry.get(key, "") for key in FIELDS}))
    return claims, data.get("no_claims"), problems


def _anchors(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    return set(re.findall(r"\{\s*#([\w-]+)", text))


def problems(root: Path = ROOT) -> list[str]:
    """Everything wrong with the audit: pages without one, open verdicts, unknown anchors."""
    found = []
    docs = layout.docs(root)
    for page in layout.pages(root):
        if layout.language_of(page) != layout.DEFAULT_LANGUAGE:
            continue
        file = audit_file(page, root)
        rel = page.relative_to(docs).as_posix()
        if not file.is_file():
            found.append(f"{rel}: no audit file {file.relative_to(root)}")
            continue
        claims, no_claims, bad = read(file)
        found += bad
        if not claims and not no_claims:
            found.append(f"{file.relative_to(root)}: no claims and no `no_claims` reason")
        for claim in claims:
            target = docs / claim.page
            if layout.in_language(target, layout.DEFAULT_LANGUAGE) != page:
                found.append(f"{file.relative_to(root)}: claim on {claim.page} belongs elsewhere")
            elif not target.is_file():
                found.append(f"{file.relative_to(root)}: {claim.page} does not exist")
            elif (
                target.suffix == ".md"
                and "." not in claim.anchor  # a dotted name is an API reference heading
                and claim.anchor not in _anchors(target)
            ):
                found.append(f"{file.relative_to(root)}: {claim.page} has no #{claim.anchor}")
    for file in sorted(audit_dir(root).rglob("*.toml")):
        page = docs / file.relative_to(audit_dir(root)).with_suffix(".md")
        notebook = page.with_suffix(".ipynb")
        if not page.is_file() and not notebook.is_file():
            found.append(f"{file.relative_to(root)}: audits a page that does not exist")
    return found


def main() -> int:
    found = problems()
    for line in found:
        print(line)
    print(f"audit: {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
