"""Every code block a reader sees, in both languages, runs here as the reader would run it.

Blocks of one page share one namespace and run in page order, as if pasted one after the
other into a fresh Python (``__name__ == "__main__"``, a scratch working directory). Where
the page shows output under a block, the printed output must match it exactly.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.site.pagecode import ROOT, PageBlock, page_blocks, pages


def _collect() -> tuple[list[PageBlock], dict[str, str]]:
    """All runnable blocks; a page that cannot be read (a missing snippet, a bad marker)
    becomes one failing test of its own instead of stopping the collection of every page."""
    blocks, broken = [], {}
    for page in pages():
        try:
            blocks += page_blocks(page)
        except Exception as err:  # noqa: BLE001 - reported by test_page_can_be_read
            broken[page.relative_to(ROOT / "docs").as_posix()] = f"{type(err).__name__}: {err}"
    return blocks, broken


BLOCKS, BROKEN_PAGES = _collect()
# what a reader needs besides the standard library: posenc and what it is shown with, and
# on pages that show committed results, the repository's loaders of those results
READER_PACKAGES = {"posenc", "torch", "numpy", "matplotlib"}
RESULT_LOADERS = {"benchmarks", "experiments"}
# figure scripts save through the site's one figure helper (the CJK fallback font, a file
# per language); like the result loaders, it comes with the repository
FIGURE_HELPER = "snippets.figures"

STATS = {"ran": 0, "skipped": []}  # read by conftest.py's summary


class _PageSession:
    """The namespace of one page, advanced block by block."""

    def __init__(self, workdir: Path) -> None:
        self.namespace: dict = {"__name__": "__main__"}
        self.done = -1
        self.failed_at: str | None = None
        self.workdir = workdir


_sessions: dict[str, _PageSession] = {}


def _run(pb: PageBlock, session: _PageSession) -> str:
    code = pb.block.code
    if pb.block.syntax == "bash":
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", code],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode:
            raise AssertionError(f"{pb.id}: shell block failed\n{code}\n{done.stderr}")
        return done.stdout
    out = io.StringIO()
    old = Path.cwd()
    os.chdir(session.workdir)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, pb.id, "exec"), session.namespace)
    finally:
        os.chdir(old)
        import matplotlib.pyplot as plt

        plt.close("all")
    return out.getvalue()


def _normalise(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").split("\n"))


def _imports(code: str) -> set[str]:
    """The modules ``code`` imports, by full name."""
    names = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("pb", BLOCKS, ids=[b.id for b in BLOCKS])
def test_code_block(pb: PageBlock, tmp_path_factory: pytest.TempPathFactory) -> None:
    reason = pb.skip_reason
    if reason is not None:
        STATS["skipped"].append(f"{pb.id}: {reason}")
        pytest.skip(reason)
    session = _sessions.setdefault(pb.page, _PageSession(tmp_path_factory.mktemp("page")))
    if pb.block.syntax == "python":
        allowed = READER_PACKAGES | RESULT_LOADERS | set(sys.stdlib_module_names)
        foreign = {
            name
            for name in _imports(pb.block.code) - {FIGURE_HELPER}
            if name.split(".")[0] not in allowed
        }
        assert not foreign, f"{pb.id} imports {foreign}: a reader has only posenc installed"
    # run the page's earlier blocks first (when this block was selected alone)
    for earlier in [b for b in BLOCKS if b.page == pb.page and session.done < b.index < pb.index]:
        if earlier.skip_reason is None:
            _run(earlier, session)
        session.done = earlier.index
    if session.failed_at:
        pytest.fail(f"an earlier block of this page failed ({session.failed_at})")
    try:
        output = _run(pb, session)
    except BaseException:
        session.failed_at = pb.id
        raise
    finally:
        session.done = pb.index
    STATS["ran"] += 1
    if pb.block.expected_output is not None:
        assert _normalise(output) == _normalise(pb.block.expected_output), (
            f"{pb.id}: the page shows\n{pb.block.expected_output}\nbut the code prints\n{output}"
        )


@pytest.mark.parametrize("page", sorted(BROKEN_PAGES) or ["(none)"])
def test_page_can_be_read(page: str) -> None:
    assert page not in BROKEN_PAGES, BROKEN_PAGES.get(page)
