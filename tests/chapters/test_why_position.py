"""Claims of chapter 1 "Why position information?" beyond its printed output."""

from __future__ import annotations

import runpy

import pytest
import torch

from tools import layout

CHAPTER = layout.find_chapter("why-position")


@pytest.fixture(scope="module")
def snippet() -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / "permutation.py"), run_name="snippet")


@pytest.mark.parametrize("seed", range(3))
def test_attention_without_positions_only_reorders_its_output(snippet, seed: int) -> None:
    """Attention(PX) = P Attention(X) for every permutation P, with distinct random tokens."""
    torch.manual_seed(seed)
    x = torch.randn(6, snippet["dim"])
    perm = torch.randperm(6)
    attend = snippet["self_attention"]
    torch.testing.assert_close(attend(x[perm]), attend(x)[perm], atol=1e-6, rtol=0)


def test_a_causal_mask_alone_already_breaks_the_symmetry(snippet) -> None:
    """The chapter's causal-mask section: with a mask, the first token sees only itself, so a
    reordering changes what the rows are, not only their order."""
    torch.manual_seed(0)
    x = torch.randn(5, snippet["dim"])
    perm = torch.tensor([3, 0, 4, 1, 2])
    attend = snippet["self_attention"]
    assert not torch.allclose(attend(x[perm], causal=True), attend(x, causal=True)[perm], atol=1e-4)


def test_position_makes_the_two_sentences_differ(snippet) -> None:
    """Bag of words: "猫抓老鼠" and "老鼠抓猫" pool to the same vector without
    positions, and to different vectors once positions are added (sinusoidal or learned)."""
    first, second = "猫抓老鼠", "老鼠抓猫"  # cat catches mouse, mouse catches cat
    encode, with_position = snippet["encode"], snippet["encode_with_position"]
    torch.testing.assert_close(encode(first), encode(second), atol=1e-6, rtol=0)
    assert not torch.allclose(with_position(first), with_position(second), atol=1e-3)
    learned = snippet["encode_with_learned"]
    assert not torch.allclose(learned(first), learned(second), atol=1e-3)
