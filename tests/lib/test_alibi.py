"""ALiBi slopes and bias against Press et al.'s rule and BLOOM."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import BloomConfig, BloomForCausalLM
from transformers.models.bloom import modeling_bloom

import posenc


def press_get_slopes(n):
    """The rule from Press et al.'s attention_with_linear_biases code (fairseq transformer.py)."""

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        get_slopes_power_of_2(closest_power_of_2)
        + press_get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )


def test_slopes_match_press_for_1_to_64_heads():
    for heads in range(1, 65):
        expected = torch.tensor(press_get_slopes(heads), dtype=torch.float32)
        torch.testing.assert_close(posenc.alibi_slopes(heads), expected, atol=1e-6, rtol=0)
        torch.testing.assert_close(
            posenc.alibi_slopes(heads),
            modeling_bloom._get_alibi_slopes(heads, "cpu"),
            atol=1e-6,
            rtol=0,
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


def test_bias_formula():
    bias = posenc.alibi_bias(2, 3)
    slopes = posenc.alibi_slopes(2)
    i, j = torch.arange(3)[:, None], torch.arange(3)[None]
    torch.testing.assert_close(bias, -slopes[:, None, None] * (i - j).float())
    symmetric = posenc.alibi_bias(2, 3, causal=False)
    torch.testing.assert_close(symmetric, -slopes[:, None, None] * (i - j).abs().float())


def test_decoding_queries_are_the_last_keys():
    full = posenc.alibi_bias(4, 10)
    torch.testing.assert_close(posenc.alibi_bias(4, 1, 10), full[:, -1:])
    assert posenc.ALiBi(4)(1, 10).shape == (4, 1, 10)


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
