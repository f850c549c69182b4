"""Figure: which keys each query sees in a global layer, a sliding-window layer (w = 4) and a
chunked layer (C = 4), for 16 tokens.

Saved twice with the same data: mixing-layers-masks.svg (English labels) and
mixing-layers-masks.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt
import torch
from matplotlib.colors import ListedColormap

from snippets.figures import save_each_language

LABELS = {
    "en": {
        "titles": ["global (full causal)", "sliding window, w = 4", "chunked, C = 4 (Llama 4)"],
        "key": "key position j",
        "query": "query position i",
    },
    "zh": {
        "titles": ["全局（完整因果）", "滑动窗口，w = 4", "分块，C = 4（Llama 4）"],
        "key": "key 位置 j",
        "query": "query 位置 i",
    },
}


def masks(n: int = 16, size: int = 4) -> list[torch.Tensor]:
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    causal = j <= i
    return [causal, causal & (i - j < size), causal & (i // size == j // size)]


def draw_masks(labels: dict) -> plt.Figure:
    fig, axes = plt.subplots(1, 3, figsize=(9.0, 3.3), layout="constrained")
    for ax, mask, title in zip(axes, masks(), labels["titles"], strict=True):
        ax.imshow(mask.float(), cmap=ListedColormap(["#f2f2f2", "#4c72b0"]), vmin=0, vmax=1)
        ax.set_title(title, fontsize=10)
        ax.set_xticks(range(0, 16, 4))
        ax.set_yticks(range(0, 16, 4))
        ax.set_xlabel(labels["key"], fontsize=9)
        ax.tick_params(labelsize=8, length=0)
        for side in ("left", "bottom"):
            ax.spines[side].set_visible(False)
    axes[0].set_ylabel(labels["query"], fontsize=9)
    return fig


save_each_language(draw_masks, "mixing-layers-masks.svg", LABELS)
