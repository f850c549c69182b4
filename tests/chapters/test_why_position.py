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
    first, second = ["猫", "抓", "老鼠"], ["老鼠", "抓", "猫"]  # cat catches mouse, and back
    encode, with_position = snippet["encode"], snippet["encode_with_position"]
    torch.testing.assert_close(encode(first), encode(second), atol=1e-6, rtol=0)
    assert not torch.allclose(with_position(first), with_position(second), atol=1e-3)
    learned = snippet["encode_with_learned"]
    assert not torch.allclose(learned(first), learned(second), atol=1e-3)


@pytest.mark.parametrize(("length", "seed"), [(2, 0), (9, 1), (40, 2)])
def test_a_causal_head_counts_positions_whatever_the_tokens(
    snippet, length: int, seed: int
) -> None:
    """#causal-mask (Kazemnejad et al., Theorem 1): with equal scores and a value that only
    <bos> has, token t of a causal head outputs 1/(t + 1), for any tokens after <bos> and in
    any order; without the mask every token outputs the same 1/length."""
    head, dim = snippet["counting_head"], snippet["dim"]
    torch.manual_seed(seed)
    words = torch.randn(length - 1, dim)
    words[:, 0] = 0.0
    bos = torch.zeros(1, dim)
    bos[0, 0] = 1.0
    expected = 1.0 / torch.arange(1, length + 1, dtype=torch.float32)
    for order in (torch.arange(length - 1), torch.randperm(length - 1)):
        h = torch.cat((bos, words[order]))
        torch.testing.assert_close(head(h, causal=True), expected)
    unmasked = head(torch.cat((bos, words)), causal=False)
    torch.testing.assert_close(unmasked, torch.full((length,), 1.0 / length))
