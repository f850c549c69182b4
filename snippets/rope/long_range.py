"""Chapter "RoPE": long-range behaviour, partial rotary, and the choice of base.

Run it: python snippets/rope/long_range.py
"""

# --8<-- [start:decay]
import math

import torch

import posenc

head_dim = 64
inv_freq = posenc.default_inv_freq(head_dim).double()  # θ_i, base 10 000
distances = [0, 1, 4, 16, 64, 256, 1024, 4096]


def paper_bound_shape(r: int) -> float:
    """(1/(d/2)) Σ_j |S_j|, S_j = Σ_{i<j} e^{i r θ_i}: the factor in RoFormer's upper bound."""
    partial_sums = torch.polar(torch.ones_like(inv_freq), r * inv_freq).cumsum(0)
    return partial_sums.abs().mean().item()


def rotated_score(q: torch.Tensor, k: torch.Tensor, r: int) -> torch.Tensor:
    """<R_r q, k> for q, k of shape (..., head_dim), "half" layout: score at distance r."""
    cos, sin = posenc.rotary_cos_sin(torch.tensor([r]), inv_freq.float())
    return (posenc.apply_rotary(q, cos[0], sin[0]) * k).sum(-1)


torch.manual_seed(0)
q_random, k_random = torch.randn(2, 10_000, head_dim).unbind(0)  # 10 000 independent pairs
ones = torch.ones(head_dim)  # q = k, every pair aligned
print(f"{'distance':>8} | {'bound shape':>11} | {'q = k = 1':>9} | {'random: mean':>12} {'std':>6}")
for r in distances:
    aligned = rotated_score(ones, ones, r).item() / head_dim  # 1 at r = 0
    random_scores = rotated_score(q_random, k_random, r)
    print(
        f"{r:8} | {paper_bound_shape(r):11.3f} | {aligned:9.3f} | "
        f"{random_scores.mean().item():12.2f} {random_scores.std().item():6.1f}"
    )
# --8<-- [end:decay]

# --8<-- [start:partial]
rope = posenc.RotaryEmbedding(head_dim=64, rotary_dim=16)  # GPT-NeoX: rotary_pct = 0.25
torch.manual_seed(0)
x = torch.randn(1, 1, 10, 64)
x_rot, _ = rope(x, x)
print("first 16 channels changed:", not torch.allclose(x_rot[..., :16], x[..., :16]))
print("last 48 channels untouched:", torch.equal(x_rot[..., 16:], x[..., 16:]))
# --8<-- [end:partial]

# --8<-- [start:base]
for name, base, head_dim in [
    ("base 10 000, head_dim 128", 10_000.0, 128),
    ("base 500 000, head_dim 128", 500_000.0, 128),
    ("base 1 000 000, head_dim 128", 1_000_000.0, 128),
]:
    slowest = base ** (-(head_dim - 2) / head_dim)  # θ_{d/2-1}
    count = sum(2 * math.pi / base ** (-2 * i / head_dim) > 8192 for i in range(head_dim // 2))
    print(
        f"{name}: longest period {2 * math.pi / slowest:12,.0f} tokens, "
        f"{count:2} of {head_dim // 2} pairs turn less than once in 8192 tokens"
    )
# --8<-- [end:base]
