"""Figure: RoPE scores against distance next to RoFormer's upper bound (§3.4.3), for aligned
q = k = 1 and for one random pair q, k.

Saved twice with the same data: rope-long-range.svg (English labels) and
rope-long-range.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt
import numpy as np

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "aligned": "q = k = 1 (every pair aligned)",
        "random": "one random pair q, k",
        "bound": "RoFormer's upper bound",
        "score": "|score|",
        "x": "relative distance r = m − n",
        "y": "divided by d",
    },
    "zh": {
        "aligned": "q = k = 1（每对维度都对齐）",
        "random": "一对随机的 q、k",
        "bound": "RoFormer 的上界",
        "score": "|分数|",
        "x": "相对距离 r = m − n",
        "y": "除以 d",
    },
}


def score_and_bound(q: np.ndarray, k: np.ndarray, phases: np.ndarray):
    """|Re sum_i h_i e^{i r theta_i}| and (max_i |h_{i+1} - h_i|) sum_j |S_j| for every r."""
    h = q * np.conj(k)  # pairs as complex numbers
    score = np.abs((h * phases).real.sum(axis=1))
    steps = np.abs(np.diff(np.append(h, 0)))  # h_{d/2} = 0
    bound = steps.max() * np.abs(np.cumsum(phases, axis=1)).sum(axis=1)
    return score, bound


def draw_long_range(labels: dict) -> plt.Figure:
    head_dim = 64
    inv_freq = posenc.default_inv_freq(head_dim).double().numpy()
    # every distance up to 100, then about 1000 more spread evenly on the log axis up to 4096
    distances = np.unique(np.r_[np.arange(101), np.round(np.geomspace(100, 4096, 1000))])
    phases = np.exp(1j * distances[:, None] * inv_freq[None, :])  # (distance, d/2)
    rng = np.random.default_rng(0)
    pair = rng.standard_normal((2, head_dim // 2)) + 1j * rng.standard_normal((2, head_dim // 2))
    ones = np.full(head_dim // 2, 1 + 1j)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True, constrained_layout=True)
    for ax, (q, k), title, colour in (
        (axes[0], (ones, ones), labels["aligned"], "tab:blue"),
        (axes[1], (pair[0], pair[1]), labels["random"], "tab:orange"),
    ):
        score, bound = score_and_bound(q, k, phases)
        ax.plot(distances, bound / head_dim, color="black", label=labels["bound"])
        ax.plot(distances, score / head_dim, color=colour, linewidth=0.7, label=labels["score"])
        ax.set_xscale("symlog", linthresh=10)
        ax.set_yscale("log")
        ax.set_ylim(1e-3, 100)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(labels["x"])
        ax.legend(fontsize=8, loc="lower left")
    axes[0].set_ylabel(labels["y"])
    return fig


save_each_language(draw_long_range, "rope-long-range.svg", LABELS)
