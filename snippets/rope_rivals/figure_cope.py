"""Figure: CoPE's positions p_ij for a short text, with every gate open and with gates open on
full stops only.

Saved twice with the same data: rope-rivals-cope.svg (English labels) and
rope-rivals-cope.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt
import torch

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "open": "every gate open: p = i - j + 1",
        "stops": "gates open on '.' only: p counts sentences",
        "query": "query i",
        "key": "key j",
        "p": "position p_ij",
    },
    "zh": {
        "open": "门全部打开：p = i - j + 1",
        "stops": "门只在句号处打开：p 数的是句子",
        "query": "query i",
        "key": "key j",
        "p": "位置 p_ij",
    },
}


def draw_cope(labels):
    text = "we run. it fails. we fix it."
    n = len(text)
    is_stop = torch.tensor([ch == "." for ch in text])
    gates = {
        labels["open"]: torch.full((n, n), 40.0),
        labels["stops"]: torch.where(is_stop, 10.0, -10.0).expand(n, n),
    }
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 4.4), constrained_layout=True)
    future = torch.ones(n, n, dtype=torch.bool).triu(1)
    for ax, (title, logits) in zip(axes, gates.items(), strict=True):
        p = posenc.cope_positions(logits).masked_fill(future, float("nan"))
        image = ax.imshow(p, cmap="viridis")
        ax.set_title(title, fontsize=10)
        ticks = range(n)
        ax.set_xticks(ticks, [ch if ch != " " else "␣" for ch in text], fontsize=6)
        ax.set_yticks(ticks, [ch if ch != " " else "␣" for ch in text], fontsize=6)
        ax.set_xlabel(labels["key"])
        ax.set_ylabel(labels["query"])
        fig.colorbar(image, ax=ax, shrink=0.8, label=labels["p"])
    return fig


save_each_language(draw_cope, "rope-rivals-cope.svg", LABELS)
