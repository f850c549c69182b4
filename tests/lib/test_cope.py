"""CoPE against the paper's listing and a rewrite of the authors' released layer
(facebookresearch/RAM), and what its positions count."""

import math

import pytest
import torch

import posenc
from tests.lib.references import cope_listing_term, cope_released_attention


def _causal_logits(q, k):
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    q_len, k_len = scores.shape[-2:]
    mask = torch.ones(q_len, k_len).tril(k_len - q_len)  # the queries are the last keys
    return scores + mask.log(), mask


@pytest.mark.parametrize(
    ("batch", "heads", "q_len", "k_len", "head_dim", "npos"),
    [(2, 3, 7, 7, 8, 8), (1, 2, 12, 12, 16, 5), (2, 1, 1, 9, 8, 10), (1, 4, 4, 10, 32, 11)],
)
def test_term_matches_the_papers_listing(batch, heads, q_len, k_len, head_dim, npos):
    torch.manual_seed(q_len * k_len)
    q = torch.randn(batch, heads, q_len, head_dim)
    k = torch.randn(batch, heads, k_len, head_dim)
    module = posenc.CoPE(head_dim, npos)
    with torch.no_grad():
        module.pos_emb.normal_()
    scores, _ = _causal_logits(q, k)  # masked logits, as the listing's SelfAttn passes them
    expected = cope_listing_term(q, scores, module.pos_emb[None], npos)
    torch.testing.assert_close(module(q, scores), expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize(("seq", "head_dim", "npos"), [(6, 8, 7), (15, 16, 16), (15, 16, 4)])
def test_attention_matches_the_released_layer(seq, head_dim, npos):
    torch.manual_seed(seq + npos)
    batch = 3  # batch x heads, flattened as the released layer expects
    q, k, v = (torch.randn(batch, seq, head_dim) for _ in range(3))
    module = posenc.CoPE(head_dim, npos)
    with torch.no_grad():
        module.pos_emb.normal_()
    mask = torch.ones(seq, seq).tril()
    expected = cope_released_attention(q, k, v, mask, module.pos_emb[None], npos)
    # posenc: the term on the divided logits, divided again, then the causal attention
    q4, k4, v4 = q[:, None], k[:, None], v[:, None]
    scores = q4 @ k4.transpose(-1, -2) / math.sqrt(head_dim)
    bias = module(q4, scores) / math.sqrt(head_dim)
    logits = (scores + bias).masked_fill(mask == 0, float("-inf"))
    actual = torch.softmax(logits, dim=-1) @ v4
    torch.testing.assert_close(actual[:, 0], expected, atol=1e-5, rtol=1e-5)
    # ... which posenc.attention computes from the same bias
    via_attention = posenc.attention(q4, k4, v4, bias=bias, causal=True)
    torch.testing.assert_close(via_attention[:, 0], expected, atol=1e-5, rtol=1e-5)


def test_all_gates_open_count_every_key_from_j_to_i():
    scores = torch.full((2, 3, 6, 6), 40.0)  # sigmoid(40) is 1.0 in float32
    positions = posenc.cope_positions(scores)
    i, j = torch.arange(6)[:, None], torch.arange(6)[None, :]
    expected = torch.where(j <= i, i - j + 1, 0).float()
    assert torch.equal(positions, expected.expand_as(positions))
    # with fewer queries than keys, row r is query k_len - q_len + r
    assert torch.equal(posenc.cope_positions(scores[..., 4:, :]), positions[..., 4:, :])


def test_positions_count_only_the_keys_whose_gate_is_open():
    # Gates open on "sentence ends" only: the position is the number of them between.
    ends = torch.tensor([0, 0, 1, 0, 1, 0, 0, 1, 0, 0], dtype=torch.bool)
    scores = torch.where(ends, 40.0, -40.0).expand(10, 10)  # sigmoid(-40) ~ 4e-18
    positions = posenc.cope_positions(scores)
    for i in range(10):
        for j in range(i + 1):
            assert float(positions[i, j]) == pytest.approx(float(ends[j : i + 1].sum()), abs=1e-6)


def test_positions_never_decrease_towards_earlier_keys():
    torch.manual_seed(0)
    scores = torch.randn(2, 4, 9, 13) * 3
    for causal in (True, False):
        positions = posenc.cope_positions(scores, causal=causal)
        assert (positions.diff(dim=-1) <= 0).all()  # p_ij >= p_i,j+1
        assert (positions >= 0).all()
    causal = posenc.cope_positions(scores)  # 9 queries, the last of 13 keys: offset 4
    rows, own = torch.arange(9), torch.arange(4, 13)
    torch.testing.assert_close(causal[..., rows, own], torch.sigmoid(scores[..., rows, own]))
    after = torch.ones(9, 13, dtype=torch.bool).triu(4 + 1)  # keys after each query
    assert (causal[..., after] == 0).all()


def test_interpolation_between_integer_positions():
    pos_emb = torch.tensor([[0.0, 10.0, 20.0, 30.0]])  # head_dim 1: q·e[n] = 10 n for q = 1
    q = torch.ones(1, 1)
    positions = torch.tensor([[0.0, 0.25, 1.0, 2.5, 3.0, 7.0]])  # 7 is clamped to 3
    term = posenc.cope_logits(q, positions, pos_emb)
    assert term.tolist() == [[0.0, 2.5, 10.0, 25.0, 30.0, 30.0]]


def test_gradients_reach_the_table_and_the_logits():
    torch.manual_seed(1)
    module = posenc.CoPE(8, 6)
    with torch.no_grad():
        module.pos_emb.normal_()
    q = torch.randn(1, 2, 5, 8)
    scores = torch.randn(1, 2, 5, 5, requires_grad=True)
    module(q, scores).sum().backward()
    assert module.pos_emb.grad.abs().sum() > 0
    assert scores.grad.abs().sum() > 0  # through the interpolation weights


def test_half_precision_counts_in_float32():
    scores = torch.full((1, 600), 40.0, dtype=torch.bfloat16)
    positions = posenc.cope_positions(scores, causal=False)
    assert positions.dtype == torch.float32 and positions[0, 0] == 600
    assert repr(posenc.CoPE(8, 6)) == "CoPE(head_dim=8, num_positions=6)"
    assert posenc.CoPE(8, 6).pos_emb.abs().sum() == 0  # zeros, as released
