"""ruff, as `make lint` and pre-commit run it: whoever skipped pre-commit finds out here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PATHS = ["src", "tests", "tools", "snippets", "benchmarks", "experiments"]


@pytest.mark.parametrize(
    "command", [["check"], ["format", "--check"]], ids=["ruff check", "ruff format"]
)
def test_ruff_is_clean(command: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", *command, *PATHS],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
