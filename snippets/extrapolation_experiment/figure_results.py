"""Figure: perplexity against evaluation length, one line per position method.

Reads the committed results of experiments/extrapolation (the full profile).
"""

import matplotlib.pyplot as plt

from experiments.extrapolation.results import LABELS, load


def draw_perplexity(path="extrapolation-experiment-perplexity.svg"):
    report = load("full")
    lengths = report["config"]["eval_lengths"]
    styles = {  # colour and line of each method: the RoPE family shares a colour
        "nope": ("C7", "-"),
        "sinusoidal": ("C0", "-"),
        "learned": ("C5", "-"),
        "t5": ("C4", "-"),
        "rope": ("C3", "-"),
        "rope+pi": ("C3", "--"),
        "rope+ntk": ("C3", ":"),
        "rope+yarn": ("C3", "-."),
        "alibi": ("C2", "-"),
    }
    fig, ax = plt.subplots(figsize=(8, 4.4), constrained_layout=True)
    for name, (color, line) in styles.items():
        label = LABELS[name]
        row = report["results"][name]["perplexity"]
        points = [(n, row[str(n)]) for n in lengths if row[str(n)] is not None]
        xs, ys = zip(*points, strict=True)
        ax.plot(xs, ys, line, color=color, marker="o", ms=4, label=label)
    ax.axvline(report["config"]["train_len"], color="0.5", lw=0.8)
    ax.text(
        report["config"]["train_len"] * 1.04,
        0.97,
        "train length",
        color="0.4",
        transform=ax.get_xaxis_transform(),
        va="top",
        fontsize=9,
    )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(lengths, [str(n) for n in lengths])
    ax.set_xlabel("evaluation length (characters)")
    ax.set_ylabel("perplexity per character (log scale)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.savefig(path)


draw_perplexity()
