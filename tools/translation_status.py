"""MkDocs hook: a translated page older than its original says so at the top.

A page ``x.zh.md`` last changed in git before ``x.md`` may miss what changed since in the
English page; the built Chinese page then opens with an "outdated translation" notice that
links to the English page. Dates come from git (tools/parity.py, ``last_change``: a file with
uncommitted changes counts as changed now); ``python tools/parity.py`` lists the same pages
as warnings.
"""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import parity  # noqa: E402

NOTICE = {
    "zh": (
        '!!! warning outdated-translation "译文可能已过时"\n'
        "    英文原文在这篇译文之后又有改动(英文版 {original},中文版 {translation})。"
        '内容如有出入,以<a href="{href}" hreflang="en">英文版</a>为准。\n'
    ),
}


def _date(stamp: int) -> str:
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d")


def on_page_markdown(markdown: str, page, config, files, **kwargs) -> str:
    src = page.file.src_uri
    lang = next((lang for lang in parity.LANGS if src.endswith(f".{lang}.md")), None)
    if lang is None or lang not in NOTICE:
        return markdown
    docs = Path(config.docs_dir)
    translation = docs / src
    original = parity.twin_of(translation)
    if not original.exists():
        return markdown
    changed, original_changed = parity.last_change(translation), parity.last_change(original)
    if changed >= original_changed:
        return markdown
    # the original's address, relative to this page: zh/chapters/x/ -> ../../../chapters/x/
    url = page.url
    href = "../" * url.count("/") + url.removeprefix(f"{lang}/")
    notice = NOTICE[lang].format(
        original=_date(original_changed), translation=_date(changed), href=href or "./"
    )
    # after the page title if there is one, so the title stays first
    title = re.search(r"^# .*\n", markdown, flags=re.MULTILINE)
    at = title.end() if title else 0
    return markdown[:at] + "\n" + notice + "\n" + markdown[at:]
