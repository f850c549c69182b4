"""Every public call that computes on a device, on every device this machine has: the result
is on that device and equals an independent float64 formula computed on the CPU (the tests of
each module check the formulas themselves in depth; here the point is the device path: tables
built where the inputs are, no silent copy to the CPU, no dtype lost on the way).

On a machine with CUDA, ``pytest -m gpu`` runs the CUDA half of this file and of the other
device tests (67 passed in 52-65 s on an H100: benchmarks/results/gpu/h100-2026-11-27)."""

from __future__ import annotations

import math

import pytest
import torch

import posenc

FLOAT32 = {"atol": 2e-5, "rtol": 1e-5}


def _on(device: str, tensor: torch.Tensor) -> torch.Tensor:
    assert tensor.device.type == device, f"computed on {tensor.device}, not on {device}"
    return tensor.cpu().double()


def _rotate(x: torch.Tensor, angles: torch.Tensor, layout: str) -> torch.Tensor:
    """The rotation of every pair by its angle, in float64: pairs (i, i + d/2) or (2i, 2i+1)."""
    x = x.double()
    if layout == "half":
        a, b = x.chunk(2, dim=-1)
    else:
        a, b = x[..., 0::2], x[..., 1::2]
    cos, sin = angles.cos(), angles.sin()
    ra, rb = a * cos - b * sin, b * cos + a * sin
    if layout == "half":
        return torch.cat((ra, rb), dim=-1)
    return torch.stack((ra, rb), dim=-1).flatten(-2)


def test_sinusoidal_table(device):
    n, dim = 300, 64
    got = _on(device, posenc.sinusoidal(n, dim, device=device))
    p = torch.arange(n, dtype=torch.float64)[:, None]
    angle = p * 10000.0 ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    want = torch.stack((angle.sin(), angle.cos()), dim=-1).flatten(-2)
    torch.testing.assert_close(got, want, atol=1e-4, rtol=0)  # float32 angles up to 300 rad


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize(
    "scaling",
    [
        None,
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64},
        {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
         "original_max_position_embeddings": 64},
    ],
    ids=["default", "yarn", "llama3"],
)  # fmt: skip
def test_rotary_embedding_with_positions_per_row(device, layout, scaling):
    torch.manual_seed(0)
    rope = posenc.RotaryEmbedding(32, layout=layout, scaling=scaling).to(device)
    q, k = torch.randn(2, 4, 10, 32), torch.randn(2, 2, 10, 32)
    positions = torch.stack((torch.arange(10), torch.arange(5, 15)))  # per batch row
    got_q, got_k = rope(q.to(device), k.to(device), positions.to(device))
    inv_freq, factor = posenc.rope_inv_freq(32, scaling=scaling)  # CPU, the reference's own
    angles = positions[:, None, :, None].double() * inv_freq.double()
    torch.testing.assert_close(_on(device, got_q), factor * _rotate(q, angles, layout), **FLOAT32)
    torch.testing.assert_close(_on(device, got_k), factor * _rotate(k, angles, layout), **FLOAT32)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_apply_rotary_keeps_the_dtype_and_partial_channels(device, dtype):
    torch.manual_seed(0)
    x = torch.randn(1, 2, 6, 16)
    inv_freq, _ = posenc.rope_inv_freq(8)  # 8 rotated channels of 16
    cos, sin = posenc.rotary_cos_sin(torch.arange(3, 9, device=device), inv_freq.to(device))
    got = posenc.apply_rotary(x.to(device, dtype), cos.to(dtype), sin.to(dtype))
    assert got.dtype == dtype
    angles = torch.arange(3, 9, dtype=torch.float64)[:, None] * inv_freq.double()
    want = torch.cat((_rotate(x[..., :8], angles, "half"), x[..., 8:].double()), dim=-1)
    tolerance = FLOAT32 if dtype == torch.float32 else {"atol": 3e-2, "rtol": 3e-2}
    torch.testing.assert_close(_on(device, got), want, **tolerance)


def test_rerotate_moves_keys_by_delta(device):
    torch.manual_seed(0)
    k = torch.randn(1, 2, 5, 16)
    inv_freq, _ = posenc.rope_inv_freq(16)
    got = posenc.rerotate(k.to(device), -3, inv_freq.to(device))  # moved 3 positions later
    angles = torch.full((5, 1), 3.0, dtype=torch.float64) * inv_freq.double()
    torch.testing.assert_close(_on(device, got), _rotate(k, angles, "half"), **FLOAT32)


@pytest.mark.parametrize("causal", [True, False])
def test_alibi_bias(device, causal):
    slopes = posenc.alibi_slopes(8, device=device)
    got = _on(device, posenc.alibi_bias(8, 7, 9, causal=causal, slopes=slopes))
    m = torch.tensor([2.0 ** -(h + 1) for h in range(8)], dtype=torch.float64)  # 2^(-8h/H)
    r = torch.arange(9.0, dtype=torch.float64)[None, :] - torch.arange(2.0, 9.0)[:, None]  # j - i
    want = m[:, None, None] * (r if causal else -r.abs())
    torch.testing.assert_close(got, want, **FLOAT32)


def test_t5_bias_follows_its_module(device):
    torch.manual_seed(0)
    bias = posenc.T5RelativeBias(4, num_buckets=8, max_distance=16)
    got = _on(device, bias.to(device)(5, 12))
    buckets = posenc.t5_relative_bucket(
        posenc.relative_positions(5, 12), bidirectional=True, num_buckets=8, max_distance=16
    )
    want = bias.cpu().weight.detach().double()[buckets].permute(2, 0, 1)
    torch.testing.assert_close(got, want, **FLOAT32)


def _attention_formula(q, k, v, slopes):
    """Softmax attention with the causal ALiBi bias, in float64 on the CPU."""
    q, k, v, m = q.double(), k.double(), v.double(), slopes.double()
    k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
    v = v.repeat_interleave(q.shape[1] // v.shape[1], dim=1)
    q_len, k_len = q.shape[2], k.shape[2]
    r = torch.arange(k_len)[None, :] - torch.arange(k_len - q_len, k_len)[:, None]
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + m[:, None, None] * r
    scores = scores.masked_fill(r > 0, float("-inf"))
    return scores.softmax(-1) @ v


@pytest.mark.parametrize("q_len", [1, 40], ids=["decoding", "prompt"])
def test_attention_with_alibi_on_every_backend(device, q_len):
    torch.manual_seed(0)
    q, k, v = torch.randn(1, 4, q_len, 32), torch.randn(1, 2, 40, 32), torch.randn(1, 2, 40, 32)
    slopes = posenc.alibi_slopes(4)
    want = _attention_formula(q, k, v, slopes)
    # FlexAttention compiles for seconds on a CPU; test_attention.py does that there
    backends = ["sdpa", "auto"] + (["flex"] if device == "cuda" else [])
    for backend in backends:
        got = posenc.attention(
            q.to(device), k.to(device), v.to(device), alibi_slopes=slopes.to(device),
            backend=backend,
        )  # fmt: skip
        torch.testing.assert_close(_on(device, got), want, atol=1e-4, rtol=1e-4, msg=backend)
