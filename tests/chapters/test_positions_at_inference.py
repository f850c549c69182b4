"""Tests of the claims in chapter 15 "Positions at inference time" (docs/chapters/15-positions-at-inference.md).

Numbers printed on the page are already checked by tests/site/test_codeblocks.py. Every other claim
in the prose ("the bias grows linearly with distance", "the norm does not change") needs a
test here that would fail if the claim were false.

Run only this chapter's tests: make test-chapter NAME=positions-at-inference
"""

import pytest


def test_claims_of_chapter_positions_at_inference() -> None:
    pytest.fail(
        "write the tests for chapter positions-at-inference: one test per claim in the prose of "
        "docs/chapters/15-positions-at-inference.md (and .zh.md) that no printed output shows, "
        "in tests/chapters/test_positions_at_inference.py; then delete this test (CONTRIBUTING.md, step 7)"
    )
