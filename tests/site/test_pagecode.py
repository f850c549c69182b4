"""The code-block reader finds every kind of block a page can show, as the build renders it."""

from __future__ import annotations

import pytest

from tests.site import pagecode

PAGE = """# Page

```python title="snippets/why_position/permutation.py"
--8<-- "snippets/why_position/permutation.py:equivariance"
```

<!--pytest-codeblocks:expected-output-->
```text
True
```

!!! note "In an admonition"

    ```python
    print("admonition")
    ```

=== "Tab one"

    ```py
    print("tab")
    ```

<!--pytest.mark.skip(reason="needs a GPU")-->
```python
import torch; torch.zeros(1, device="cuda")
```

```text
not code
```
"""


def _blocks(tmp_path, monkeypatch, text):
    monkeypatch.setattr(pagecode, "DOCS", tmp_path)
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    return pagecode.page_blocks(page)


def test_every_kind_of_block_is_found(tmp_path, monkeypatch) -> None:
    blocks = _blocks(tmp_path, monkeypatch, PAGE)
    codes = [b.block.code for b in blocks]
    assert len(blocks) == 4  # the snippet, the admonition, the tab, the skipped one; not text
    assert "scaled_dot_product_attention" in codes[0] and "--8<--" not in codes[0]
    assert blocks[0].block.expected_output == "True\n"
    assert codes[1] == 'print("admonition")\n' and codes[2] == 'print("tab")\n'
    assert [b.skip_reason for b in blocks] == [None, None, None, "needs a GPU"]


def test_a_skip_without_reason_is_refused(tmp_path, monkeypatch) -> None:
    blocks = _blocks(tmp_path, monkeypatch, "<!--pytest.mark.skip-->\n```python\npass\n```\n")
    with pytest.raises(ValueError, match="needs reason"):
        _ = blocks[0].skip_reason


def test_a_missing_snippet_fails(tmp_path, monkeypatch) -> None:
    with pytest.raises(Exception, match="nope"):
        _blocks(tmp_path, monkeypatch, '```python\n--8<-- "snippets/nope.py"\n```\n')
