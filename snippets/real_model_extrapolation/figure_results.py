"""Figures of the SmolLM2 experiment (experiments/smollm2/results/full.json):

- passkey: needles found by input length and depth, one panel per method;
- perplexity: perplexity of the text by position in the 32768-token inputs;
- attention: mass on the first 4 tokens and entropy of the attention, by query position
  (mean over the 30 layers and the 9 heads).

Each figure is saved twice with the same data: <name>.svg (English) and <name>.zh.svg (Chinese).
"""

from functools import partial

import matplotlib.pyplot as plt
import numpy as np

from experiments.smollm2.results import LABELS, load
from snippets.figures import save_each_language

report = load("full")
config = report["config"]
TRAINED = config["model"]["trained_length"]
DESIGN = int(config["factor"] * TRAINED)  # the length every scaling is set up for
FILES = {
    "passkey": "real-model-extrapolation-passkey.svg",
    "perplexity": "real-model-extrapolation-perplexity.svg",
    "attention": "real-model-extrapolation-attention.svg",
}
TEXT = {
    "en": {
        "names": LABELS,
        "length": "input length (tokens)",
        "depth": "depth of the needle",
        "found": "needles found (%)",
        "position": "position in the input (tokens)",
        "ppl": "perplexity of the text (log scale)",
        "trained": "trained length",
        "design": "2 × trained: the scalings' setting",
        "sink": "attention on the first 4 tokens",
        "entropy": "attention entropy (nats)",
        "query": "query position (tokens)",
    },
    "zh": {
        "names": LABELS
        | {"none": "不缩放的 RoPE", "linear": "位置内插（PI）", "dynamic": "动态 NTK"},
        "length": "输入长度（token）",
        "depth": "needle 的深度",
        "found": "找到的 needle（%）",
        "position": "在输入中的位置（token）",
        "ppl": "文本困惑度（对数坐标）",
        "trained": "训练长度",
        "design": "2 倍训练长度：缩放方法的设定",
        "sink": "前 4 个 token 上的注意力",
        "entropy": "注意力的熵（nat）",
        "query": "query 的位置（token）",
    },
}
STYLES = {  # colour and line of each method
    "none": ("C3", "-"),
    "linear": ("C0", "--"),
    "ntk": ("C1", ":"),
    "dynamic": ("C4", "-."),
    "yarn": ("C2", "-"),
    "llama3": ("C5", "--"),
}


def draw_passkey(text):
    lengths, depths = config["lengths"], config["depths"]
    fig, axes = plt.subplots(2, 3, figsize=(9, 5.6), sharex=True, sharey=True,
                             constrained_layout=True)  # fmt: skip
    for ax, name in zip(axes.flat, LABELS, strict=True):
        cells = report["passkey"][name]
        grid = np.array(
            [[cells[str(n)][str(d)]["found"] / max(1, cells[str(n)][str(d)]["count"])
              for n in lengths] for d in depths]
        )  # fmt: skip
        image = ax.imshow(100 * grid, vmin=0, vmax=100, cmap="viridis", aspect="auto")
        for i, d in enumerate(depths):
            for j, n in enumerate(lengths):
                cell = cells[str(n)][str(d)]
                ax.text(j, i, f"{cell['found']}/{cell['count']}", ha="center", va="center",
                        fontsize=7, color="white" if grid[i, j] < 0.6 else "black")  # fmt: skip
        ax.set_title(text["names"][name], fontsize=10)
        ax.set_xticks(range(len(lengths)), [f"{n // 1024}k" for n in lengths])
        ax.set_yticks(range(len(depths)), [str(d) for d in depths])
        ax.axvline(lengths.index(TRAINED) + 0.5, color="white", lw=1.5)
        ax.axvline(lengths.index(DESIGN) + 0.5, color="white", lw=1, ls="--")
    for ax in axes[-1]:
        ax.set_xlabel(text["length"])
    for ax in axes[:, 0]:
        ax.set_ylabel(text["depth"])
    fig.colorbar(image, ax=axes, shrink=0.8, label=text["found"])
    return fig


def draw_perplexity(text):
    fig, ax = plt.subplots(figsize=(8, 4.2), constrained_layout=True)
    for name, (color, line) in STYLES.items():
        entry = report["perplexity"][name]
        points = [(s + config["bin"] / 2, p) for s, p in zip(entry["starts"], entry["perplexity"],
                                                              strict=True) if p is not None]  # fmt: skip
        ax.plot(*zip(*points, strict=True), line, color=color, lw=1.4, label=text["names"][name])
    for x, label, line in ((TRAINED, "trained", "-"), (DESIGN, "design", "--")):
        ax.axvline(x, color="0.5", lw=0.8, ls=line)
        ax.text(x + 300, 0.97, text[label], color="0.4", va="top", fontsize=9,
                transform=ax.get_xaxis_transform())  # fmt: skip
    ax.set_yscale("log")
    ax.set_xlabel(text["position"])
    ax.set_ylabel(text["ppl"])
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return fig


def draw_attention(text):
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.8), constrained_layout=True)
    for ax, key in zip(axes, ("sink", "entropy"), strict=True):
        for name, (color, line) in STYLES.items():
            entry = report["attention"][name]
            mean = np.array(entry[key]).mean(axis=0)  # over layers
            ax.plot(entry["queries"], mean, line, color=color, lw=1.4, marker="o", ms=2.5,
                    label=text["names"][name])  # fmt: skip
        ax.axvline(TRAINED, color="0.5", lw=0.8)
        ax.axvline(DESIGN, color="0.5", lw=0.8, ls="--")
        ax.set_xlabel(text["query"])
        ax.set_ylabel(text[key])
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=8)
    return fig


DRAW = {"passkey": draw_passkey, "perplexity": draw_perplexity, "attention": draw_attention}
for key, path in FILES.items():
    save_each_language(partial(DRAW[key]), path, TEXT)
