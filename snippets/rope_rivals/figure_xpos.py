"""Figure: xPos's decay per pair against the distance, and what it does to RoPE's score.

Saved twice with the same data: rope-rivals-xpos.svg (English labels) and
rope-rivals-xpos.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt
import torch

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "pair": "pair {i}, ζ = {z:.3f}",
        "x": "distance r = i - j",
        "decay": "decay factor ζᵢ^(r/B)",
        "score": "score / d, q = k = (1, ..., 1)",
        "left": "xPos's decay, per pair (B = 512)",
        "right": "RoPE's score and xPos's",
    },
    "zh": {
        "pair": "第 {i} 对，ζ = {z:.3f}",
        "x": "距离 r = i - j",
        "decay": "衰减系数 ζᵢ^(r/B)",
        "score": "分数 / d，q = k = (1, ..., 1)",
        "left": "xPos 每对维度的衰减（B = 512）",
        "right": "RoPE 与 xPos 的分数",
    },
}


def draw_xpos(labels):
    head_dim, scale_base = 64, 512.0
    zeta = posenc.xpos_zeta(head_dim).double()
    inv_freq = posenc.default_inv_freq(head_dim).double()
    r = torch.arange(0, 4097, dtype=torch.float64)
    decay = zeta[None, :] ** (r[:, None] / scale_base)  # (distances, pairs)
    rope = 2 * torch.cos(r[:, None] * inv_freq[None, :])  # each pair of q = k = 1: 2 cos(r θ_i)
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6), constrained_layout=True)
    for i in (0, 8, 16, 31):
        left.plot(r, decay[:, i], label=labels["pair"].format(i=i, z=float(zeta[i])))
    left.set_yscale("log")
    left.set_ylim(1e-4, 1.5)
    left.set_xlabel(labels["x"])
    left.set_ylabel(labels["decay"])
    left.set_title(labels["left"], fontsize=10)
    left.legend(fontsize=8)
    rr = r[1:]
    right.plot(rr, rope[1:].sum(-1) / head_dim, label="RoPE", color="gray", linewidth=0.9)
    right.plot(rr, (rope * decay)[1:].sum(-1) / head_dim, label="xPos", color="C3")
    right.axhline(0, color="black", linewidth=0.5)
    right.set_xscale("log")
    right.set_xlabel(labels["x"])
    right.set_ylabel(labels["score"])
    right.set_title(labels["right"], fontsize=10)
    right.legend(fontsize=8)
    return fig


save_each_language(draw_xpos, "rope-rivals-xpos.svg", LABELS)
