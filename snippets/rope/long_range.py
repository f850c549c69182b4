"""Chapter "RoPE": long-range behaviour, partial rotary, and the choice of base.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/rope/long_range.py
"""

# --8<-- [start:decay]
import math
import unicodedata

import torch

import posenc

head_dim = 64
inv_freq = posenc.default_inv_freq(head_dim).double()  # θ_i, base 10 000
distances = [0, 1, 4, 16, 64, 256, 1024, 4096]


def rotated_score(q: torch.Tensor, k: torch.Tensor, r: int) -> torch.Tensor:
    """<R_r q, k> for q, k of shape (..., head_dim), "half" layout: the score at distance r."""
    cos, sin = posenc.rotary_cos_sin(torch.tensor([r]), inv_freq.float())
    return (posenc.apply_rotary(q, cos[0], sin[0]) * k).sum(-1)


def paper_bound(q: torch.Tensor, k: torch.Tensor, r: int) -> torch.Tensor:
    """RoFormer §3.4.3: |score| <= (max_i |h_{i+1} - h_i|) · sum_j |S_j|, pairs as complex numbers."""
    half = head_dim // 2  # "half" layout: pair i is dimensions (i, i + d/2)
    h = torch.complex(q[..., :half], q[..., half:]) * torch.complex(k[..., :half], -k[..., half:])
    h = torch.cat((h, torch.zeros_like(h[..., :1])), dim=-1)  # h_{d/2} = 0
    partial_sums = torch.polar(torch.ones_like(inv_freq), r * inv_freq).cumsum(0)  # S_1 .. S_{d/2}
    return (h[..., 1:] - h[..., :-1]).abs().amax(-1) * partial_sums.abs().sum()


torch.manual_seed(0)
q_random, k_random = torch.randn(2, 10_000, head_dim, dtype=torch.float64).unbind(0)
ones = torch.ones(head_dim, dtype=torch.float64)  # q = k, every pair aligned
rows = []
for r in distances:
    random_scores = rotated_score(q_random, k_random, r)
    assert torch.all(random_scores.abs() <= paper_bound(q_random, k_random, r) + 1e-9)
    aligned, aligned_bound = rotated_score(ones, ones, r), paper_bound(ones, ones, r)
    assert abs(aligned) <= aligned_bound + 1e-9
    rows.append((r, aligned / head_dim, aligned_bound / head_dim, random_scores))
every_bound = torch.stack([paper_bound(ones, ones, r) / head_dim for r in range(4097)])
first_rise = int(torch.nonzero(every_bound[1:] > every_bound[:-1])[0]) + 1
late_peak = int(every_bound[256:].argmax()) + 256  # after r = 256, where the paper's plots end


def right(text: str, width: int) -> str:
    """Right-align text in `width` columns of a terminal (a Chinese character takes two)."""
    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return " " * max(width - shown, 0) + text


def show_decay(lang: str = "en") -> None:
    labels = {
        "en": ("q = k = 1", "score/d", "bound/d", "10 000 random q, k", "mean", "std",
               "bound/d first rises at r = {}; after r = 256 its largest value is {:.3f} (r = {})"),
        "zh": ("q = k = 1", "分数/d", "上界/d", "10000 对随机 q、k", "均值", "标准差",
               "上界/d 在 r = {} 第一次回升；r = 256 之后最大为 {:.3f}（r = {}）"),
    }[lang]  # fmt: skip
    print(f"{'':5} | {labels[0]:<17} | {labels[3]}")
    print(
        f"{'r':>5} | {right(labels[1], 8)} {right(labels[2], 8)} | {right(labels[4], 7)} {right(labels[5], 6)}"
    )
    for r, aligned, bound, scores in rows:
        print(
            f"{r:5} | {aligned:8.3f} {bound:8.3f} | {scores.mean().item():7.2f} {scores.std().item():6.1f}"
        )
    print(labels[6].format(first_rise, every_bound[late_peak], late_peak))


# --8<-- [end:decay]

# --8<-- [start:partial]
rope = posenc.RotaryEmbedding(head_dim=64, rotary_dim=16)  # GPT-NeoX-20B: a quarter of the head
torch.manual_seed(0)
x = torch.randn(1, 1, 10, 64)
x_rot, _ = rope(x, x)
print("x_rot[..., :16] != x[..., :16]:", not torch.allclose(x_rot[..., :16], x[..., :16]))
print("x_rot[..., 16:] == x[..., 16:]:", torch.equal(x_rot[..., 16:], x[..., 16:]))
# --8<-- [end:partial]


# --8<-- [start:base]
def show_base(lang: str = "en") -> None:
    label = {
        "en": "b = {:>9}, head_dim {}: longest period {:>9,.0f} tokens; "
        "{} of {} pairs turn less than once in {} tokens",
        "zh": "b = {:>7}，head_dim = {}：最长周期 {:>7.0f} 个 token；"
        "{} 对中有 {} 对在 {} 个 token 内转不满一圈",
    }[lang]
    for base in (10_000, 500_000, 1_000_000):
        d, context = 128, 8192
        periods = [2 * math.pi * base ** (2 * i / d) for i in range(d // 2)]  # 2π/θ_i
        slow = sum(period > context for period in periods)
        shown = f"{base:,}" if lang == "en" else str(base)
        if lang == "en":
            print(label.format(shown, d, max(periods), slow, d // 2, context))
        else:
            print(label.format(shown, d, max(periods), d // 2, slow, context))


# --8<-- [end:base]

show_decay()
show_base()
