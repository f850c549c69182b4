"""Figure: the frequency of every pair of a 64-dimensional head (base 10 000) under full RoPE,
GPT-NeoX partial rotary (25%) and p-RoPE (p = 0.75), against one full turn in 4096 tokens.

Saved twice with the same data: partial-rotation-frequencies.svg (English labels) and
partial-rotation-frequencies.zh.svg (Chinese labels).
"""

import math

import matplotlib.pyplot as plt

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "series": ["full RoPE", "NeoX partial rotary, 25%", "p-RoPE, p = 0.75"],
        "pair": "pair i (fastest on the left)",
        "theta": "frequency θᵢ (radians per token)",
        "turn": "one full turn in 4096 tokens (2π/4096)",
        "zero": "θ = 0: never turns",
    },
    "zh": {
        "series": ["完整 RoPE", "NeoX 部分旋转，25%", "p-RoPE，p = 0.75"],
        "pair": "第 i 对维度（左边最快）",
        "theta": "频率 θᵢ（每个 token 转过的弧度）",
        "turn": "4096 个 token 内恰好转一圈（2π/4096）",
        "zero": "θ = 0：始终不转",
    },
}
COLOURS = ["#4c72b0", "#dd8452", "#55a868"]
HEAD_DIM, BASE, TRAINED = 64, 10000.0, 4096
FLOOR = 1e-6  # where a zero frequency is drawn on the logarithmic axis


def draw_frequencies(labels: dict) -> plt.Figure:
    scalings = [
        None,
        {"partial_rotary_factor": 0.25},
        {"rope_type": "proportional", "partial_rotary_factor": 0.75},
    ]
    pairs = HEAD_DIM // 2
    fig, ax = plt.subplots(figsize=(6.56, 3.4), layout="constrained")
    series = zip(scalings, COLOURS, labels["series"], strict=True)
    for k, (scaling, colour, label) in enumerate(series):
        theta = posenc.rope_inv_freq(HEAD_DIM, BASE, scaling=scaling)[0].tolist()
        # NeoX's unrotated dimensions, counted as pairs, never turn either
        theta += [0.0] * (pairs - len(theta))
        shift = (k - 1) * 0.22  # side by side, so that equal values stay visible
        turning = [(i + shift, t) for i, t in enumerate(theta) if t > 0]
        still = [i + shift for i, t in enumerate(theta) if t == 0]
        ax.scatter(*zip(*turning, strict=True), s=14, color=colour, label=label, zorder=3)
        ax.scatter(still, [FLOOR] * len(still), s=18, color=colour, marker="x", zorder=3)
    ax.axhline(2 * math.pi / TRAINED, color="0.3", lw=0.8, ls="--")
    ax.text(8.5, 2 * math.pi / TRAINED / 1.4, labels["turn"], fontsize=8, va="top")
    ax.axhspan(FLOOR / 2.5, FLOOR * 2.5, color="0.93", zorder=0)
    ax.text(-0.4, FLOOR, labels["zero"], fontsize=8, va="center")
    ax.set_yscale("log")
    ax.set_ylim(FLOOR / 2.5, 3)
    ticks = [10.0**-k for k in range(6)]
    ax.set_yticks(ticks + [FLOOR], [f"$10^{{{-k}}}$" for k in range(6)] + ["0"])
    ax.minorticks_off()
    ax.set_xlim(-0.8, pairs - 0.2)
    ax.set_xticks(range(0, pairs, 4))
    ax.set_xlabel(labels["pair"])
    ax.set_ylabel(labels["theta"])
    ax.legend(loc="upper right", fontsize=8, frameon=False)
    return fig


save_each_language(draw_frequencies, "partial-rotation-frequencies.svg", LABELS)
