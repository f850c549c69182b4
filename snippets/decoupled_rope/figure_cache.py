"""Figure: numbers cached per token and layer with DeepSeek-V2/V3's attention shape (128 heads of
128 dimensions): MHA, GQA with 8 groups, MQA, and MLA's latent plus its shared rotated key.

Saved twice with the same data: decoupled-rope-cache.svg (English labels) and
decoupled-rope-cache.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt

from snippets.figures import save_each_language

LABELS = {
    "en": {
        "rows": ["MHA: key + value\nper head", "GQA: 8 groups", "MLA: latent +\nshared RoPE key", "MQA: one key + value"],
        "key": "keys and values",
        "latent": "latent c (512)",
        "rope": "rotated key $k^R$ (64)",
        "x": "numbers cached per token and layer (log scale)",
    },
    "zh": {
        "rows": ["MHA：每个头\n一个 key 和 value", "GQA：8 组", "MLA：潜向量 +\n共享的 RoPE key", "MQA：一个 key 和 value"],
        "key": "key 和 value",
        "latent": "潜向量 c（512）",
        "rope": "旋转的 key $k^R$（64）",
        "x": "每个 token 每层缓存的数（对数坐标）",
    },
}  # fmt: skip
COLOURS = {"kv": "#8c8c8c", "latent": "#4c72b0", "rope": "#dd8452"}


def draw_cache(labels: dict) -> plt.Figure:
    heads, head_dim, latent, rope_dim = 128, 128, 512, 64  # DeepSeek-V2/V3
    sizes = [2 * heads * head_dim, 2 * 8 * head_dim, None, 2 * head_dim]
    fig, ax = plt.subplots(figsize=(7.2, 3.0), layout="constrained")
    rows = range(len(sizes))
    for row, size in zip(rows, sizes, strict=True):
        if size is None:  # MLA: the latent, then the rotated key after it
            ax.barh(row, latent, color=COLOURS["latent"], label=labels["latent"])
            ax.barh(row, rope_dim, left=latent, color=COLOURS["rope"], label=labels["rope"])
            ax.text(latent + rope_dim, row, f"  {latent + rope_dim}", va="center", fontsize=9)
        else:
            ax.barh(row, size, color=COLOURS["kv"], label=labels["key"] if row == 0 else None)
            ax.text(size, row, f"  {size}", va="center", fontsize=9)
    ax.set_xscale("log")
    ax.set_xlim(100, 200_000)
    ax.set_yticks(list(rows), labels["rows"], fontsize=9)
    ax.invert_yaxis()
    ax.set_xlabel(labels["x"])
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.legend(loc="lower right", frameon=False, fontsize=8)
    return fig


save_each_language(draw_cache, "decoupled-rope-cache.svg", LABELS)
