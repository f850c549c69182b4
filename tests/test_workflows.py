"""The GitHub workflows are valid and safe, and the entry points say what the README says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
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
