"""Figure: cosine similarity between position vectors, untrained learned table vs sinusoidal.

Saved twice with the same data: learned-similarity.svg (English labels) and
learned-similarity.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "learned": "learned table at initialisation",
        "sinusoidal": "sinusoidal",
        "x": "position q",
        "y": "position p",
    },
    "zh": {
        "learned": "初始化时的位置嵌入表",
        "sinusoidal": "正弦位置编码",
        "x": "位置 q",
        "y": "位置 p",
    },
}


def similarity(rows: torch.Tensor) -> torch.Tensor:
    """Cosine similarity of every pair of rows: entry (p, q) is cos(E_p, E_q)."""
    rows = F.normalize(rows, dim=-1)
    return rows @ rows.T


def draw_similarity(labels: dict[str, str]) -> plt.Figure:
    torch.manual_seed(0)
    learned = posenc.LearnedPositionalEmbedding(max_positions=128, dim=768)
    panels = [
        (labels["learned"], learned.weight.detach()),
        (labels["sinusoidal"], posenc.sinusoidal(128, 768)),
    ]
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.8), constrained_layout=True)
    for ax, (title, rows) in zip(axes, panels, strict=True):
        image = ax.imshow(similarity(rows).numpy(), vmin=-1, vmax=1, cmap="RdBu_r")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(labels["x"])
        ax.set_ylabel(labels["y"])
    fig.colorbar(image, ax=axes, label=r"$\cos(E_p, E_q)$")
    return fig


save_each_language(draw_similarity, "learned-similarity.svg", LABELS)
