"""Figures: perplexity against evaluation length for seed 0 (results/full.json), then
perplexity and passkey retrieval over the seeds (results/seeds.json, or the quick profile until
that is committed): one line per position method, the mean over the seeds, with a bar from the
lowest to the highest seed.

Each figure is saved twice with the same data: <name>.svg (English labels) and <name>.zh.svg
(Chinese labels).
"""

from functools import partial

import matplotlib.pyplot as plt
from matplotlib.ticker import NullFormatter

from experiments.extrapolation.results import LABELS, committed_seeds, load, spread
from snippets.figures import save_each_language

FILES = {  # figure -> file (English labels; Chinese: .zh.svg)
    "perplexity": "extrapolation-experiment-perplexity.svg",
    "seeds": "extrapolation-experiment-seeds.svg",
    "retrieval": "extrapolation-experiment-retrieval.svg",
}
TEXT = {
    "en": {
        "names": LABELS,
        "train": "train length",
        "x": "evaluation length (characters)",
        "y": "perplexity per character (log scale)",
        "bars": "bars: lowest to highest of {n} seeds",
        "quick": "QUICK PROFILE: a pipeline check, the numbers measure nothing. ",
        "input": "input length (characters)",
        "retrieved": "passkeys retrieved (%)",
        "chance": "chance: {c:g} %",
    },
    "zh": {
        "names": LABELS
        | {"nope": "无（NoPE）", "sinusoidal": "正弦", "learned": "可学习", "t5": "T5 偏置"},
        "train": "训练长度",
        "x": "评估长度（字符）",
        "y": "每字符困惑度（对数坐标）",
        "bars": "竖线：{n} 个随机种子中的最低到最高",
        "quick": "quick 配置：只检查流程，数字不说明任何问题。",
        "input": "输入长度（字符）",
        "retrieved": "passkey 找回率（%）",
        "chance": "随机猜测：{c:g}%",
    },
}
# colour and line of each method: the RoPE family shares a colour
STYLES = {
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


def draw_lines(ax, lengths, value, names, scale=1.0):
    """One line per method; ``value(name, length)`` is (mean, lowest, highest) or None. Bars
    from lowest to highest where they differ; methods are nudged sideways so that their bars
    do not hide each other."""
    for i, (name, (color, line)) in enumerate(STYLES.items()):
        points = [(n, value(name, n)) for n in lengths]
        points = [(n, s) for n, s in points if s is not None]
        nudge = 1.0 + 0.012 * (i - len(STYLES) / 2)  # on a log-2 axis: a small factor
        xs = [n * nudge for n, _ in points]
        means = [scale * s[0] for _, s in points]
        low = [scale * (s[0] - s[1]) for _, s in points]
        high = [scale * (s[2] - s[0]) for _, s in points]
        bars = [low, high] if any(low + high) else None
        ax.errorbar(
            xs, means, yerr=bars, fmt=line, color=color, marker="o", ms=3.5, lw=1.3,
            capsize=2.5, elinewidth=1, label=names[name],
        )  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [str(n) for n in lengths])


def seed_0(report):
    """value(name, length) for the single run of results/full.json."""

    def value(name, length):
        v = report["results"][name]["perplexity"][str(length)]
        return None if v is None else (v, v, v)

    return value


def draw_figure(key, single, report, text):
    """One figure: "perplexity" (seed 0), "seeds" (perplexity over the seeds) or "retrieval"."""
    seeds = len(report["config"]["seeds"])
    quick = text["quick"] if report["profile"] == "quick" else ""
    fig, ax = plt.subplots(figsize=(8, 4.4), constrained_layout=True)
    if key == "perplexity":  # seed 0
        lengths = single["config"]["eval_lengths"]
        draw_lines(ax, lengths, seed_0(single), text["names"])
    else:
        lengths = report["config"]["eval_lengths"]
        field = "perplexity" if key == "seeds" else "retrieval"
        draw_lines(
            ax, lengths, lambda name, n, f=field: spread(report, name, n, f),
            text["names"], scale=1 if key == "seeds" else 100,
        )  # fmt: skip
        ax.set_title(quick + text["bars"].format(n=seeds), fontsize=9, loc="left")
    ax.axvline(report["config"]["train_len"], color="0.5", lw=0.8)
    ax.text(
        report["config"]["train_len"] * 1.04, 0.97, text["train"], color="0.4",
        transform=ax.get_xaxis_transform(), va="top", fontsize=9,
    )  # fmt: skip
    if key == "retrieval":
        chance = 100 * report["config"]["retrieval"]["chance"]
        ax.axhline(chance, color="0.3", lw=0.8, ls=":")
        ax.text(
            lengths[-1], chance + 1.5, text["chance"].format(c=chance), color="0.3",
            ha="right", va="bottom", fontsize=8,
        )  # fmt: skip
        ax.set_ylim(-3, 103)
        ax.set_xlabel(text["input"])
        ax.set_ylabel(text["retrieved"])
    else:
        ax.set_yscale("log")
        ticks = [4, 5, 6, 8, 10, 15, 20, 25, 30]
        ax.set_yticks(ticks, [str(v) for v in ticks])
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(text["x"])
        ax.set_ylabel(text["y"])
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    return fig


single = load("full")
report = committed_seeds()  # the quick profile until results/seeds.json is committed
for key, path in FILES.items():
    save_each_language(partial(draw_figure, key, single, report), path, TEXT)
