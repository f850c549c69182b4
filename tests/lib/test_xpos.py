"""xPos against microsoft/torchscale's XPOS, and the properties its formula promises."""

import math

import pytest
import torch

import posenc
from tests.lib.references import torchscale_xpos


@pytest.mark.parametrize(
    ("batch", "heads", "kv_heads", "q_len", "k_len", "head_dim"),
    [
        (2, 3, 3, 7, 7, 8),  # training: as many queries as keys
        (1, 2, 2, 1, 9, 16),  # decoding: one query, odd number of keys
        (2, 4, 2, 5, 12, 32),  # a chunk of queries after a cache; grouped-query keys
        (1, 1, 1, 10, 10, 64),
    ],
)
def test_matches_torchscale(batch, heads, kv_heads, q_len, k_len, head_dim):
    torch.manual_seed(0)
    q = torch.randn(batch, heads, q_len, head_dim)
    k = torch.randn(batch, kv_heads, k_len, head_dim)
    q_out, k_out = posenc.XPos(head_dim)(q, k)
    # the released layer: keys with offset 0 and downscale, queries with offset k_len - q_len
    expected_k = torchscale_xpos(k.flatten(0, 1), offset=0, downscale=True)
    expected_q = torchscale_xpos(q.flatten(0, 1), offset=k_len - q_len)
    torch.testing.assert_close(k_out.flatten(0, 1), expected_k, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(q_out.flatten(0, 1), expected_q, atol=1e-6, rtol=1e-5)


def test_zeta_and_center_are_the_released_ones():
    for head_dim in (2, 8, 64, 128):
        expected = (torch.arange(0, head_dim, 2) + 0.4 * head_dim) / (1.4 * head_dim)
        assert torch.equal(posenc.xpos_zeta(head_dim), expected)
    assert posenc.xpos_zeta(8).tolist() == pytest.approx([2 / 7, 13 / 28, 9 / 14, 23 / 28])
    for k_len in range(12):
        assert posenc.xpos_center(k_len) == -(-k_len // 2)  # -min_pos of the released code


def _scores(q, k, module):
    q_out, k_out = module(q, k)
    return (q_out @ k_out.transpose(-1, -2))[0, 0]  # (q_len, k_len)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_scores_depend_on_the_distance_only(layout):
    # The same query and key vector at every position: any dependence on m other than
    # through m - n would break the Toeplitz structure.
    torch.manual_seed(1)
    q = torch.randn(1, 1, 1, 16).expand(1, 1, 12, 16)
    k = torch.randn(1, 1, 1, 16).expand(1, 1, 12, 16)
    scores = _scores(q, k, posenc.XPos(16, scale_base=8.0, layout=layout))
    for shift in range(1, 4):
        torch.testing.assert_close(scores[shift:, shift:], scores[:-shift, :-shift])
    assert not torch.allclose(scores[0, 0], scores[5, 0])  # ... and it does depend on it


def test_centre_cancels_in_the_scores_but_not_in_the_tables():
    torch.manual_seed(2)
    q, k = torch.randn(9, 8), torch.randn(9, 8)
    inv_freq = posenc.default_inv_freq(8)
    positions = torch.arange(9)

    def scores(center):
        cq, sq = posenc.xpos_cos_sin(positions, inv_freq, center=center, scale_base=4.0)
        ck, sk = posenc.xpos_cos_sin(
            positions, inv_freq, center=center, scale_base=4.0, downscale=True
        )
        q_out = posenc.apply_rotary(q, cq, sq, layout="interleaved")
        k_out = posenc.apply_rotary(k, ck, sk, layout="interleaved")
        return q_out @ k_out.T, cq

    (s0, table0), (s5, table5) = scores(0), scores(5)
    torch.testing.assert_close(s0, s5)
    assert not torch.allclose(table0, table5)


def test_each_pair_is_ropes_score_times_its_decay():
    # Only pair i carries signal: the xPos score is RoPE's score times zeta_i^((m - n)/B).
    torch.manual_seed(3)
    head_dim, seq, scale_base = 8, 10, 6.0
    zeta = posenc.xpos_zeta(head_dim)
    rope_cos, rope_sin = posenc.rotary_cos_sin(
        torch.arange(seq), posenc.default_inv_freq(head_dim), layout="interleaved"
    )
    distance = torch.arange(seq)[:, None] - torch.arange(seq)[None, :]  # m - n
    for pair in range(head_dim // 2):
        q = torch.zeros(1, 1, seq, head_dim)
        k = torch.zeros(1, 1, seq, head_dim)
        q[..., 2 * pair : 2 * pair + 2] = torch.randn(seq, 2)
        k[..., 2 * pair : 2 * pair + 2] = torch.randn(seq, 2)
        xpos = _scores(q, k, posenc.XPos(head_dim, scale_base=scale_base))
        q_rope = posenc.apply_rotary(q, rope_cos, rope_sin, layout="interleaved")
        k_rope = posenc.apply_rotary(k, rope_cos, rope_sin, layout="interleaved")
        rope = (q_rope @ k_rope.transpose(-1, -2))[0, 0]
        decay = zeta[pair] ** (distance / scale_base)
        torch.testing.assert_close(xpos, rope * decay, atol=1e-5, rtol=1e-5)
        assert (decay.tril() <= 1).all()  # past keys are damped, never amplified


def test_half_layout_is_the_interleaved_one_with_channels_reordered():
    torch.manual_seed(4)
    q, k = torch.randn(2, 2, 6, 16), torch.randn(2, 2, 6, 16)
    perm = posenc.interleaved_to_half_permutation(16)
    q_int, k_int = posenc.XPos(16)(q, k)
    q_half, k_half = posenc.XPos(16, layout="half")(q[..., perm], k[..., perm])
    torch.testing.assert_close(q_half, q_int[..., perm])
    torch.testing.assert_close(k_half, k_int[..., perm])


def test_one_decoding_step_equals_the_last_row_of_the_full_pass():
    torch.manual_seed(5)
    q, k = torch.randn(1, 2, 11, 8), torch.randn(1, 2, 11, 8)
    module = posenc.XPos(8)
    full_q, full_k = module(q, k)
    step_q, step_k = module(q[:, :, -1:], k)
    torch.testing.assert_close(step_q, full_q[:, :, -1:], atol=0, rtol=0)
    torch.testing.assert_close(step_k, full_k, atol=0, rtol=0)


def test_largest_key_factor_grows_as_the_docstring_says():
    # "far from the centre ... zeta_0^(-L/(2B)) = 3.5^(L/1024) for gamma = 0.4"
    length = 8192
    cos, sin = posenc.xpos_cos_sin(
        torch.arange(length),
        posenc.default_inv_freq(8),
        center=posenc.xpos_center(length),
        downscale=True,
    )
    largest = float(torch.hypot(cos, sin).max())
    assert largest == pytest.approx(3.5 ** (length / 1024), rel=0.01)
    assert math.isclose((2 / 7) ** (-length / 1024), 3.5 ** (length / 1024))


def test_tables_dtype_and_repr():
    cos, sin = posenc.xpos_cos_sin(
        torch.arange(4), posenc.default_inv_freq(8), dtype=torch.bfloat16
    )
    assert cos.dtype == sin.dtype == torch.bfloat16 and cos.shape == (4, 8)
    assert repr(posenc.XPos(8)) == (
        "XPos(head_dim=8, base=10000.0, scale_base=512.0, gamma=0.4, layout='interleaved')"
    )


def test_a_model_wide_cast_keeps_the_frequencies_in_float32():
    xpos = posenc.XPos(64).to(torch.bfloat16)
    assert xpos.inv_freq.dtype == torch.float32
    assert torch.equal(xpos.inv_freq, posenc.XPos(64).inv_freq)
