"""Figure: the share of each head's attention weight beyond a distance D, equal content scores.

Saved twice with the same data: alibi-window.svg (English labels) and alibi-window.zh.svg
(Chinese labels).
"""

import matplotlib.pyplot as plt
import torch

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "head": "head {h}, m = 1/{d}",
        "x": "distance D (tokens back)",
        "y": "share of the weight beyond D",
        "one": "1%",
    },
    "zh": {
        "head": "第 {h} 个头，m = 1/{d}",
        "x": "距离 D（往回数的 token 数）",
        "y": "距离 D 之外的权重占比",
        "one": "1%",
    },
}


def draw_window(labels):
    k_len = 4097  # longer than the plot: the curves show no end of the sequence
    bias = posenc.alibi_bias(8, 1, k_len, dtype=torch.float64)[:, 0]  # one query, the last
    at_least = bias.softmax(-1).cumsum(-1).flip(-1)  # weight on keys k or more tokens back
    beyond = at_least[:, 1:]  # column D: weight on keys more than D tokens back
    fig, ax = plt.subplots(figsize=(7, 3.8), constrained_layout=True)
    for head, m in enumerate(posenc.alibi_slope_values(8), start=1):
        label = labels["head"].format(h=head, d=round(1 / m))
        ax.plot(range(2049), beyond[head - 1, :2049], label=label)
    ax.axhline(0.01, color="gray", linewidth=0.8, linestyle=":")
    ax.text(2000, 0.012, labels["one"], color="gray", ha="right", va="bottom", fontsize=9)
    ax.set_yscale("log")
    ax.set_ylim(1e-4, 1.2)
    ax.set_xlim(0, 2048)
    ax.set_xlabel(labels["x"])
    ax.set_ylabel(labels["y"])
    ax.legend(fontsize=8, ncol=2, loc="upper right")
    return fig


save_each_language(draw_window, "alibi-window.svg", LABELS)
