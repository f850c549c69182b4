"""T5 buckets and bias against transformers; Shaw et al.'s clipped embeddings."""

import pytest
import torch
from transformers import T5Config
from transformers.models.t5.modeling_t5 import T5Attention

import posenc


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("num_buckets", "max_distance"), [(32, 128), (8, 20), (64, 512)])
def test_buckets_match_t5(bidirectional, num_buckets, max_distance):
    relative = torch.arange(-1500, 1500)
    expected = T5Attention._relative_position_bucket(
        relative, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    actual = posenc.t5_relative_bucket(
        relative, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    assert torch.equal(actual, expected)


def test_bucket_examples():
    buckets = posenc.t5_relative_bucket(torch.tensor([-200, -8, -1, 0, 1, 8, 200]))
    assert buckets.tolist() == [15, 8, 1, 0, 17, 24, 31]


@pytest.mark.parametrize(("is_decoder", "offset"), [(False, 0), (True, 0), (True, 9)])
def test_bias_matches_t5_compute_bias(is_decoder, offset):
    torch.manual_seed(0)
    config = T5Config(d_model=32, d_kv=8, num_heads=4, is_decoder=is_decoder)
    reference = T5Attention(config, has_relative_attention_bias=True)
    ours = posenc.T5RelativeBias(4, bidirectional=not is_decoder)
    with torch.no_grad():
        ours.weight.copy_(reference.relative_attention_bias.weight)
        expected = reference.compute_bias(3, offset + 3, past_seen_tokens=offset)  # (1, h, q, k)
        by_offset = ours(3, offset=offset)
        by_k_len = ours(3, offset + 3)  # the same queries: the last 3 of offset + 3 keys
    assert by_offset.shape == (4, 3, offset + 3)  # (heads, q_len, k_len), as ALiBi's bias
    torch.testing.assert_close(by_offset, expected[0], atol=0, rtol=0)
    torch.testing.assert_close(by_k_len, expected[0], atol=0, rtol=0)


def test_relative_positions_are_key_minus_query():
    assert posenc.relative_positions(2, 3, offset=1).tolist() == [[-1, 0, 1], [-2, -1, 0]]
    assert posenc.relative_positions(2, 3, offset=0).tolist() == [[0, 1, 2], [-1, 0, 1]]


@pytest.mark.parametrize(
    ("k_len", "offset", "expected"),
    [
        (None, None, (3, 3, 0)),  # nothing given: square, from position 0
        (7, None, (3, 7, 4)),  # k_len given: the queries are the last 3 keys
        (None, 4, (3, 7, 4)),  # offset given: keys up to the last query
        (5, 1, (3, 5, 1)),  # both given: used as they are
    ],
)
def test_every_module_follows_one_rule_for_k_len_and_offset(k_len, offset, expected):
    q_len, want_k, want_offset = expected
    r = posenc.relative_positions(q_len, k_len, offset=offset)
    assert r.shape == (q_len, want_k) and r[0, want_offset] == 0  # query 0 at key want_offset
    t5, shaw = posenc.T5RelativeBias(2), posenc.ShawRelativeEmbedding(2, 4)
    alibi = posenc.alibi_bias(2, q_len, k_len, offset=offset)
    with torch.no_grad():
        t5_bias, shaw_table = t5(q_len, k_len, offset=offset), shaw(q_len, k_len, offset=offset)
    buckets = posenc.t5_relative_bucket(r)
    torch.testing.assert_close(t5_bias, t5.weight[buckets].permute(2, 0, 1), atol=0, rtol=0)
    torch.testing.assert_close(shaw_table, shaw.weight[r.clamp(-2, 2) + 2], atol=0, rtol=0)
    torch.testing.assert_close(alibi, posenc.alibi_slopes(2)[:, None, None] * r, atol=0, rtol=0)


def test_shaw_embeddings_are_clipped():
    shaw = posenc.ShawRelativeEmbedding(2, 4)
    table = shaw(5)
    assert table.shape == (5, 5, 4)
    torch.testing.assert_close(table[0, 4], shaw.weight[4])  # j - i = 4 clipped to +2 -> row 4
    torch.testing.assert_close(table[4, 0], shaw.weight[0])  # -4 clipped to -2 -> row 0
    torch.testing.assert_close(table[2, 3], shaw.weight[3])  # +1 -> row 3
    assert shaw(1, 6, offset=5).shape == (1, 6, 4)
    torch.testing.assert_close(shaw(1, 6), shaw(1, offset=5))  # the last of 6 keys


@pytest.mark.parametrize(("bidirectional", "first"), [(True, 91), (False, 113)])
def test_last_bucket_starts_before_max_distance(bidirectional, first):
    # The docstring's numbers for T5's 32 buckets and max_distance 128, read off transformers.
    distance = torch.arange(300)
    relative = distance if bidirectional else -distance  # keys after (bi) or before the query
    buckets = T5Attention._relative_position_bucket(relative, bidirectional=bidirectional)
    last = buckets.max()
    assert int((buckets == last).nonzero()[0]) == first
    assert (posenc.t5_relative_bucket(relative, bidirectional=bidirectional)[128:] == last).all()
