"""MkDocs hook: the source code under each API entry without a link target on every line.

mkdocstrings shows a function's source with line numbers, and pymdownx makes each number a
link to an anchor placed before its line (``<a id="posenc.x--source--__codelineno-0-58"
name=...>``). Nothing links to those anchors, and on the API pages they were a third of the
HTML (the RoPE module's page: 310 kB, 200 kB without them) and about a fifth of the
elements. The numbers stay, as text; the code is unchanged.
"""

from __future__ import annotations

import re

_LINE_ANCHOR = re.compile(r'<a id="([^"]+--source--__codelineno-[\d-]+)" name="\1"></a>')
_NUMBER_LINK = re.compile(r'<a href="#[^"]+--source--__codelineno-[\d-]+">( *\d+)</a>')


def plain_source_lines(output: str) -> str:
    if "--source--__codelineno-" not in output:
        return output
    return _NUMBER_LINK.sub(r"\1", _LINE_ANCHOR.sub("", output))


def on_post_page(output: str, page, config, **kwargs) -> str:
    return plain_source_lines(output)
