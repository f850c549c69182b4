"""posenc.rope_triton: the Triton RoPE kernel equals posenc's rotation in every call form.

Without a GPU the kernel runs in Triton's interpreter (TRITON_INTERPRET=1, which
tests/conftest.py sets before anything defines a kernel); on a CUDA machine the compiled
kernel runs on the device, and ``pytest -m gpu`` selects those runs."""

from __future__ import annotations

import pytest
import torch

import posenc
from posenc import rope_triton

pytestmark = pytest.mark.skipif(rope_triton.triton is None, reason="Triton is not installed")


def _expected(q, k, positions, inv_freq, layout, factor):
    """posenc's own rotation of the same tokens, in float64 (the kernel computes in float32)."""
    cos, sin = posenc.rotary_cos_sin(
        positions.cpu(), inv_freq.cpu(), layout=layout, attention_factor=factor,
        dtype=torch.float64,
    )  # fmt: skip
    if positions.ndim == 2:
        cos, sin = cos[:, None], sin[:, None]
    return tuple(posenc.apply_rotary(x.cpu().double(), cos, sin, layout=layout) for x in (q, k))


CASES = {  # name: (heads, kv_heads, seq, head_dim, rotary_dim, per-row positions, factor)
    "full": (4, 4, 9, 32, 32, False, 1.0),
    "gqa, per-row positions": (6, 2, 7, 16, 16, True, 1.0),
    "partial rotary": (2, 1, 5, 24, 8, False, 1.0),
    "yarn factor, odd pairs": (3, 3, 6, 20, 12, True, 1.1),
}


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_kernel_equals_posenc_rotation(device, case, layout, dtype):
    heads, kv_heads, seq, head_dim, rotary_dim, per_row, factor = CASES[case]
    generator = torch.Generator().manual_seed(0)
    q = torch.randn(2, heads, seq, head_dim, generator=generator).to(device, dtype)
    k = torch.randn(2, kv_heads, seq, head_dim, generator=generator).to(device, dtype)
    if per_row:  # left padding: each batch row starts elsewhere
        positions = torch.stack((torch.arange(seq), torch.arange(seq) + 1000))
    else:
        positions = torch.arange(seq) + 4090
    positions = positions.to(device)
    inv_freq, _ = posenc.rope_inv_freq(rotary_dim)
    inv_freq = inv_freq.to(device)
    got_q, got_k = rope_triton.rotate_qk(
        q, k, positions, inv_freq, layout=layout, attention_factor=factor
    )
    want_q, want_k = _expected(q, k, positions, inv_freq, layout, factor)
    assert got_q.dtype == got_k.dtype == dtype and got_q.device == q.device
    # float32: the same float32 angles as rotary_cos_sin, cos and sin within an ulp or two;
    # half precisions: one rounding of the result
    tolerance = {"atol": 2e-5, "rtol": 2e-5} if dtype == torch.float32 else {
        "atol": 2 * torch.finfo(dtype).eps * 4, "rtol": 2 * torch.finfo(dtype).eps}  # fmt: skip
    torch.testing.assert_close(got_q.cpu().double(), want_q, **tolerance)
    torch.testing.assert_close(got_k.cpu().double(), want_k, **tolerance)
    if rotary_dim < head_dim:  # passed through bit for bit
        assert torch.equal(got_q[..., rotary_dim:], q[..., rotary_dim:])


def test_kernel_reads_any_strides(device):
    """q and k as attention projections leave them: (batch, seq, heads, dim) transposed."""
    generator = torch.Generator().manual_seed(1)
    qkv = torch.randn(2, 5, 3, 4, 16, generator=generator).to(device)  # (b, s, q/k/v, h, d)
    q, k = qkv[:, :, 0].transpose(1, 2), qkv[:, :, 1].transpose(1, 2)
    assert not q.is_contiguous()
    positions = torch.arange(5, device=device)
    inv_freq = posenc.rope_inv_freq(16)[0].to(device)
    got_q, got_k = rope_triton.rotate_qk(q, k, positions, inv_freq)
    want_q, want_k = _expected(q, k, positions, inv_freq, "half", 1.0)
    torch.testing.assert_close(got_q.cpu().double(), want_q, atol=2e-5, rtol=2e-5)
    torch.testing.assert_close(got_k.cpu().double(), want_k, atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda q, p, f: rope_triton.rotate_qk(q, q.double(), p, f), TypeError, "same"),
        (lambda q, p, f: rope_triton.rotate_qk(q, q, p[:3], f), ValueError, "positions"),
        (lambda q, p, f: rope_triton.rotate_qk(q, q, p.float(), f), TypeError, "positions"),
        (lambda q, p, f: rope_triton.rotate_qk(q, q, p, torch.ones(9)), ValueError, "inv_freq"),
        (lambda q, p, f: rope_triton.rotate_qk(q, q, p, f, layout="neox"), ValueError, "layout"),
        (
            lambda q, p, f: rope_triton.rotate_qk(q, q, p, f, attention_factor=0),
            ValueError,
            "attention_factor",
        ),
    ],
    ids=["dtypes differ", "short positions", "float positions", "wide inv_freq", "layout",
         "factor 0"],
)  # fmt: skip
def test_bad_input_names_the_argument(call, error, match):
    q = torch.randn(1, 2, 5, 16)
    with pytest.raises(error, match=match):
        call(q, torch.arange(5), posenc.rope_inv_freq(16)[0])
