"""Figure: ALiBi slopes per head, 8 and 12 heads, against a wrong rule that grows.

Saved twice with the same data: alibi-slopes.svg (English labels) and alibi-slopes.zh.svg
(Chinese labels).
"""

import math

import matplotlib.pyplot as plt

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "heads": "{n} heads",
        "wrong": "wrong rule h · 2^(−8/n), 8 heads",
        "x": "head h",
        "y": "slope m (log scale)",
    },
    "zh": {
        "heads": "{n} 个头",
        "wrong": "错误规则 h · 2^(−8/n)，8 个头",
        "x": "第 h 个头",
        "y": "斜率 m（对数坐标）",
    },
}


def growing_slopes(num_heads):
    # the WRONG rule from the "common mistake" box: h * 2^(-8/p)
    p = 2 ** (num_heads.bit_length() - 1)
    slopes = []
    for h in range(1, num_heads + 1):
        slopes.append(h * 2 ** (-8 / p) if h <= p else slopes[h - p - 1] / 2)
    return slopes


def draw_slopes(labels):
    fig, ax = plt.subplots(figsize=(7, 3.8), constrained_layout=True)
    for heads, style in (
        (8, dict(marker="o", markersize=11, markerfacecolor="none")),
        (12, dict(marker="s", markersize=5)),
    ):
        slopes = posenc.alibi_slope_values(heads)
        ax.plot(
            range(1, heads + 1),
            slopes,
            linestyle="none",
            label=labels["heads"].format(n=heads),
            **style,
        )
    ax.plot(
        range(1, 9),
        growing_slopes(8),
        marker="x",
        linestyle="none",
        color="tab:red",
        label=labels["wrong"],
    )
    ax.set_yscale("log", base=2)
    ax.set_xlabel(labels["x"])
    ax.set_ylabel(labels["y"])
    ax.set_xticks(range(1, 13))
    ax.axhline(1.0, color="gray", linewidth=0.8, linestyle=":")
    ax.legend(fontsize=8, loc="lower left")
    assert math.isclose(min(posenc.alibi_slope_values(12)), 2**-8)
    return fig


save_each_language(draw_slopes, "alibi-slopes.svg", LABELS)
