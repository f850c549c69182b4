"""Figure: Men et al.'s discrimination sum B_m = Σ_i cos(m·θ_i) of a 128-dimensional head
against the distance m, for three bases, with the first distance where each turns negative.

Saved twice with the same data: base-length-theory-discrimination.svg (English labels) and
base-length-theory-discrimination.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt
import torch

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "x": "distance m between query and key (tokens)",
        "y": "B_m = Σᵢ cos(m·θᵢ)",
        "base": "base {:,.0f}",
        "first": "first B_m < 0",
    },
    "zh": {
        "x": "query 与 key 的距离 m（token）",
        "y": "B_m = Σᵢ cos(m·θᵢ)",
        "base": "底数 {:,.0f}",
        "first": "B_m 首次小于 0",
    },
}
COLOURS = ["#4c72b0", "#dd8452", "#55a868"]
HEAD_DIM, BASES, LONGEST = 128, (1e4, 1e5, 1e6), 40000


def draw_discrimination(labels: dict) -> plt.Figure:
    m = torch.arange(0, LONGEST + 1, dtype=torch.float64)
    shown = torch.unique(torch.logspace(0, 4.6, 500).round().long())  # log-spaced distances
    fig, ax = plt.subplots(figsize=(6.56, 3.2), layout="constrained")
    for base, colour in zip(BASES, COLOURS, strict=True):
        theta = posenc.rope_inv_freq(HEAD_DIM, base)[0].double()
        b = torch.cos(m[:, None] * theta).sum(-1)
        ax.plot(m[shown], b[shown], color=colour, lw=0.9, label=labels["base"].format(base))
        first = int((b < 0).nonzero()[0])
        ax.plot([first], [0], "o", color=colour, ms=5, zorder=3)
    ax.plot([], [], "o", color="0.3", ms=5, label=labels["first"])
    ax.axhline(0, color="0.3", lw=0.7)
    ax.set_xscale("log")
    ax.set_xlim(1, LONGEST)
    ax.set_ylim(-6, 66)
    ax.set_xlabel(labels["x"])
    ax.set_ylabel(labels["y"])
    ax.legend(loc="upper right", fontsize=8, frameon=False)
    return fig


save_each_language(draw_discrimination, "base-length-theory-discrimination.svg", LABELS)
