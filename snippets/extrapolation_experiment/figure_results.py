"""Figures: perplexity and passkey retrieval against input length, one line per position
method: the mean over the seeds, with a bar from the lowest to the highest seed.

Reads the committed results of experiments/extrapolation (results/seeds.json). Each figure is
saved twice with the same data: <name>.svg (English labels) and <name>.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt

from experiments.extrapolation.results import LABELS, committed_seeds, spread

FILES = {  # (figure, language) -> file
    ("perplexity", "en"): "extrapolation-experiment-perplexity.svg",
    ("perplexity", "zh"): "extrapolation-experiment-perplexity.zh.svg",
    ("retrieval", "en"): "extrapolation-experiment-retrieval.svg",
    ("retrieval", "zh"): "extrapolation-experiment-retrieval.zh.svg",
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
        "chance": "随机猜测：{c:g} %",
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


def draw_lines(ax, report, key, names, scale=1.0):
    """One line per method (mean over seeds) with min-max bars; methods are nudged sideways so
    that their bars do not hide each other."""
    lengths = report["config"]["eval_lengths"]
    for i, (name, (color, line)) in enumerate(STYLES.items()):
        points = [(n, spread(report, name, n, key)) for n in lengths]
        points = [(n, s) for n, s in points if s is not None]
        nudge = 1.0 + 0.012 * (i - len(STYLES) / 2)  # on a log-2 axis: a small factor
        xs = [n * nudge for n, _ in points]
        means = [scale * s[0] for _, s in points]
        low = [scale * (s[0] - s[1]) for _, s in points]
        high = [scale * (s[2] - s[0]) for _, s in points]
        ax.errorbar(
            xs, means, yerr=[low, high], fmt=line, color=color, marker="o", ms=3.5, lw=1.3,
            capsize=2.5, elinewidth=1, label=names[name],
        )  # fmt: skip
    ax.axvline(report["config"]["train_len"], color="0.5", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [str(n) for n in lengths])


def draw(lang="en"):
    # Chinese labels need the CJK font named as a fallback family
    with plt.rc_context({"font.family": ["DejaVu Sans", "Noto Sans CJK SC"]}):
        report = committed_seeds()  # the quick profile until results/seeds.json is committed
        text = TEXT[lang]
        seeds = len(report["config"]["seeds"])
        train_len = report["config"]["train_len"]
        for key in ("perplexity", "retrieval"):
            fig, ax = plt.subplots(figsize=(8, 4.4), constrained_layout=True)
            draw_lines(ax, report, key, text["names"], scale=1 if key == "perplexity" else 100)
            ax.text(
                train_len * 1.04, 0.97, text["train"], color="0.4",
                transform=ax.get_xaxis_transform(), va="top", fontsize=9,
            )  # fmt: skip
            if key == "perplexity":
                ax.set_yscale("log")
                ax.set_xlabel(text["x"])
                ax.set_ylabel(text["y"])
            else:
                chance = 100 * report["config"]["retrieval"]["chance"]
                ax.axhline(chance, color="0.3", lw=0.8, ls=":")
                ax.text(
                    report["config"]["eval_lengths"][-1], chance + 1.5,
                    text["chance"].format(c=chance), color="0.3", ha="right", va="bottom",
                    fontsize=8,
                )  # fmt: skip
                ax.set_ylim(-3, 103)
                ax.set_xlabel(text["input"])
                ax.set_ylabel(text["retrieved"])
            quick = text["quick"] if report["profile"] == "quick" else ""
            ax.set_title(quick + text["bars"].format(n=seeds), fontsize=9, loc="left")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
            fig.savefig(FILES[key, lang])
            plt.close(fig)


draw("en")
draw("zh")
