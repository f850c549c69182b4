"""MkDocs hook: draw every figure from ``snippets/*/figure_*.py`` (tools/figures.py) before
mkdocs lists docs/, so the SVGs are ordinary files and a broken figure link fails --strict."""

from __future__ import annotations

from pathlib import Path

from tools import figures


def on_pre_build(config, **kwargs) -> None:
    figures.build(root=Path(config.config_file_path).resolve().parent)
