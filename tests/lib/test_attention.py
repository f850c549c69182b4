"""posenc.attention: the formula, SDPA and FlexAttention paths, broadcasting, compile, autocast."""

import warnings

import pytest
import torch
import torch.nn.functional as F

import posenc


def naive_attention(q, k, v, *, causal, slopes=None, bias=None):
    """softmax(q·kᵀ/√d − m_h(i−j) + B + M) v, written out (queries are the last keys)."""
    heads, q_len, k_len = q.shape[1], q.shape[2], k.shape[2]
    k = k.repeat_interleave(heads // k.shape[1], dim=1)
    v = v.repeat_interleave(heads // v.shape[1], dim=1)
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    i = torch.arange(q_len)[:, None] + (k_len - q_len)
    j = torch.arange(k_len)[None]
    if slopes is not None:
        distance = (i - j) if causal else (i - j).abs()
        scores = scores - slopes[:, None, None] * distance
    if bias is not None:
        scores = scores + bias
    if causal:
        scores = scores.masked_fill(j > i, float("-inf"))
    return scores.softmax(-1) @ v


def inputs(batch=2, heads=4, kv_heads=2, q_len=7, k_len=7, dim=16):
    torch.manual_seed(0)
    return (
        torch.randn(batch, heads, q_len, dim),
        torch.randn(batch, kv_heads, k_len, dim),
        torch.randn(batch, kv_heads, k_len, dim),
    )


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize(("q_len", "k_len"), [(7, 7), (3, 7), (1, 9)])
def test_sdpa_alibi_matches_formula(causal, q_len, k_len):
    q, k, v = inputs(q_len=q_len, k_len=k_len)
    slopes = posenc.alibi_slopes(4)
    expected = naive_attention(q, k, v, causal=causal, slopes=slopes)
    actual = posenc.attention(q, k, v, causal=causal, alibi_slopes=slopes, backend="sdpa")
    torch.testing.assert_close(actual, expected, atol=1e-6, rtol=0)


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize(("q_len", "k_len"), [(7, 7), (3, 7)])
def test_flex_path_matches_sdpa_path(causal, q_len, k_len):
    q, k, v = inputs(q_len=q_len, k_len=k_len)
    slopes = posenc.alibi_slopes(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # eager flex_attention on CPU warns that it is unfused
        flex = posenc.attention(q, k, v, causal=causal, alibi_slopes=slopes, backend="flex")
    sdpa = posenc.attention(q, k, v, causal=causal, alibi_slopes=slopes, backend="sdpa")
    torch.testing.assert_close(flex, sdpa, atol=1e-5, rtol=0)


def test_plain_and_biased_attention():
    q, k, v = inputs(kv_heads=4)
    torch.testing.assert_close(
        posenc.attention(q, k, v), naive_attention(q, k, v, causal=True), atol=1e-6, rtol=0
    )
    bias = torch.randn(1, 4, 1, 7)  # broadcast over batch and queries
    torch.testing.assert_close(
        posenc.attention(q, k, v, causal=False, bias=bias),
        naive_attention(q, k, v, causal=False, bias=bias),
        atol=1e-6, rtol=0,
    )  # fmt: skip


def test_t5_bias_plugs_in():
    q, k, v = inputs(kv_heads=4)
    bias = posenc.T5RelativeBias(4)(7)
    out = posenc.attention(q, k, v, causal=False, bias=bias)
    torch.testing.assert_close(
        out, naive_attention(q, k, v, causal=False, bias=bias), atol=1e-6, rtol=0
    )


def test_alibi_mask_is_broadcast_over_the_batch(monkeypatch):
    seen = []
    original = F.scaled_dot_product_attention

    def spy(*args, attn_mask=None, **kwargs):
        seen.append(attn_mask.shape)
        return original(*args, attn_mask=attn_mask, **kwargs)

    monkeypatch.setattr(F, "scaled_dot_product_attention", spy)
    q, k, v = inputs(batch=8)
    posenc.attention(q, k, v, alibi_slopes=posenc.alibi_slopes(4))
    assert seen == [(1, 4, 7, 7)]


def test_under_autocast():
    q, k, v = inputs()
    slopes = posenc.alibi_slopes(4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = posenc.attention(q, k, v, alibi_slopes=slopes)
    torch.testing.assert_close(
        out.float(), naive_attention(q, k, v, causal=True, slopes=slopes), atol=5e-2, rtol=0
    )


def test_alibi_attention_compiles_fullgraph():
    torch._dynamo.reset()
    q, k, v = inputs()
    slopes = posenc.alibi_slopes(4)
    compiled = torch.compile(
        lambda q, k, v: posenc.attention(q, k, v, alibi_slopes=slopes),
        fullgraph=True,
        backend="eager",
    )
    torch.testing.assert_close(compiled(q, k, v), posenc.attention(q, k, v, alibi_slopes=slopes))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("causal", [True, False])
def test_cuda_auto_uses_flex_and_matches_sdpa(causal):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 8, 256, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    slopes = posenc.alibi_slopes(8, device="cuda")
    flex = posenc.attention(q, k, v, causal=causal, alibi_slopes=slopes)
    sdpa = posenc.attention(q, k, v, causal=causal, alibi_slopes=slopes, backend="sdpa")
    torch.testing.assert_close(flex.float(), sdpa.float(), atol=2e-2, rtol=2e-2)
