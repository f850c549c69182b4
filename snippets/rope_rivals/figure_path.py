"""Figure: PaTH's scores for one query vector and one key vector written at every position,
with the same transition at every token and with a transition per token.

Saved twice with the same data: rope-rivals-path.svg (English labels) and
rope-rivals-path.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt
import torch

from snippets.figures import save_each_language

LABELS = {
    "en": {
        "fixed": "the same H at every token: depends on i - j",
        "tokens": "H_t from each token: depends on what lies between",
        "query": "query i",
        "key": "key j",
        "score": "score",
    },
    "zh": {
        "fixed": "每个 token 的 H 相同：只取决于 i - j",
        "tokens": "H_t 由各自的 token 算出：取决于中间的内容",
        "query": "query i",
        "key": "key j",
        "score": "分数",
    },
}


def scores(q, k, w, beta):
    """s_ij = q^T H_i ... H_(j+1) k with H_t = I - beta_t w_t w_t^T, for j <= i; NaN above."""
    T, d = w.shape
    H = torch.eye(d, dtype=w.dtype) - beta[:, None, None] * w[:, :, None] * w[:, None, :]
    out = torch.full((T, T), float("nan"), dtype=w.dtype)
    for i in range(T):
        P = torch.eye(d, dtype=w.dtype)
        for j in range(i, -1, -1):
            out[i, j] = q @ P @ k
            P = P @ H[j]
    return out


def draw_path(labels):
    torch.manual_seed(0)
    T, d = 24, 8
    q, k = torch.randn(2, d, dtype=torch.float64).unbind(0)
    w = torch.nn.functional.normalize(torch.randn(T, d, dtype=torch.float64), dim=-1)
    beta = 2 * torch.sigmoid(torch.randn(T, dtype=torch.float64))
    panels = {
        # one transition for all tokens, beta = 1.9: H^n k alternates as (1 - beta)^n = (-0.9)^n
        labels["fixed"]: scores(q, k, w[:1].expand(T, d), torch.full((T,), 1.9, dtype=w.dtype)),
        labels["tokens"]: scores(q, k, w, beta),
    }
    fig, axes = plt.subplots(1, 2, figsize=(9, 4), constrained_layout=True)
    limit = max(float(s.nan_to_num().abs().max()) for s in panels.values())
    for ax, (title, s) in zip(axes, panels.items(), strict=True):
        image = ax.imshow(s, cmap="RdBu_r", vmin=-limit, vmax=limit)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(labels["key"])
        ax.set_ylabel(labels["query"])
    fig.colorbar(image, ax=axes, shrink=0.8, label=labels["score"])
    return fig


save_each_language(draw_path, "rope-rivals-path.svg", LABELS)
