"""Figure: stick-breaking attention's weights from the last query: geometric in the distance
when every score is equal, and the nearest of two matching keys taking almost everything.

Saved twice with the same data: rope-rivals-stick-breaking.svg (English labels) and
rope-rivals-stick-breaking.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from snippets.figures import save_each_language

LABELS = {
    "en": {
        "equal": "every score z = {z:g}",
        "softmax": "softmax, any equal scores",
        "x": "distance i - j (tokens back)",
        "y": "attention weight",
        "left": "equal content scores, no position encoding",
        "right": "two matching keys (z = 8), all others z = -8",
        "sb": "stick-breaking",
    },
    "zh": {
        "equal": "所有分数 z = {z:g}",
        "softmax": "softmax，分数相同时",
        "x": "距离 i - j（往回数的 token 数）",
        "y": "注意力权重",
        "left": "内容分数全部相同，不用位置编码",
        "right": "两个匹配的 key（z = 8），其余 z = -8",
        "sb": "stick-breaking",
    },
}


def last_row(z):
    """Stick-breaking weights of the last query over the keys before it (index = distance - 1)."""
    z = z.flip(0)  # nearest key first
    log_rest = F.logsigmoid(-z)
    before = torch.cat([torch.zeros(1, dtype=z.dtype), log_rest.cumsum(0)[:-1]])
    return (F.logsigmoid(z) + before).exp()


def draw_stick_breaking(labels):
    T = 64
    distance = torch.arange(1, T)
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6), constrained_layout=True)
    for z in (-2.0, 0.0, 2.0):
        left.plot(distance, last_row(torch.full((T - 1,), z, dtype=torch.float64)),
                  label=labels["equal"].format(z=z))  # fmt: skip
    left.plot(distance, torch.full((T - 1,), 1 / (T - 1)), color="black", linestyle="--",
              label=labels["softmax"])  # fmt: skip
    left.set_yscale("log")
    left.set_ylim(1e-6, 1)
    z = torch.full((T - 1,), -8.0, dtype=torch.float64)
    z[[T - 1 - 2, T - 1 - 9]] = 8.0  # keys 2 and 9 tokens back
    width = 0.4
    right.bar(distance - width / 2, last_row(z), width, label=labels["sb"], color="C3")
    right.bar(distance + width / 2, z.flip(0).softmax(0), width, label="softmax", color="gray")
    right.set_xlim(0, 14)
    for ax, title in ((left, labels["left"]), (right, labels["right"])):
        ax.set_xlabel(labels["x"])
        ax.set_ylabel(labels["y"])
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8)
    return fig


save_each_language(draw_stick_breaking, "rope-rivals-stick-breaking.svg", LABELS)
