"""MkDocs hook: the explorer's "your model" panel gets posenc's released configs in the page.

A page marks the place with ``<!-- released-configs -->``; the build puts there one hidden
``<div id="pe-released-configs">`` whose ``data-configs`` holds, as JSON, for every file of
``src/posenc/configs/`` (what ``posenc.released_configs()`` lists), its name, the model, the
Hub repository, the link it was read from and the config's fields. The panel reads them when
it is set up (docs/assets/javascripts/explorer.js); nothing is fetched, nothing generated is
committed. tests/browser/test_explorer_model.py checks the page's copy against posenc's.

The files are read as JSON, without importing posenc (and torch) into the build.
"""

from __future__ import annotations

import html
import json

from tools.layout import ROOT

MARKER = "<!-- released-configs -->"
CONFIGS = ROOT / "src" / "posenc" / "configs"
KEYS = ("model", "hub", "read", "revision", "config")


def released() -> list[dict]:
    """Every released config, sorted by name as ``posenc.released_configs()`` sorts them."""
    entries = []
    for path in sorted(CONFIGS.glob("*.json"), key=lambda p: p.name):
        data = json.loads(path.read_text(encoding="utf-8"))
        entries.append({"name": path.name.removesuffix(".json"), **{k: data[k] for k in KEYS}})
    return entries


def element() -> str:
    """A hidden element holding the list as JSON in an attribute. Not a ``<script
    type="application/json">``: material's instant navigation drops those from the page it
    swaps in."""
    text = html.escape(json.dumps(released(), ensure_ascii=False, separators=(",", ":")))
    return f'<div id="pe-released-configs" hidden data-configs="{text}"></div>'


def on_page_content(page_html: str, page, config, files, **kwargs) -> str:
    if MARKER not in page_html:
        return page_html
    return page_html.replace(MARKER, element())
