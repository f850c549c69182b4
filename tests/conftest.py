"""Shared test set-up: deterministic plotting, and the code-block summary printed at the end of
every run.

The tests are packages (``tests.lib``, ``tests.chapters``, ``tests.site``, ``tests.tools``,
``tests.browser``) and import the build tools as ``tools.*``: the repository root is on the
virtual environment's path (``make install`` writes a .pth file), so nothing edits sys.path.
"""

from __future__ import annotations

import os
import sys

import pytest
import torch

os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(autouse=True)
def _autograd_left_on():
    """A snippet run in this process must not switch autograd off for the tests after it
    (a global ``torch.set_grad_enabled(False)`` once broke every gradient test that followed)."""
    yield
    if not torch.is_grad_enabled():
        torch.set_grad_enabled(True)
        pytest.fail("autograd was left switched off: use no_grad()/requires_grad_(False) locally")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    stats = sys.modules.get("tests.site.test_codeblocks")
    if stats is None:
        return
    ran, skipped = stats.STATS["ran"], stats.STATS["skipped"]
    terminalreporter.section("code blocks on the pages")
    terminalreporter.write_line(f"{ran} code blocks ran, {len(skipped)} skipped")
    for line in skipped:
        terminalreporter.write_line(f"  skipped {line}")
