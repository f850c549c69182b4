"""Figure: attention weights for a sentence and its reordering, without and with positions.

Saved twice with the same data: why-position-attention-maps.svg (English words and labels)
and why-position-attention-maps.zh.svg (the same three tokens as 狗、咬、人).
"""

import matplotlib.pyplot as plt
import torch

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "words": ["dog", "bites", "man"],
        "joiner": " ",
        "title": '"{sentence}", {label} positions',
        "no": "no",
        "with": "with",
    },
    "zh": {
        "words": ["狗", "咬", "人"],
        "joiner": "",
        "title": "“{sentence}”，{label}位置编码",
        "no": "无",
        "with": "加",
    },
}


def attention_weights(token_ids, embedding, w_q, w_k, with_position):
    h = embedding[token_ids]
    if with_position:
        h = h + posenc.sinusoidal(len(token_ids), h.shape[-1])
    scores = (h @ w_q) @ (h @ w_k).T / h.shape[-1] ** 0.5
    return scores.softmax(dim=-1)


def draw_attention_maps(text):
    torch.manual_seed(0)
    dim = 16
    embedding = torch.randn(3, dim)  # one random vector per word: dog, bites, man
    w_q, w_k = torch.randn(dim, dim) / dim**0.5, torch.randn(dim, dim) / dim**0.5
    sentences = [[0, 1, 2], [2, 1, 0]]  # "dog bites man" and "man bites dog"
    fig, axes = plt.subplots(2, 2, figsize=(7, 6.4), constrained_layout=True)
    for row, with_position in enumerate([False, True]):
        for col, ids in enumerate(sentences):
            weights = attention_weights(torch.tensor(ids), embedding, w_q, w_k, with_position)
            words = [text["words"][i] for i in ids]
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
            ax.set_xticks(range(3), words)
            ax.set_yticks(range(3), words)
            label = text["with"] if with_position else text["no"]
            sentence = text["joiner"].join(words)
            ax.set_title(text["title"].format(sentence=sentence, label=label), fontsize=10)
    return fig


save_each_language(draw_attention_maps, "why-position-attention-maps.svg", LABELS)
