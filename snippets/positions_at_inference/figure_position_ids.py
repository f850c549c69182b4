"""Figure: the position ids of a left-padded batch, of packed documents and of a sink cache.

Saved twice, with English and with Chinese labels (same data, computed by posenc).
"""

import matplotlib.pyplot as plt
import torch
from matplotlib.patches import Rectangle

from posenc.positions import (
    document_causal_mask,
    document_ids,
    packed_positions,
    positions_from_mask,
    sink_window_keep,
)
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "padding": "(a) Left padding: a position is the rank among the real tokens",
        "packing": "(b) Packing: positions restart, the mask is block-diagonal",
        "sinks": "(c) Sink cache: 4 sinks + 8 recent tokens, positions closed up",
        "pad": "pad",
        "index": "index",
        "position": "position",
        "row": "position, row {}",
        "text": "in the text",
        "cache": "in the cache",
        "evicted": "evicted",
        "mask": "who sees whom",
    },
    "zh": {
        "padding": "（a）左填充：位置是 token 在真实 token 中的名次",
        "packing": "（b）打包：每篇文档的位置从 0 重新开始，掩码分块对角",
        "sinks": "（c）sink 缓存：4 个 sink 加最近 8 个 token，位置重新连续",
        "pad": "填充",
        "index": "下标",
        "position": "位置",
        "row": "第 {} 行的位置",
        "text": "原文位置",
        "cache": "缓存内位置",
        "evicted": "已逐出",
        "mask": "可见关系",
    },
}
COLORS = ("#c6dbef", "#fdd0a2", "#c7e9c0")  # document / row colours
GREY = "#e0e0e0"


def cells(ax, y, values, colors, x0=0.0, labels=None):
    """One row of boxes with a number in each."""
    for i, (value, color) in enumerate(zip(values, colors, strict=True)):
        ax.add_patch(Rectangle((x0 + i, y), 0.92, 0.8, facecolor=color, edgecolor="none"))
        text = "" if value is None else str(value)
        ax.text(x0 + i + 0.46, y + 0.4, text, ha="center", va="center", fontsize=9)
    if labels:
        ax.text(x0 - 0.3, y + 0.4, labels, ha="right", va="center", fontsize=9)


def draw_position_ids(text):
    fig = plt.figure(figsize=(8.4, 6.0))
    top = fig.add_axes([0.14, 0.69, 0.84, 0.25])
    middle = fig.add_axes([0.14, 0.37, 0.84, 0.25])
    bottom = fig.add_axes([0.14, 0.03, 0.84, 0.27])

    # (a) two rows of a batch, the first padded by 3
    mask = torch.tensor([[0, 0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1]])
    positions = positions_from_mask(mask)
    for row in range(2):
        colors = [GREY if not m else COLORS[row] for m in mask[row].tolist()]
        values = [
            text["pad"] if not m else p
            for m, p in zip(mask[row].tolist(), positions[row].tolist(), strict=True)
        ]
        cells(top, 1.0 - row, values, colors, labels=text["row"].format(row))
    cells(top, 2.0, list(range(7)), ["white"] * 7, labels=text["index"])
    top.set_title(text["padding"], fontsize=10, loc="left")

    # (b) documents of 5 and 7 tokens in one row, and their mask
    lengths = [5, 7]
    packed = packed_positions(lengths)
    docs = document_ids(packed)
    cells(middle, 1.0, packed.tolist(), [COLORS[d] for d in docs.tolist()], labels=text["position"])
    cells(middle, 2.0, list(range(12)), ["white"] * 12, labels=text["index"])
    middle.set_title(text["packing"], fontsize=10, loc="left")
    allowed = document_causal_mask(docs).float()
    shade = allowed * (docs[:, None].float() + 1)  # colour each document's block
    # the 12 x 12 mask drawn right of the row, one small square per (query, key)
    mask_ax = middle.inset_axes([13.0, 0.0, 2.9, 2.9], transform=middle.transData)
    mask_ax.imshow(shade.numpy(), cmap="Blues", vmin=0, vmax=3, interpolation="nearest")
    mask_ax.set_xticks([])
    mask_ax.set_yticks([])
    for spine in mask_ax.spines.values():
        spine.set_visible(False)
    mask_ax.set_title(text["mask"], fontsize=9)

    # (c) 16 tokens seen, 4 sinks and the last 8 kept
    keep = sink_window_keep(16, sinks=4, window=8)
    in_cache = positions_from_mask(keep)
    colors = [COLORS[2] if k else GREY for k in keep.tolist()]
    cells(bottom, 1.6, list(range(16)), colors, labels=text["text"])
    values = [p if k else None for k, p in zip(keep.tolist(), in_cache.tolist(), strict=True)]
    cells(bottom, 0.2, values, colors, labels=text["cache"])
    for i in range(4, 8):
        bottom.text(i + 0.46, 1.2, "×", ha="center", va="center", fontsize=10, color="gray")
    bottom.text(6.0, 0.6, text["evicted"], ha="center", va="center", fontsize=9, color="dimgray")
    for i in (8, 15):
        bottom.annotate(
            "",
            xy=(i + 0.46, 1.0),
            xytext=(i + 0.46, 1.6),
            arrowprops=dict(arrowstyle="->", color="gray", lw=0.8),
        )
    bottom.text(11.9, 1.3, "Δ = 4", ha="center", va="center", fontsize=9)
    bottom.set_title(text["sinks"], fontsize=10, loc="left")

    for ax in (top, middle, bottom):
        ax.set_xlim(0, 16)
        ax.set_ylim(0, 3.0 if ax is not bottom else 2.5)
        ax.axis("off")
    return fig


save_each_language(draw_position_ids, "positions-at-inference-position-ids.svg", LABELS)
