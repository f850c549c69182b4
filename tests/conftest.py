"""Shared test set-up: deterministic plotting, the tests' own modules on the path, and the
code-block summary printed at the end of every run."""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, str(Path(__file__).resolve().parent))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    stats = sys.modules.get("test_codeblocks")
    if stats is None:
        return
    ran, skipped = stats.STATS["ran"], stats.STATS["skipped"]
    terminalreporter.section("code blocks on the pages")
    terminalreporter.write_line(f"{ran} code blocks ran, {len(skipped)} skipped")
    for line in skipped:
        terminalreporter.write_line(f"  skipped {line}")
