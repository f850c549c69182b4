"""Figure: cosine similarity between position vectors, untrained learned table vs sinusoidal."""

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

import posenc


def similarity(rows):
    rows = F.normalize(rows, dim=-1)
    return rows @ rows.T


def draw_similarity(path="learned-similarity.svg"):
    torch.manual_seed(0)
    learned = posenc.LearnedPositionalEmbedding(max_positions=128, dim=768)
    panels = [
        ("learned table at initialisation", learned.weight.detach()),
        ("sinusoidal", posenc.sinusoidal(128, 768)),
    ]
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.8), constrained_layout=True)
    for ax, (title, rows) in zip(axes, panels, strict=True):
        image = ax.imshow(similarity(rows).numpy(), vmin=-1, vmax=1, cmap="RdBu_r")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("position q")
        ax.set_ylabel("position p")
    fig.colorbar(image, ax=axes, label="cos(E_p, E_q)")
    fig.savefig(path)


draw_similarity()
