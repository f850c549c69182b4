"""Tests of the claims in chapter 14:
RoPE in compressed attention: MLA
(docs/chapters/14-decoupled-rope.md and its Chinese twin).

Numbers printed on the page are already checked by tests/site/test_codeblocks.py. Every other
claim in the prose ("the bias grows linearly with distance", "the norm does not change") needs
a test here that would fail if the claim were false.

Run only this chapter's tests: make test-chapter NAME=decoupled-rope
"""

import pytest


def test_claims_of_chapter_decoupled_rope() -> None:
    pytest.fail(
        "write the tests for chapter decoupled-rope: "
        "one test per claim in the prose of its pages that no printed output shows, "
        "in tests/chapters/test_decoupled_rope.py; "
        "then delete this test (CONTRIBUTING.md, step 5)"
    )
