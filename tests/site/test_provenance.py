"""Provenance on the built pages: every snippet-drawn figure names the script that drew it,
and every page with code says which torch and Python it ran with: the ones running these
tests (make test builds and tests in one environment)."""

from __future__ import annotations

import platform
import re
from pathlib import Path

import pytest
import torch

from tools import layout

SITE = layout.site_dir()
pytestmark = pytest.mark.site

if not (SITE / "index.html").exists():
    pytest.skip(
        "site/ is not built: run `make build` (make test does it first)", allow_module_level=True
    )

CHAPTERS = sorted(p for p in SITE.rglob("chapters/*/index.html"))
IDS = [p.parent.relative_to(SITE).as_posix() for p in CHAPTERS]
_IMG = re.compile(r'<img\b[^>]*\bsrc="[^"]*figures/(?P<name>[^"/]+\.svg)"[^>]*>')


@pytest.mark.parametrize("page", CHAPTERS, ids=IDS)
def test_every_figure_names_the_script_that_drew_it(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    for match in _IMG.finditer(html):
        figure = re.search(
            re.escape(match.group(0)) + r'<figcaption>.*?<a href="([^"]+)"><code>([^<]+)</code>',
            html,
        )
        assert figure, f"{match['name']} has no caption naming its script"
        href, script = figure.groups()
        assert href.endswith(script) and (layout.ROOT / script).is_file()
        assert match["name"] in (layout.ROOT / script).read_text(encoding="utf-8") or match[
            "name"
        ].replace(".zh.svg", ".svg") in (layout.ROOT / script).read_text(encoding="utf-8")


@pytest.mark.parametrize("page", CHAPTERS, ids=IDS)
def test_pages_with_code_name_the_torch_the_tests_ran_with(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    expected = f"torch {torch.__version__}, Python {platform.python_version()}"
    assert expected in html, f"{page.parent.name}: the page does not say {expected!r}"
