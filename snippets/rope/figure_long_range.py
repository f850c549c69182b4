"""Figure: RoPE scores against distance, the paper's bound factor, aligned and random q, k."""

import matplotlib.pyplot as plt
import numpy as np

import posenc


def draw_long_range(path="rope-long-range.svg"):
    head_dim = 64
    inv_freq = posenc.default_inv_freq(head_dim).double().numpy()
    distances = np.arange(0, 4097)
    phases = np.exp(1j * distances[:, None] * inv_freq[None, :])  # (distance, d/2)
    bound = np.abs(np.cumsum(phases, axis=1)).mean(axis=1)  # (1/(d/2)) Σ_j |S_j|
    aligned = phases.real.mean(axis=1)  # q = k = all ones, divided by head_dim
    rng = np.random.default_rng(0)
    pairs = rng.standard_normal((2, head_dim // 2)) + 1j * rng.standard_normal((2, head_dim // 2))
    one_random = (pairs[0] * np.conj(pairs[1]) * phases).real.sum(axis=1) / head_dim
    fig, ax = plt.subplots(figsize=(7.5, 3.8), constrained_layout=True)
    ax.plot(distances, bound / bound[0], label="bound factor (scaled to 1 at 0)", color="black")
    ax.plot(distances, aligned, label="q = k = all ones (score / d)", color="tab:blue")
    ax.plot(
        distances,
        one_random,
        label="one random q, k (score / d)",
        color="tab:orange",
        linewidth=0.6,
        alpha=0.8,
    )
    ax.set_xscale("symlog", linthresh=10)
    ax.set_xlabel("relative distance m - n")
    ax.set_ylabel("score")
    ax.axhline(0, color="gray", linewidth=0.6)
    ax.legend(fontsize=8)
    fig.savefig(path)


draw_long_range()
