"""Figure: which axis (t, h, w) each of the 64 frequency pairs of a 128-dimensional head follows,
in Qwen2-VL's contiguous sections and Qwen3-VL's interleaved order, against the pair's period.

Saved twice with the same data: multi-axis-rope-frequency-axes.svg (English labels) and
multi-axis-rope-frequency-axes.zh.svg (Chinese labels).
"""

import math

import matplotlib.pyplot as plt
from matplotlib.patches import Patch, Rectangle

import posenc
from posenc import rope_axes
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "layouts": [
            "contiguous [16, 24, 24]\n(Qwen2-VL, Qwen2.5-VL)",
            "interleaved [24, 20, 20]\n(Qwen3-VL)",
        ],
        "axes": ["t (time)", "h (row)", "w (column)"],
        "pair": "frequency pair j (fast on the left, slow on the right)",
        "period": "period 2π/θⱼ in positions (rope_theta 10⁶)",
    },
    "zh": {
        "layouts": [
            "分段 [16, 24, 24]\n（Qwen2-VL、Qwen2.5-VL）",
            "交错 [24, 20, 20]\n（Qwen3-VL）",
        ],
        "axes": ["t（时间）", "h（行）", "w（列）"],
        "pair": "频率对 j（左快右慢）",
        "period": "周期 2π/θⱼ，单位为位置（rope_theta 10⁶）",
    },
}
COLOURS = ["#4c72b0", "#dd8452", "#55a868"]  # t, h, w


def draw_frequency_axes(labels: dict) -> plt.Figure:
    layouts = [
        rope_axes.mrope_axes([16, 24, 24]),
        rope_axes.mrope_axes([24, 20, 20], interleaved=True),
    ]
    inv_freq = posenc.default_inv_freq(128, 1e6)
    fig, ax = plt.subplots(figsize=(8.6, 2.9), layout="constrained")
    for row, axes in enumerate(layouts):
        for j, axis in enumerate(axes):
            ax.add_patch(
                Rectangle((j, 1 - row), 1, 0.8, facecolor=COLOURS[axis], edgecolor="white", lw=0.6)
            )
    ax.set_xlim(0, 64)
    ax.set_ylim(-0.1, 1.9)
    ax.set_yticks([1.4, 0.4], labels["layouts"], fontsize=9)
    ticks = [0, 16, 32, 40, 48, 63]
    ax.set_xticks([j + 0.5 for j in ticks], [str(j) for j in ticks])
    ax.set_xlabel(labels["pair"])
    ax.tick_params(length=0)
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)
    top = ax.secondary_xaxis("top")
    top.set_xticks(
        [j + 0.5 for j in ticks],
        [f"{2 * math.pi / inv_freq[j].item():,.0f}" for j in ticks],
        fontsize=8,
    )
    top.set_xlabel(labels["period"], fontsize=9)
    top.tick_params(length=0)
    top.spines["top"].set_visible(False)
    ax.legend(
        handles=[Patch(facecolor=c, label=name) for c, name in zip(COLOURS, labels["axes"], strict=True)],
        loc="upper center", bbox_to_anchor=(0.5, -0.32), ncols=3, frameon=False, fontsize=9,
    )  # fmt: skip
    return fig


save_each_language(draw_frequency_axes, "multi-axis-rope-frequency-axes.svg", LABELS)
