"""Tests of the claims in chapter 13 "RoPE beyond one dimension" (docs/chapters/13-multi-axis-rope.md).

Numbers printed on the page are already checked by tests/site/test_codeblocks.py. Every other claim
in the prose ("the bias grows linearly with distance", "the norm does not change") needs a
test here that would fail if the claim were false.

Run only this chapter's tests: make test-chapter NAME=multi-axis-rope
"""

import pytest


def test_claims_of_chapter_multi_axis_rope() -> None:
    pytest.fail(
        "write the tests for chapter multi-axis-rope: one test per claim in the prose of "
        "docs/chapters/13-multi-axis-rope.md (and .zh.md) that no printed output shows, "
        "in tests/chapters/test_multi_axis_rope.py; then delete this test (CONTRIBUTING.md, step 7)"
    )
