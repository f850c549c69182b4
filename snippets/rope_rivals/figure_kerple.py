"""Figure: KERPLE's biases against the distance, next to ALiBi's, and the share of the weight
they leave beyond a distance when every content score is equal.

Saved twice with the same data: rope-rivals-kerple.svg (English labels) and
rope-rivals-kerple.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt
import torch

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "log": "log, r1 = {a:g}, r2 = 1",
        "power": "power, r1 = 1, r2 = 0.5",
        "alibi": "ALiBi, m = 1/16",
        "x": "distance r = i - j",
        "bias": "bias",
        "share": "share of the weight beyond D",
        "D": "distance D",
        "left": "bias per head",
        "right": "16384 keys, equal content scores",
    },
    "zh": {
        "log": "对数核，r1 = {a:g}，r2 = 1",
        "power": "幂核，r1 = 1，r2 = 0.5",
        "alibi": "ALiBi，m = 1/16",
        "x": "距离 r = i - j",
        "bias": "偏置",
        "share": "距离 D 之外的权重占比",
        "D": "距离 D",
        "left": "每个头的偏置",
        "right": "16384 个 key，内容分数全部相同",
    },
}


def draw_kerple(labels):
    k_len = 16384
    one = torch.ones(1, dtype=torch.float64)
    rows = {}
    for a in (0.5, 1.0, 2.0):  # one query (the last token) against every key
        rows[labels["log"].format(a=a)] = posenc.kerple_bias(1, k_len, r1=a * one, r2=one)[0, 0]
    rows[labels["power"]] = posenc.kerple_bias(1, k_len, r1=one, r2=0.5 * one, kernel="power")[0, 0]
    rows[labels["alibi"]] = posenc.alibi_bias(8, 1, k_len, dtype=torch.float64)[3, 0]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6), constrained_layout=True)
    distance = torch.arange(k_len - 1, -1, -1)  # key j lies k_len - 1 - j tokens back
    near = distance <= 200
    for n, (name, row) in enumerate(rows.items()):
        style = dict(linestyle="--", color="black") if n == len(rows) - 1 else {}
        left.plot(distance[near], row[near], label=name, **style)
        beyond = row.softmax(-1).flip(-1).cumsum(-1)  # weight on keys up to D back
        right.plot(range(1, k_len), (1 - beyond[:-1]).clamp(min=1e-12)[: k_len - 1], **style)
    left.set_xlabel(labels["x"])
    left.set_ylabel(labels["bias"])
    left.set_ylim(-14, 0.5)
    left.set_title(labels["left"], fontsize=10)
    left.legend(fontsize=8)
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_ylim(1e-4, 1.2)
    right.set_xlabel(labels["D"])
    right.set_ylabel(labels["share"])
    right.set_title(labels["right"], fontsize=10)
    return fig


save_each_language(draw_kerple, "rope-rivals-kerple.svg", LABELS)
