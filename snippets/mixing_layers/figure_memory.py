"""Figure: KV-cache memory of one sequence in Gemma 3 27B against the number of tokens: its
52 local layers (window 1024), its 10 global layers, their sum, and the same model with all 62
layers global. bfloat16, 16 key-value heads of 128 dimensions.

Saved twice with the same data: mixing-layers-memory.svg (English labels) and
mixing-layers-memory.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt

from snippets.figures import save_each_language

LABELS = {
    "en": {
        "lines": [
            "52 local layers",
            "10 global layers",
            "Gemma 3 27B (both)",
            "all 62 layers global",
        ],
        "tokens": "tokens in the sequence",
        "memory": "KV cache (GiB)",
    },
    "zh": {
        "lines": ["52 个局部层", "10 个全局层", "Gemma 3 27B（两者合计）", "62 层全部为全局层"],
        "tokens": "序列中的 token 数",
        "memory": "KV 缓存（GiB）",
    },
}
PER_TOKEN = 2 * 16 * 128 * 2  # K and V, 16 heads, 128 dimensions, 2 bytes: per layer


def curves():
    tokens = [2**k for k in range(10, 18)]  # 1024 .. 131072
    gib = 2**30
    local = [52 * min(n, 1024) * PER_TOKEN / gib for n in tokens]
    global_ = [10 * n * PER_TOKEN / gib for n in tokens]
    total = [a + b for a, b in zip(local, global_, strict=True)]
    dense = [62 * n * PER_TOKEN / gib for n in tokens]
    return tokens, [local, global_, total, dense]


def draw_memory(labels: dict) -> plt.Figure:
    tokens, lines = curves()
    fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
    styles = [(":", "#8fb3de"), ("--", "#4c72b0"), ("-", "#4c72b0"), ("-", "#dd8452")]
    for values, label, (style, colour) in zip(lines, labels["lines"], styles, strict=True):
        ax.plot(tokens, values, style, color=colour, marker="o", markersize=3, label=label)
    ax.set_xscale("log", base=2)
    ax.set_xticks(tokens, ["1k", "2k", "4k", "8k", "16k", "32k", "64k", "128k"])
    ax.set_xlabel(labels["tokens"])
    ax.set_ylabel(labels["memory"])
    ax.legend(frameon=False, fontsize=9)
    return fig


save_each_language(draw_memory, "mixing-layers-memory.svg", LABELS)
