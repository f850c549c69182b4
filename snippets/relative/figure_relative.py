"""Figures of the chapter: Shaw et al.'s clipped index matrix, Transformer-XL's relative shift,
and T5's bucket index against the relative position.

Each is saved twice with the same data: relative-<what>.svg (English labels) and
relative-<what>.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt
import torch
from matplotlib.patches import Patch, Rectangle

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "key": "key position j",
        "query": "query position i",
        "clip_title": "clip(j − i, −K, K), K = {k}",
        "clip_bar": "embedding used (row = value + K)",
        "column": "column c",
        "query_row": "query i",
        "key_col": "key j",
        "before": "before: column c holds distance k_len − 1 − c",
        "after": "after the shift: column j holds distance i + mem − j",
        "moved": "moved left",
        "sizes": "q_len = {q} queries, k_len = {k} keys, the first mem = {m} from the cache",
        "padded": "the padded zero",
        "wrapped": "wrapped in from the next row",
        "masked": "masked by the causal mask:",
        "offset": "relative position j − i",
        "bucket": "bucket",
        "both": "bidirectional (encoder)",
        "causal": "causal (decoder)",
        "t5_title": "T5 buckets: 32 buckets, max_distance = 128",
    },
    "zh": {
        "key": "key 的位置 j",
        "query": "query 的位置 i",
        "clip_title": "clip(j − i, −K, K)，K = {k}",
        "clip_bar": "取用的嵌入（行号 = 值 + K）",
        "column": "第 c 列",
        "query_row": "query i",
        "key_col": "key j",
        "before": "移位前：第 c 列是距离 k_len − 1 − c",
        "after": "移位后：第 j 列是距离 i + mem − j",
        "moved": "左移格数",
        "sizes": "q_len = {q} 个 query，k_len = {k} 个 key，其中前 mem = {m} 个来自缓存",
        "padded": "补进来的 0",
        "wrapped": "从下一行绕过来的值",
        "masked": "被因果掩码去掉：",
        "offset": "相对位置 j − i",
        "bucket": "桶编号",
        "both": "双向（编码器）",
        "causal": "因果（解码器）",
        "t5_title": "T5 分桶：32 个桶，max_distance = 128",
    },
}
ROW_COLOURS = ["#cfe2f3", "#d9ead3", "#fff2cc", "#f4cccc"]  # one pale colour per query row


def draw_shaw_clip(labels: dict, n: int = 10, k: int = 3) -> plt.Figure:
    index = posenc.relative_positions(n, n).clamp(-k, k)  # clip(j - i, -K, K)
    fig, ax = plt.subplots(figsize=(5, 4.3), constrained_layout=True)
    image = ax.imshow(index.numpy(), cmap="RdBu_r", vmin=-k, vmax=k)
    for i in range(n):
        for j in range(n):
            value = int(index[i, j])
            colour = "white" if abs(value) >= 2 else "black"  # readable on the dark cells
            ax.text(j, i, str(value), ha="center", va="center", fontsize=8, color=colour)
    ax.set_xlabel(labels["key"])
    ax.set_ylabel(labels["query"])
    ax.set_title(labels["clip_title"].format(k=k), fontsize=10)
    fig.colorbar(image, ax=ax, label=labels["clip_bar"])
    return fig


def _shift(x: torch.Tensor) -> torch.Tensor:
    """Transformer-XL's relative shift: pad a zero column, view as (k_len + 1, q_len), drop a row."""
    q_len, k_len = x.shape
    padded = torch.cat([x.new_zeros(q_len, 1), x], dim=1)
    return padded.view(k_len + 1, q_len)[1:].view(q_len, k_len)


def draw_relative_shift(labels: dict, q_len: int = 4, mem: int = 3) -> plt.Figure:
    k_len = q_len + mem
    distance = torch.arange(k_len - 1, -1, -1).expand(q_len, k_len)  # column c: k_len - 1 - c
    row = torch.arange(q_len)[:, None].expand(q_len, k_len)
    # tag each entry with the row it came from (0 is left for the padded zero), then shift
    shifted = _shift((row + 1) * 100 + distance)
    origin, value = shifted // 100 - 1, shifted % 100
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), constrained_layout=True)
    panels = [
        (axes[0], row, distance, labels["before"], labels["column"]),
        (axes[1], origin, value, labels["after"], labels["key_col"]),
    ]
    for ax, rows, values, title, xlabel in panels:
        for i in range(q_len):
            for j in range(k_len):
                masked = ax is axes[1] and j > mem + i  # above the causal diagonal
                padded = int(rows[i, j]) < 0
                colour = "white" if padded else ROW_COLOURS[int(rows[i, j])]
                ax.add_patch(
                    Rectangle(
                        (j - 0.5, i - 0.5),
                        1,
                        1,
                        facecolor=colour,
                        edgecolor="#999999",
                        hatch="///" if masked else None,
                    )
                )
                text = "0" if padded else str(int(values[i, j]))
                ax.text(j, i, text, ha="center", va="center", color="#777777" if masked else "k")
        ax.set_xlim(-0.5, k_len - 0.5)
        ax.set_ylim(q_len - 0.5, -0.5)
        ax.set_aspect("equal")
        ax.set_xticks(range(k_len))
        ax.set_yticks(range(q_len))
        ax.set_xlabel(xlabel)
        ax.set_ylabel(labels["query_row"])
        ax.set_title(title, fontsize=10)
    for i in range(q_len):  # row i moves left by q_len - 1 - i places
        axes[1].text(k_len - 0.2, i, f"← {q_len - 1 - i}", va="center", fontsize=9)
    axes[1].text(k_len - 0.3, -0.75, labels["moved"], fontsize=8)
    legend = [
        Patch(facecolor="white", edgecolor="#999999", hatch="///", label=labels["padded"]),
        Patch(facecolor=ROW_COLOURS[1], edgecolor="#999999", hatch="///", label=labels["wrapped"]),
    ]
    axes[1].legend(
        handles=legend,
        title=labels["masked"],
        loc="upper center",
        bbox_to_anchor=(0.5, -0.28),
        ncol=2,
        fontsize=8,
        title_fontsize=8,
        frameon=False,
    )
    fig.suptitle(labels["sizes"].format(q=q_len, k=k_len, m=mem), fontsize=10)
    return fig


def draw_t5_buckets(labels: dict) -> plt.Figure:
    offsets = torch.arange(-200, 201)
    fig, ax = plt.subplots(figsize=(7, 3.6), constrained_layout=True)
    ax.axvline(0, color="gray", lw=0.5)
    for bidirectional, label in [(True, labels["both"]), (False, labels["causal"])]:
        buckets = posenc.t5_relative_bucket(offsets, bidirectional=bidirectional)
        (line,) = ax.step(offsets.numpy(), buckets.numpy(), where="mid", label=label)
        # dotted: where each direction reaches its last bucket (flat from there on)
        for side in (buckets[offsets <= 0], buckets[offsets >= 0]):
            if side.max() > 0:
                first = offsets[buckets == side.max()]
                edge = first.max() if first.max() <= 0 else first.min()
                ax.axvline(int(edge), color=line.get_color(), lw=0.8, ls=":")
    ax.set_xlabel(labels["offset"])
    ax.set_ylabel(labels["bucket"])
    ax.set_title(labels["t5_title"], fontsize=10)
    ax.legend(fontsize=9)
    return fig


save_each_language(draw_shaw_clip, "relative-shaw-clip.svg", LABELS)
save_each_language(draw_relative_shift, "relative-shift.svg", LABELS)
save_each_language(draw_t5_buckets, "relative-t5-buckets.svg", LABELS)
