"""The GitHub workflows are valid and safe, the entry points say what the README says, and
pre-commit runs what CI runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tools.layout import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
BIN = Path(sys.executable).parent


def test_there_are_workflows() -> None:
    assert WORKFLOWS


def test_workflows_match_the_github_schema() -> None:
    done = subprocess.run(
        [
            BIN / "check-jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            *map(str, WORKFLOWS),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_zizmor_reports_no_findings() -> None:
    done = subprocess.run(
        [BIN / "zizmor", "--offline", "--no-progress", str(ROOT / ".github")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=[w.name for w in WORKFLOWS])
def test_actions_are_pinned_to_commits(workflow: Path) -> None:
    for action in re.findall(r"uses:\s*([^\s#]+)", workflow.read_text()):
        if action.startswith("./"):
            continue
        assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", action), f"not pinned: {action}"


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test" in readme and "make serve" in readme
    assert re.search(r"^make test\b", ci, re.MULTILINE)


def _make_target(name: str) -> tuple[list[str], list[str]]:
    """(prerequisites, recipe lines) of a Makefile target."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    found = re.search(rf"^{name}:([^#\n]*).*\n((?:\t.*\n)*)", makefile, re.MULTILINE)
    assert found, f"Makefile has no {name} target"
    return found.group(1).split(), [line.strip() for line in found.group(2).splitlines()]


def test_pre_commit_runs_the_lint_that_make_test_runs() -> None:
    """One definition of the static checks: pre-commit calls `make lint`, `make test` (CI)
    runs it first, so the two cannot drift."""
    import yaml

    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    entries = [hook["entry"] for repo in config["repos"] for hook in repo["hooks"]]
    assert entries == ["make lint"]
    assert "lint" in _make_target("test")[0]
    assert _make_target("lint")[1], "make lint has no recipe"


def test_issue_templates_exist_in_both_languages() -> None:
    import yaml

    folder = ROOT / ".github" / "ISSUE_TEMPLATE"
    english = sorted(
        p for p in folder.glob("*.yml") if p.name != "config.yml" and ".zh." not in p.name
    )
    assert len(english) >= 3
    for form in english:
        twin = form.with_name(form.stem + ".zh.yml")
        assert twin.is_file(), f"{form.name} has no Chinese twin {twin.name}"
        ours, theirs = (yaml.safe_load(p.read_text(encoding="utf-8")) for p in (form, twin))
        ids = [[(b["type"], b.get("id")) for b in f["body"]] for f in (ours, theirs)]
        assert ids[0] == ids[1], f"{form.name} and {twin.name} ask for different fields"
        assert ours["labels"] == theirs["labels"]
