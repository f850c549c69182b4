"""MkDocs hook: a translated page older than its original says so at the top.

A page ``x.zh.md`` last changed in git before ``x.md`` may miss what changed since in the
English page; the built Chinese page then opens with a notice that links to the English page.
``python -m tools.parity`` lists the same pages as warnings (``parity.outdated_translations``).
"""

from __future__ import annotations

import re
from pathlib import Path

from tools import history, layout

NOTICE = {
    "zh": (
        '!!! warning outdated-translation "译文可能已过时"\n'
        "    英文版最近一次改动在 {original}，晚于这篇译文（{translation}），译文可能没有跟上。"
        '内容如有出入，请以<a href="{href}" hreflang="en">英文版</a>为准。\n'
    ),
}


def notice_for(translation: Path, record: history.History, url: str) -> str | None:
    """The notice for a translated page at site address ``url``, or None if it is current."""
    lang = layout.language_of(translation)
    original = layout.in_language(translation, layout.DEFAULT_LANGUAGE)
    if lang not in NOTICE or not original.exists():
        return None
    changed, original_changed = record.last_change(translation), record.last_change(original)
    if changed >= original_changed:
        return None
    # the original's address, relative to this page: zh/chapters/x/ -> ../../../chapters/x/
    href = "../" * url.count("/") + url.removeprefix(f"{lang}/")
    return NOTICE[lang].format(
        original=history.day(original_changed), translation=history.day(changed), href=href or "./"
    )


_history: dict[str, history.History | None] = {"current": None}


def on_config(config, **kwargs):
    root = history.repository_root(Path(config.config_file_path).resolve().parent)
    _history["current"] = history.History(root) if root else None
    return config


def on_page_markdown(markdown: str, page, config, files, **kwargs) -> str:
    translation = Path(config.docs_dir) / page.file.src_uri
    record = _history["current"]
    if record is None or layout.language_of(translation) == layout.DEFAULT_LANGUAGE:
        return markdown
    notice = notice_for(translation, record, page.url)
    if notice is None:
        return markdown
    # after the page title if there is one, so the title stays first
    title = re.search(r"^# .*\n", markdown, flags=re.MULTILINE)
    at = title.end() if title else 0
    return markdown[:at] + "\n" + notice + "\n" + markdown[at:]
