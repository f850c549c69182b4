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

from tests import machine

os.environ.setdefault("MPLBACKEND", "Agg")
# Without a GPU, Triton kernels (posenc.rope_triton) run in Triton's interpreter on the CPU.
# It is read when a kernel is defined, so it is set before anything imports one.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")


DEVICES = [
    "cpu",
    pytest.param(
        "cuda",
        marks=[
            pytest.mark.gpu,
            pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here"),
        ],
    ),
]


@pytest.fixture(params=DEVICES)
def device(request) -> str:
    """Every device this machine has: the test runs on the CPU, and on CUDA when there is one
    (`pytest -m gpu` selects the CUDA runs)."""
    return request.param


@pytest.fixture(autouse=True)
def _machine_shared(request):
    """Every test but a speed measurement holds the machine lock shared (tests/machine.py)."""
    if request.node.get_closest_marker("alone_on_the_machine"):
        yield
        return
    with machine.shared(machine.run_folder(request)):
        yield


@pytest.fixture(autouse=True)
def _autograd_left_on():
    """A snippet run in this process must not switch autograd off for the tests after it
    (a global ``torch.set_grad_enabled(False)`` once broke every gradient test that followed)."""
    yield
    if not torch.is_grad_enabled():
        torch.set_grad_enabled(True)
        pytest.fail("autograd was left switched off: use no_grad()/requires_grad_(False) locally")


# `make test` runs the tests in two processes (pytest-xdist, --dist loadfile), which take
# whole files, in collection order, as each runs out of work. Lighthouse goes first: its
# measurements have the machine to themselves (tests/machine.py), so the other process waits
# for them and the rest is shared out after. Then the files that take longest, the browser
# files before the rest because they mostly wait on Chromium and overlap well with the
# CPU-bound files (seconds: their share of a 2-core run; `make test` prints the current
# durations at the end).
LONGEST_FIRST = (
    "tests/browser/test_lighthouse.py",  # ~180: 5 pages x 3 Lighthouse runs
    "tests/browser/test_browser_pages.py",  # ~100: every page
    "tests/browser/test_browser_navigation.py",  # ~40
    "tests/browser/test_explorer.py",  # ~20
    "tests/browser/test_explorer_model.py",  # ~50: every released config, picked and compared
    "tests/chapters/test_real_model_extrapolation.py",  # ~45: loads SmolLM2, quick profile
    "tests/site/test_snippets.py",  # ~40: every figure drawn again
    "tests/lib/test_attention.py",  # ~40: FlexAttention compiled
    "tests/site/test_codeblocks.py",  # ~40: every block of every page
    "tests/lib/test_rope_kernels.py",  # ~30: torch.compile
)


def pytest_collection_modifyitems(config, items):
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    stats = sys.modules.get("tests.site.test_codeblocks")
    if stats is None:
        return
    ran, skipped = stats.STATS["ran"], stats.STATS["skipped"]
    terminalreporter.section("code blocks on the pages")
    terminalreporter.write_line(f"{ran} code blocks ran, {len(skipped)} skipped")
    for line in skipped:
        terminalreporter.write_line(f"  skipped {line}")
