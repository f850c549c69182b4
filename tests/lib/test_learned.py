"""Learned absolute embeddings: addition, and a clear error past the table."""

import pytest
import torch
from transformers import GPT2Config, GPT2Model

import posenc


def test_adds_rows_of_the_table():
    torch.manual_seed(0)
    module = posenc.LearnedPositionalEmbedding(16, 4)
    x = torch.zeros(2, 5, 4)
    torch.testing.assert_close(module(x), module.weight[:5].expand(2, 5, 4))
    torch.testing.assert_close(module(x, offset=11), module.weight[11:].expand(2, 5, 4))
    torch.testing.assert_close(
        module(x, torch.tensor([[0, 0, 0, 1, 2]] * 2))[:, 3:], module(x[:, :2], offset=1)
    )


def test_past_the_table_raises_naming_the_limit():
    module = posenc.LearnedPositionalEmbedding(16, 4)
    with pytest.raises(ValueError, match=r"max_positions \(16\)"):
        module(torch.zeros(1, 17, 4))
    with pytest.raises(ValueError, match=r"max_positions \(16\)"):
        module(torch.zeros(1, 2, 4), offset=15)
    with pytest.raises(ValueError, match=r"max_positions \(16\).*16"):
        module(torch.zeros(1, 2, 4), torch.tensor([3, 16]))


def test_gradients_reach_the_table():
    module = posenc.LearnedPositionalEmbedding(8, 2)
    module(torch.zeros(1, 3, 2)).sum().backward()
    assert module.weight.grad[:3].eq(1).all() and module.weight.grad[3:].eq(0).all()


def test_table_is_initialised_like_hugging_faces_gpt2_wpe():
    # N(0, 0.02²): transformers' initializer_range for GPT-2's wpe (OpenAI's code used 0.01).
    torch.manual_seed(0)
    config = GPT2Config(n_positions=512, n_embd=64, n_layer=1, n_head=2, vocab_size=8)
    theirs = GPT2Model(config).wpe.weight
    ours = posenc.LearnedPositionalEmbedding(512, 64).weight
    assert config.initializer_range == 0.02
    for table in (theirs, ours):
        assert abs(table.std().item() - 0.02) < 5e-4 and abs(table.mean().item()) < 5e-4
