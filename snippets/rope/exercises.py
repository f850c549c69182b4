"""Chapter "RoPE": worked answers to the exercises.

Run it: python snippets/rope/exercises.py
"""

# --8<-- [start:norm_check]
import torch

import posenc


def rope_by_hand(x: torch.Tensor, positions: torch.Tensor, base: float = 10_000.0) -> torch.Tensor:
    """Interleaved RoPE written out: pair (x_2i, x_2i+1) turns by position · θ_i."""
    head_dim = x.shape[-1]
    theta = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = positions.float()[:, None] * theta  # (seq, head_dim/2), float32
    cos, sin = angles.cos(), angles.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)


torch.manual_seed(0)
x = torch.randn(1000, 64)
positions = torch.randint(0, 100_000, (1000,))
rotated = rope_by_hand(x, positions)
relative_change = ((rotated.norm(dim=-1) - x.norm(dim=-1)).abs() / x.norm(dim=-1)).max()
print("relative_change < 1e-5:", relative_change.item() < 1e-5)
cos, sin = posenc.rotary_cos_sin(positions, posenc.default_inv_freq(64), layout="interleaved")
difference = (rotated - posenc.apply_rotary(x, cos, sin, layout="interleaved")).abs().max()
# not 1e-6: near position 1e5 a float32 angle is only good to ~0.008 rad (see "Precision"),
# so two correct float32 implementations that round θ_i differently disagree by that much
print("difference < 0.01:", difference.item() < 0.01)
# --8<-- [end:norm_check]

# --8<-- [start:inverse]
head_dim = 8
perm = posenc.interleaved_to_half_permutation(head_dim)
back = torch.argsort(perm)  # half -> interleaved
print("back:", back.tolist())
w = torch.randn(head_dim, 16)  # rows of one head of w_q
print("torch.equal(w[perm][back], w):", torch.equal(w[perm][back], w))
# --8<-- [end:inverse]
