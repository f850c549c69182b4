"""Figure: the causal ALiBi bias of several heads of an 8-head model.

Saved twice with the same data: alibi-bias-matrices.svg (English labels) and
alibi-bias-matrices.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt
import numpy as np

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "title": "head {h}, m = 1/{d}",
        "key": "key j",
        "query": "query i",
        "bar": "bias m(j − i)",
    },
    "zh": {
        "title": "第 {h} 个头，m = 1/{d}",
        "key": "key j",
        "query": "query i",
        "bar": "偏置 m(j − i)",
    },
}


def draw_bias_matrices(labels):
    seq, heads_shown = 12, (1, 3, 5, 8)
    bias = posenc.alibi_bias(8, seq).numpy()  # (8, seq, seq), m·(j - i)
    future = np.triu(np.ones((seq, seq), dtype=bool), 1)
    fig, axes = plt.subplots(1, len(heads_shown), figsize=(10, 3.2), constrained_layout=True)
    for ax, head in zip(axes, heads_shown, strict=True):
        shown = np.ma.masked_array(bias[head - 1], mask=future)  # masked keys: left blank
        image = ax.imshow(shown, vmin=-5.5, vmax=0, cmap="viridis")
        slope = posenc.alibi_slope_values(8)[head - 1]
        ax.set_title(labels["title"].format(h=head, d=round(1 / slope)), fontsize=10)
        ax.set_xlabel(labels["key"])
        ax.set_ylabel(labels["query"])
    fig.colorbar(image, ax=axes, shrink=0.8, label=labels["bar"])
    return fig


save_each_language(draw_bias_matrices, "alibi-bias-matrices.svg", LABELS)
