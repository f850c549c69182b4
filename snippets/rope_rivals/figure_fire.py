"""Figure: the number FIRE's MLP receives for a key d tokens back, for queries at several
positions, with the range a model trained at 128 tokens has seen.

Saved twice with the same data: rope-rivals-fire.svg (English labels) and
rope-rivals-fire.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "query": "query at i = {i}",
        "x": "distance r = i - j (tokens back)",
        "y": "MLP input u = ψ(r) / ψ(max(L, i))",
        "seen": "inputs seen when training at 128 tokens, while L stays at 512",
    },
    "zh": {
        "query": "query 位于 i = {i}",
        "x": "距离 r = i - j（往回数的 token 数）",
        "y": "MLP 的输入 u = ψ(r) / ψ(max(L, i))",
        "seen": "L 停在 512 时，在 128 个 token 上训练见过的输入",
    },
}


def draw_fire(labels):
    fig, ax = plt.subplots(figsize=(7, 3.8), constrained_layout=True)
    for i in (127, 512, 1024, 4096, 16384):
        u = posenc.fire_inputs(1, i + 1, c=0.1, threshold=512.0)[0].flip(0)  # index = distance
        style = dict(color="black", linestyle=":", zorder=3) if i == 127 else {}  # = 512's curve
        ax.plot(range(1, i + 1), u[1:], label=labels["query"].format(i=i), **style)
    top = float(posenc.fire_inputs(1, 128, c=0.1, threshold=512.0)[0, 0])  # farthest key at 127
    ax.axhspan(0, top, color="gray", alpha=0.15, linewidth=0)
    ax.text(1.2, top + 0.02, labels["seen"], color="gray", fontsize=9)
    ax.set_xscale("log")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(labels["x"])
    ax.set_ylabel(labels["y"])
    ax.legend(fontsize=8, loc="lower right")
    return fig


save_each_language(draw_fire, "rope-rivals-fire.svg", LABELS)
