"""Figure: attention weights for a sentence and its reordering, without and with positions."""

import matplotlib.pyplot as plt
import torch

import posenc


def attention_weights(tokens, embedding, w_q, w_k, with_position):
    h = torch.stack([embedding[t] for t in tokens])
    if with_position:
        h = h + posenc.sinusoidal(len(tokens), h.shape[-1])
    scores = (h @ w_q) @ (h @ w_k).T / h.shape[-1] ** 0.5
    return scores.softmax(dim=-1)


def draw_attention_maps(path="why-position-attention-maps.svg"):
    torch.manual_seed(0)
    dim = 16
    embedding = {w: torch.randn(dim) for w in ["dog", "bites", "man"]}
    w_q, w_k = torch.randn(dim, dim) / dim**0.5, torch.randn(dim, dim) / dim**0.5
    sentences = [["dog", "bites", "man"], ["man", "bites", "dog"]]
    fig, axes = plt.subplots(2, 2, figsize=(7, 6.4), constrained_layout=True)
    for row, with_position in enumerate([False, True]):
        for col, tokens in enumerate(sentences):
            weights = attention_weights(tokens, embedding, w_q, w_k, with_position)
            ax = axes[row, col]
            ax.imshow(weights.numpy(), vmin=0, vmax=1, cmap="viridis")
            for i in range(3):
                for j in range(3):
                    value = weights[i, j].item()
                    ax.text(
                        j,
                        i,
                        f"{value:.2f}",
                        ha="center",
                        va="center",
                        color="white" if value < 0.5 else "black",
                    )
            ax.set_xticks(range(3), tokens)
            ax.set_yticks(range(3), tokens)
            label = "with" if with_position else "no"
            ax.set_title(f'"{" ".join(tokens)}", {label} positions', fontsize=10)
    fig.savefig(path)


draw_attention_maps()
