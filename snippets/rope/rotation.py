"""Chapter "RoPE": rotations, the relative-position property, the norm, and why not V.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/rope/rotation.py
"""

# --8<-- [start:pair]
import math

import torch

import posenc


def rotation_2d(angle: float) -> torch.Tensor:
    """The 2x2 matrix that turns a vector by `angle` radians, counter-clockwise."""
    c, s = math.cos(angle), math.sin(angle)
    return torch.tensor([[c, -s], [s, c]])


x = torch.tensor([1.0, 0.0])
theta = math.pi / 6  # 30 degrees per position
for m in range(4):
    turned = rotation_2d(m * theta) @ x
    print(
        f"m = {m}: R(mθ) x = ({turned[0]:+.3f}, {turned[1]:+.3f}), mθ = {math.degrees(m * theta):2.0f}°"
    )
# --8<-- [end:pair]


# --8<-- [start:block]
def rope_matrix(m: int, head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """R_m: block-diagonal, one 2x2 rotation by m·θ_i per channel pair (2i, 2i+1)."""
    inv_freq = posenc.default_inv_freq(head_dim, base)  # θ_i = base^(-2i/d)
    return torch.block_diag(*[rotation_2d(m * t) for t in inv_freq.tolist()])


torch.manual_seed(0)
head_dim, m = 8, 5
q = torch.randn(head_dim)
by_matrix = rope_matrix(m, head_dim) @ q

cos, sin = posenc.rotary_cos_sin(
    torch.tensor([m]), posenc.default_inv_freq(head_dim), layout="interleaved"
)
by_library = posenc.apply_rotary(q[None], cos, sin, layout="interleaved")[0]
print(torch.allclose(by_matrix, by_library, atol=1e-6))
print(f"θ_i (d = 8): {[round(t, 4) for t in posenc.default_inv_freq(8).tolist()]}")
# --8<-- [end:block]

# --8<-- [start:relative]
rope = posenc.RotaryEmbedding(head_dim=64)
torch.manual_seed(0)
query, key = torch.randn(1, 1, 1, 64), torch.randn(1, 1, 1, 64)  # (batch, heads, seq, head_dim)


def score(m: int, n: int) -> float:
    """<R_m q, R_n k>: the same query and key, placed at positions m and n."""
    q_rot, _ = rope(query, query, torch.tensor([m]))
    _, k_rot = rope(key, key, torch.tensor([n]))
    return (q_rot * k_rot).sum().item()


for m, n in [(3, 1), (10, 8), (100, 98), (1000, 998), (5, 1)]:
    print(f"m = {m:4}, n = {n:4}, m - n = {m - n}: <R_m q, R_n k> = {score(m, n):+.4f}")
assert abs(score(1000, 998) - score(3, 1)) < 1e-3 < abs(score(5, 1) - score(3, 1))
# --8<-- [end:relative]

# --8<-- [start:norm]
torch.manual_seed(0)
x = torch.randn(1, 1, 6, 64)  # 6 positions of one head
x_rot, _ = rope(x, x)
print("|x|    :", " ".join(f"{v:.4f}" for v in x.norm(dim=-1).flatten().tolist()))
print("|R_m x|:", " ".join(f"{v:.4f}" for v in x_rot.norm(dim=-1).flatten().tolist()))
assert torch.allclose(x_rot.norm(dim=-1), x.norm(dim=-1), rtol=1e-6)
# --8<-- [end:norm]

# --8<-- [start:not_v]
import torch.nn.functional as F

torch.manual_seed(0)
q, k, v = (torch.randn(1, 1, 6, 64) for _ in range(3))


def attend(start: int, rotate_v: bool) -> torch.Tensor:
    """Causal attention for 6 tokens placed at positions start .. start + 5."""
    positions = torch.arange(start, start + 6)
    q_rot, k_rot = rope(q, k, positions)
    values = rope(v, v, positions)[0] if rotate_v else v
    return F.scaled_dot_product_attention(q_rot, k_rot, values, is_causal=True)


same = {  # rotate V or not: is the output at positions 100..105 the one at 0..5?
    rotate_v: torch.allclose(attend(0, rotate_v), attend(100, rotate_v), atol=1e-5)
    for rotate_v in (False, True)
}
assert same == {False: True, True: False}


def show_not_v(lang: str = "en") -> None:
    label = {
        "en": "V rotated: {}  same output at positions 0..5 and 100..105: {}",
        "zh": "旋转 V：{}  位置 0..5 和 100..105 的输出相同：{}",
    }[lang]
    for rotate_v, result in same.items():
        print(label.format(f"{rotate_v!s:5}", result))


# --8<-- [end:not_v]

show_not_v()
