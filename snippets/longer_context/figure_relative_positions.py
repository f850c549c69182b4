"""Figure: the relative position each (query i, key j) pair is rotated by, for 40 tokens and a
model trained on 16 (relative positions 0 .. 15): plain RoPE, Self-Extend (group size 4,
neighbour window 8) and Dual Chunk Attention (chunks of 12, queries placed at most at 15).
Cells whose relative position the model never saw in training are hatched.

Saved twice with the same data: longer-context-relative-positions.svg (English labels) and
longer-context-relative-positions.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch

from snippets.figures import save_each_language

LABELS = {
    "en": {"titles": ("plain RoPE", "Self-Extend (G = 4, w = 8)", "DCA (s = 12, s + local = 15)"),
           "query": "query i", "key": "key j", "colour": "relative position",
           "unseen": "never seen in training (≥ 16)"},
    "zh": {"titles": ("普通 RoPE", "Self-Extend（G = 4，w = 8）", "DCA（s = 12，s + local = 15）"),
           "query": "query i", "key": "key j", "colour": "相对位置",
           "unseen": "训练中没见过（≥ 16）"},
}  # fmt: skip
N, TRAINED, GROUP, WINDOW, CHUNK, LOCAL = 40, 16, 4, 8, 12, 3


def relative_positions() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three matrices, as longer_context.py's self_extend_relative and dca_relative compute
    them (causal: entries with j > i are NaN)."""
    i, j = np.arange(N)[:, None], np.arange(N)[None, :]
    plain = (i - j).astype(float)
    grouped = i // GROUP - j // GROUP + WINDOW - WINDOW // GROUP
    self_extend = np.where(i - j < WINDOW, i - j, grouped).astype(float)
    top = CHUNK + LOCAL
    succ = np.minimum(CHUNK + i % CHUNK, top)
    q_pos = np.where(i // CHUNK == j // CHUNK, i % CHUNK,
                     np.where(i // CHUNK - j // CHUNK == 1, succ, min(2 * CHUNK - 1, top)))  # fmt: skip
    dca = (q_pos - j % CHUNK).astype(float)
    for m in (plain, self_extend, dca):
        m[j > i] = np.nan
    return plain, self_extend, dca


def draw_relative_positions(labels: dict) -> plt.Figure:
    fig, axes = plt.subplots(1, 3, figsize=(7.6, 2.9), layout="constrained", sharey=True)
    for ax, title, matrix in zip(axes, labels["titles"], relative_positions(), strict=True):
        image = ax.imshow(np.minimum(matrix, N), cmap="viridis", vmin=0, vmax=N - 1,
                          interpolation="nearest")  # fmt: skip
        unseen = np.where(matrix >= TRAINED, 1.0, np.nan)
        ax.contourf(unseen, levels=[0.5, 1.5], colors="none", hatches=["////"])
        ax.set_title(title, fontsize=8.5)
        ax.set_xlabel(labels["key"], fontsize=8)
        ax.set_xticks([0, 10, 20, 30, 39])
        ax.tick_params(labelsize=7)
    axes[0].set_ylabel(labels["query"], fontsize=8)
    bar = fig.colorbar(image, ax=axes, shrink=0.85, pad=0.02)
    bar.set_label(labels["colour"], fontsize=8)
    bar.ax.tick_params(labelsize=7)
    hatched = Patch(facecolor="white", edgecolor="0.2", hatch="////", label=labels["unseen"])
    axes[0].legend(handles=[hatched], loc="upper right", fontsize=6.5, frameon=False)
    return fig


save_each_language(draw_relative_positions, "longer-context-relative-positions.svg", LABELS)
