"""MkDocs hook: under every page, the date it last changed (from git, tools/history.py).

A page's date is the newest of the page itself and the files it includes (``--8<--``), since a
change to a snippet changes what the page shows. The date goes into
``page.meta["git_revision_date"]`` (``YYYY-MM-DD``), which
``overrides/partials/source-file.html`` shows next to the edit link. Without git, no date.

Note for CI: a shallow clone (``fetch-depth: 1``) gives every file the date of its one commit;
deploy from a full clone to get real dates.
"""

from __future__ import annotations

from pathlib import Path

from tools import history, layout

_history: dict[str, history.History | None] = {"current": None}


def page_sources(page_file: Path, root: Path) -> list[Path]:
    """The page and the files it includes that exist in the repository."""
    sources = [page_file]
    if page_file.suffix == ".md":
        for include in layout.includes(page_file.read_text(encoding="utf-8")):
            path = (root / include.path).resolve()
            if path.is_file() and path.is_relative_to(root.resolve()):
                sources.append(path)
    return sources


def page_date(page_file: Path, record: history.History) -> str | None:
    """``YYYY-MM-DD`` of the page's last change, or None without git."""
    if not record.known:
        return None
    return history.day(record.last_change_of(page_sources(page_file, record.root)))


def on_config(config, **kwargs):
    root = history.repository_root(Path(config.config_file_path).resolve().parent)
    _history["current"] = history.History(root) if root else None
    return config


def on_page_context(context, page, config, nav, **kwargs):
    record = _history["current"]
    if record is None or page.file.abs_src_path is None:
        return context
    source = Path(page.file.abs_src_path).resolve()
    if not source.is_relative_to(record.root.resolve()):
        return context
    date = page_date(source, record)
    if date is not None:
        page.meta["git_revision_date"] = date
    return context
