"""Figure: xPos, KERPLE, FIRE and CoPE in chapter 8's experiment next to its RoPE and ALiBi:
perplexity and passkey retrieval against the evaluation length, mean over the seeds with bars
from the lowest to the highest seed.

Saved twice with the same data: rope-rivals-experiment.svg (English labels) and
rope-rivals-experiment.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt

from experiments.extrapolation.results import load_seeds, spread
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "names": {"rope": "RoPE (ch. 8)", "alibi": "ALiBi (ch. 8)", "xpos": "xPos",
                  "kerple": "KERPLE (log)", "fire": "FIRE", "cope": "CoPE"},
        "x": "evaluation length (trained at 128)",
        "ppl": "perplexity per character",
        "passkey": "passkeys found (%)",
        "chance": "chance",
        "one_seed": "{} (1 seed)",
    },
    "zh": {
        "names": {"rope": "RoPE（第 8 章）", "alibi": "ALiBi（第 8 章）", "xpos": "xPos",
                  "kerple": "KERPLE（对数核）", "fire": "FIRE", "cope": "CoPE"},
        "x": "评估长度（训练长度 128）",
        "ppl": "每字符困惑度",
        "passkey": "找到的 passkey（%）",
        "chance": "随机猜中",
        "one_seed": "{}（1 个种子）",
    },
}  # fmt: skip


def learned_passkeys(report, name, lengths):
    """Passkeys found (%) at each length: mean, lowest, highest over the seeds whose model
    learned the format at 128 (at least 500 times chance, as the page's table), and how many
    seeds that is; None if none."""
    chance = report["config"]["retrieval"]["chance"]
    runs = [r for r in report["runs"][name].values() if r["retrieval"]["128"] >= 500 * chance]
    if not runs:
        return None
    found = [[100 * r["retrieval"][str(n)] for r in runs] for n in lengths]
    return [(sum(f) / len(f), min(f), max(f)) for f in found], len(runs)


def draw_experiment(labels):
    chapter8, rivals = load_seeds("full"), load_seeds("full", rivals=True)
    lengths = chapter8["config"]["eval_lengths"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.8), constrained_layout=True)
    styles = {
        "rope": dict(color="gray", linestyle="--"),
        "alibi": dict(color="black", linestyle="--"),
    }
    for n, (name, label) in enumerate(labels["names"].items()):
        report = chapter8 if name in ("rope", "alibi") else rivals
        style = styles.get(name, dict(color=f"C{n}")) | dict(marker="o", markersize=3, capsize=2)
        passkeys = learned_passkeys(report, name, lengths)  # None: no seed learned the format
        for ax, stats, seeds in (
            (left, [spread(report, name, length) for length in lengths], None),
            (right, *(passkeys or (None, 0))),
        ):
            if stats is None:
                continue
            mean = [s[0] for s in stats]
            bars = [[s[0] - s[1] for s in stats], [s[2] - s[0] for s in stats]]
            shown = labels["one_seed"].format(label) if seeds == 1 else label
            ax.errorbar(lengths, mean, yerr=bars, label=shown, **style)
    chance = 100 * chapter8["config"]["retrieval"]["chance"]
    right.axhline(chance, color="gray", linestyle=":", linewidth=0.8)
    right.text(lengths[0], chance + 2, labels["chance"], color="gray", fontsize=8)
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xticks(lengths, [str(n) for n in lengths])
        ax.set_xlabel(labels["x"])
    left.set_yscale("log")
    ticks = [4, 5, 6, 8, 10, 15, 20]
    left.set_yticks(ticks, [str(t) for t in ticks])
    left.minorticks_off()
    left.set_ylabel(labels["ppl"])
    right.set_ylabel(labels["passkey"])
    right.set_ylim(-3, 103)
    left.legend(fontsize=8)
    right.legend(fontsize=8, loc="lower left")
    return fig


save_each_language(draw_experiment, "rope-rivals-experiment.svg", LABELS)
