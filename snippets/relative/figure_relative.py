"""Figures: Shaw et al.'s clipped index matrix, and T5's bucket index against the relative position."""

import matplotlib.pyplot as plt
import torch

import posenc


def draw_shaw_clip(path="relative-shaw-clip.svg", n=10, k=3):
    index = posenc.relative_positions(n, n).clamp(-k, k)  # clip(j - i, -K, K)
    fig, ax = plt.subplots(figsize=(5, 4.3), constrained_layout=True)
    image = ax.imshow(index.numpy(), cmap="RdBu_r", vmin=-k, vmax=k)
    for i in range(n):
        for j in range(n):
            ax.text(j, i, str(int(index[i, j])), ha="center", va="center", fontsize=8)
    ax.set_xlabel("key position j")
    ax.set_ylabel("query position i")
    ax.set_title(f"clip(j - i, -K, K), K = {k}", fontsize=10)
    fig.colorbar(image, ax=ax, label="embedding used (row = value + K)")
    fig.savefig(path)


def draw_t5_buckets(path="relative-t5-buckets.svg"):
    offsets = torch.arange(-200, 201)
    fig, ax = plt.subplots(figsize=(7, 3.6), constrained_layout=True)
    for bidirectional, label in [(True, "bidirectional (encoder)"), (False, "causal (decoder)")]:
        buckets = posenc.t5_relative_bucket(offsets, bidirectional=bidirectional)
        ax.step(offsets.numpy(), buckets.numpy(), where="mid", label=label)
    ax.axvline(0, color="gray", lw=0.5)
    for edge in (-128, 128):
        ax.axvline(edge, color="gray", lw=0.5, ls=":")
    ax.set_xlabel("relative position j - i")
    ax.set_ylabel("bucket")
    ax.set_title("T5 buckets: 32 buckets, max_distance = 128", fontsize=10)
    ax.legend(fontsize=9)
    fig.savefig(path)


draw_shaw_clip()
draw_t5_buckets()
