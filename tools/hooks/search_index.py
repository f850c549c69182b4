"""MkDocs hook: a smaller search index, without code listings or the zh API reference.

Pages load the index (both languages) when the reader reaches for search; at 700 kB it
competed with the page itself on a slow connection. Two thirds of it were code listings;
readers search for ideas and names, and names stay findable in the prose, the headings and
the API reference, whose docstrings are English in both languages (so the zh copy is a
duplicate). The JSON is also written as UTF-8 instead of \\u escapes (6 bytes per Chinese
character).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from mkdocs.plugins import event_priority

_CODE_LISTING = re.compile(r"<pre\b.*?</pre>", re.DOTALL)


def slim_search_index(site_dir: Path) -> None:
    index_file = site_dir / "search" / "search_index.json"
    if not index_file.exists():
        return
    index = json.loads(index_file.read_text(encoding="utf-8"))
    docs = index["docs"]
    index["docs"] = [doc for doc in docs if not doc["location"].startswith("zh/reference/")]
    for doc in index["docs"]:
        doc["text"] = _CODE_LISTING.sub(" ", doc["text"])
    index_file.write_text(
        json.dumps(index, ensure_ascii=False, separators=(",", ":")), encoding="utf-8"
    )


@event_priority(-200)  # after mkdocs-static-i18n (-100) has merged both languages' index
def on_post_build(config, **kwargs) -> None:
    slim_search_index(Path(config.site_dir))
