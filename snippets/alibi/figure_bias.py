"""Figure: the causal ALiBi bias of several heads of an 8-head model."""

import matplotlib.pyplot as plt
import numpy as np

import posenc


def draw_bias_matrices(path="alibi-bias-matrices.svg"):
    seq, heads_shown = 12, (1, 3, 5, 8)
    bias = posenc.alibi_bias(8, seq).numpy()  # (8, seq, seq), -m·(i - j)
    future = np.triu(np.ones((seq, seq), dtype=bool), 1)
    fig, axes = plt.subplots(1, len(heads_shown), figsize=(10, 3.2), constrained_layout=True)
    for ax, head in zip(axes, heads_shown, strict=True):
        shown = np.ma.masked_array(bias[head - 1], mask=future)  # masked keys: left blank
        image = ax.imshow(shown, vmin=-5.5, vmax=0, cmap="viridis")
        slope = posenc.alibi_slope_values(8)[head - 1]
        ax.set_title(f"head {head}, m = 1/{round(1 / slope)}", fontsize=10)
        ax.set_xlabel("key j")
        ax.set_ylabel("query i")
    fig.colorbar(image, ax=axes, shrink=0.8, label="bias -m(i-j)")
    fig.savefig(path)


draw_bias_matrices()
