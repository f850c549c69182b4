"""ALiBi slopes and bias against Press et al.'s code, BLOOM and MPT."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import BloomConfig, BloomForCausalLM, MptConfig, MptForCausalLM
from transformers.models.bloom import modeling_bloom
from transformers.models.mpt import modeling_mpt

import posenc
from tests.lib.references import press_get_slopes


@pytest.mark.parametrize("heads", range(1, 257))
def test_slopes_match_press_and_bloom(heads):
    expected = press_get_slopes(heads)
    assert posenc.alibi_slope_values(heads) == pytest.approx(expected, rel=1e-12, abs=0)
    torch.testing.assert_close(
        posenc.alibi_slopes(heads, dtype=torch.float64),
        torch.tensor(expected, dtype=torch.float64),
        atol=0,
        rtol=1e-12,
    )
    torch.testing.assert_close(
        # BLOOM raises a float32 base to integer powers: float32 rounding accumulates
        posenc.alibi_slopes(heads),
        modeling_bloom._get_alibi_slopes(heads, "cpu"),
        atol=0,
        rtol=1e-5,
    )


def test_docstring_example_eight_heads():
    assert posenc.alibi_slopes(8).tolist() == [2.0**-h for h in range(1, 9)]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 256))
def test_slopes_decrease_within_each_geometric_run_and_lie_in_unit_interval(heads):
    slopes = posenc.alibi_slope_values(heads)
    assert all(0 < m <= 1 for m in slopes)
    power = 2 ** math.floor(math.log2(heads))
    for run in (slopes[:power], slopes[power:]):
        assert all(a > b for a, b in zip(run, run[1:], strict=False))


def test_bias_is_slope_times_relative_position():
    # The paper's figure: query i adds m·[-(i), ..., -2, -1, 0] to its scores over keys 0..i.
    bias = posenc.alibi_bias(8, 4)
    assert bias[0, 3].tolist() == [-1.5, -1.0, -0.5, 0.0]  # head 1 of 8: m = 1/2
    assert bias[1, 3].tolist() == [-0.75, -0.5, -0.25, 0.0]  # head 2: m = 1/4
    assert bias[0, 0].tolist() == [0.0, 0.5, 1.0, 1.5]  # future keys: positive, masked later
    r = posenc.relative_positions(4)  # j - i, the convention shared with T5 and Shaw
    slopes = posenc.alibi_slopes(8)[:, None, None]
    assert torch.equal(bias, slopes * r)
    assert torch.equal(posenc.alibi_bias(8, 4, causal=False), -slopes * r.abs())


def test_offset_and_k_len_follow_the_shared_rule():
    full = posenc.alibi_bias(4, 10)
    torch.testing.assert_close(posenc.alibi_bias(4, 1, 10), full[:, -1:], atol=0, rtol=0)
    torch.testing.assert_close(posenc.alibi_bias(4, 1, offset=9), full[:, -1:], atol=0, rtol=0)
    torch.testing.assert_close(posenc.alibi_bias(4, 3, 10, offset=2), full[:, 2:5], atol=0, rtol=0)
    assert posenc.ALiBi(4)(1, 10).shape == (4, 1, 10)


def test_module_uses_its_slopes_and_flag():
    module = posenc.ALiBi(6, causal=False)
    torch.testing.assert_close(module(5), posenc.alibi_bias(6, 5, causal=False))
    assert repr(module) == "ALiBi(num_heads=6, causal=False)"


def test_dtype_and_given_slopes():
    slopes = torch.tensor([0.5, 0.25], dtype=torch.float64)
    bias = posenc.alibi_bias(2, 3, slopes=slopes, dtype=torch.bfloat16)
    assert bias.dtype == torch.bfloat16
    assert bias[0, 2].tolist() == [-1.0, -0.5, 0.0]


@pytest.mark.parametrize("heads", [4, 12])
def test_equals_bloom_bias_under_causal_mask(heads):
    torch.manual_seed(0)
    seq = 11
    scores = torch.randn(2, heads, seq, seq)
    bloom = modeling_bloom.build_alibi_tensor(torch.ones(2, seq), heads, torch.float32)
    bloom = bloom.view(2, heads, 1, seq)  # +m_h·j, constant along each row up to +m_h·i
    causal = torch.full((seq, seq), float("-inf")).triu(1)
    expected = torch.softmax(scores + bloom + causal, dim=-1)
    actual = torch.softmax(scores + posenc.alibi_bias(heads, seq) + causal, dim=-1)
    torch.testing.assert_close(actual, expected, atol=1e-6, rtol=0)


def test_tiny_bloom_same_logits_with_posenc_alibi(monkeypatch):
    torch.manual_seed(0)
    config = BloomConfig(vocab_size=97, hidden_size=48, n_layer=2, n_head=6)
    model = BloomForCausalLM(config).eval()
    ids = torch.randint(0, 97, (2, 13))
    slopes = posenc.alibi_slopes(6)

    def attention_forward(
        self, hidden_states, residual, alibi, attention_mask, layer_past=None, **kwargs
    ):
        q, k, v = self._reshape(self.query_key_value(hidden_states))
        out = posenc.attention(q, k, v, causal=True, alibi_slopes=slopes)  # (b, h, s, d)
        out = out.transpose(1, 2).reshape(*hidden_states.shape[:2], -1)
        return modeling_bloom.dropout_add(self.dense(out), residual, 0.0, False), None

    with torch.no_grad():
        expected = model(ids).logits
        monkeypatch.setattr(modeling_bloom.BloomAttention, "forward", attention_forward)
        actual = model(ids).logits
    torch.testing.assert_close(actual, expected, atol=1e-6, rtol=0)


def test_tiny_mpt_same_logits_with_posenc_bias(monkeypatch):
    # MPT adds m_h·(j - (L - 1)) as a position bias: under the causal mask that is m_h·(j - i)
    # up to a constant per row. (For a power-of-two head count its slopes are Press et al.'s.)
    torch.manual_seed(0)
    config = MptConfig(vocab_size=97, d_model=64, n_heads=4, n_layers=2, max_seq_len=32)
    model = MptForCausalLM(config).eval()
    ids = torch.randint(0, 97, (2, 9))

    def posenc_bias(self, num_heads, sequence_length, alibi_bias_max=8, device=None):
        # (heads, L, L); MPT slices the last q_len rows and k_len columns, as posenc does
        return posenc.alibi_bias(num_heads, sequence_length, device=device)

    with torch.no_grad():
        expected = model(ids).logits
        monkeypatch.setattr(modeling_mpt.MptModel, "build_mpt_alibi_tensor", posenc_bias)
        actual = model(ids).logits
    torch.testing.assert_close(actual, expected, atol=1e-5, rtol=0)


def test_a_model_wide_cast_keeps_the_slopes_in_float32():
    """model.to(bfloat16) casts every buffer; 12 heads have slopes like 2^-0.5 that bfloat16
    rounds (to 0.70703), so the module computes them again."""
    cast = posenc.ALiBi(12).to(torch.bfloat16)
    assert cast.slopes.dtype == torch.float32
    assert torch.equal(cast.slopes, posenc.alibi_slopes(12))
    assert posenc.alibi_slopes(12).to(torch.bfloat16).float()[8] != posenc.alibi_slopes(12)[8]
