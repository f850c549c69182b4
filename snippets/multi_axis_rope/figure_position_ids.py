"""Figure: the (t, h, w) position ids of 3 text tokens, a 6 x 8-patch image and 4 text tokens.

Saved twice with the same data: multi-axis-rope-position-ids.svg (English labels) and
multi-axis-rope-position-ids.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt
from matplotlib.patches import Patch, Rectangle

from posenc import rope_axes
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "sequence": "index in the sequence",
        "rows": ["t", "h", "w"],
        "text": "text token",
        "image": "image token",
        "strip": "three ids per token (Qwen2-VL, M-RoPE)",
        "grid": "the image's 12 tokens as a 3 × 4 grid: (t, h, w)",
        "row": "h (row)",
        "col": "w (column)",
        "after": "text after the image: 7 = 3 + max(3, 4)",
    },
    "zh": {
        "sequence": "序列中的下标",
        "rows": ["t", "h", "w"],
        "text": "文本 token",
        "image": "图像 token",
        "strip": "每个 token 三个位置编号（Qwen2-VL，M-RoPE）",
        "grid": "图像的 12 个 token 排成 3 × 4 的网格：(t, h, w)",
        "row": "h（行）",
        "col": "w（列）",
        "after": "图像之后的文本：7 = 3 + max(3, 4)",
    },
}
TEXT, IMAGE = "#dbe7f3", "#f6c28b"


def draw_position_ids(labels: dict) -> plt.Figure:
    ids = rope_axes.mrope_position_ids([3, (1, 6, 8), 4])  # (3, 19)
    image = slice(3, 15)
    fig, (strip, grid) = plt.subplots(
        2, 1, figsize=(8.6, 5.4), gridspec_kw={"height_ratios": [1.0, 1.35]}, layout="constrained"
    )
    # top: the sequence, one column per token, one row per axis
    for index in range(ids.shape[1]):
        colour = IMAGE if image.start <= index < image.stop else TEXT
        for row in range(3):
            strip.add_patch(Rectangle((index, 2 - row), 1, 1, facecolor=colour, edgecolor="white"))
            strip.text(
                index + 0.5,
                2.5 - row,
                str(int(ids[row, index])),
                ha="center",
                va="center",
                fontsize=9,
            )
    strip.set_xlim(0, ids.shape[1])
    strip.set_ylim(0, 3)
    strip.set_yticks([2.5, 1.5, 0.5], labels["rows"])
    strip.set_xticks(
        [i + 0.5 for i in range(ids.shape[1])], [str(i) for i in range(ids.shape[1])], fontsize=8
    )
    strip.set_xlabel(labels["sequence"])
    strip.set_title(labels["strip"], fontsize=10)
    strip.tick_params(length=0)
    for side in ("left", "bottom"):
        strip.spines[side].set_visible(False)
    strip.annotate(
        labels["after"], xy=(15.5, 3), xytext=(15.5, 3.55), ha="center", fontsize=9,
        arrowprops={"arrowstyle": "->", "lw": 0.8}, annotation_clip=False,
    )  # fmt: skip
    strip.legend(
        handles=[Patch(facecolor=TEXT, label=labels["text"]), Patch(facecolor=IMAGE, label=labels["image"])],
        loc="upper left", bbox_to_anchor=(0.0, 1.42), ncols=2, frameon=False, fontsize=9,
    )  # fmt: skip
    # bottom: the image tokens where they sit in the picture
    block = ids[:, image].reshape(3, 3, 4)  # (axis, row, column)
    for r in range(3):
        for c in range(4):
            grid.add_patch(Rectangle((c, 2 - r), 1, 1, facecolor=IMAGE, edgecolor="white", lw=2))
            t, h, w = (int(block[axis, r, c]) for axis in range(3))
            grid.text(c + 0.5, 2.5 - r, f"({t}, {h}, {w})", ha="center", va="center", fontsize=10)
    grid.set_xlim(0, 4)
    grid.set_ylim(0, 3)
    grid.set_aspect("equal")
    grid.set_xticks([c + 0.5 for c in range(4)], [str(int(v)) for v in block[2, 0]])
    grid.set_yticks([2.5 - r for r in range(3)], [str(int(v)) for v in block[1, :, 0]])
    grid.set_xlabel(labels["col"])
    grid.set_ylabel(labels["row"])
    grid.set_title(labels["grid"], fontsize=10)
    grid.tick_params(length=0)
    for side in ("left", "bottom"):
        grid.spines[side].set_visible(False)
    return fig


save_each_language(draw_position_ids, "multi-axis-rope-position-ids.svg", LABELS)
