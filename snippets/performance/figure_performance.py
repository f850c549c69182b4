"""Figure: RoPE ratio to the copy and bandwidth vs sequence length; ALiBi attention time.

Saved twice with the same data: performance-cpu.svg (English labels) and performance-cpu.zh.svg
(Chinese labels); implementation names are code and stay as they are.
"""

from benchmarks.results import load

results = load("cpu")

# --8<-- [start:figure]
import matplotlib.pyplot as plt

from benchmarks.results import rows as matching
from snippets.figures import save_each_language


def series(results, bench, impl, key, layout=None):
    where = dict(bench=bench, impl=impl) | ({} if layout is None else {"layout": layout})
    picked = sorted(matching(results, **where), key=lambda r: r["seq_len"])
    return [r["seq_len"] for r in picked], [r[key] for r in picked]


LABELS = {
    "en": {
        "copy": "copy",
        "target": "target 1.5x copy",
        "rope_title": "RoPE, {layout} layout: time / copy time",
        "length": "sequence length L",
        "ratio": "ratio to the copy",
        "bandwidth": "RoPE: achieved bandwidth",
        "limit": "copy = limit ({layout})",
        "alibi": "ALiBi attention (causal)",
        "time": "median time (ms)",
    },
    "zh": {
        "copy": "复制",
        "target": "目标：复制的 1.5 倍",
        "rope_title": "RoPE，{layout} 排布：用时 / 复制用时",
        "length": "序列长度 L",
        "ratio": "与复制用时之比",
        "bandwidth": "RoPE：达到的带宽",
        "limit": "复制 = 上限（{layout}）",
        "alibi": "ALiBi 注意力（因果）",
        "time": "用时中位数（ms）",
    },
}


def draw_performance(results, text):
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.4), constrained_layout=True)
    colors = {
        "posenc": "C0",
        "posenc_compiled": "C3",
        "hf_eager": "C1",
        "compiled": "C2",
        "stack_flatten": "C4",
        "mul_table": "C7",
    }
    for ax, layout in zip(axes[0], ["half", "interleaved"], strict=True):
        for impl, color in colors.items():
            x, y = series(results, "rope", impl, "ratio", layout=layout)
            if x:
                ax.semilogx(x, y, color=color, marker="o", base=2, label=impl)
        ax.axhline(1.0, color="k", linestyle="--", label=text["copy"])
        ax.axhline(1.5, color="k", linestyle="-.", linewidth=0.8, label=text["target"])
        ax.set(
            title=text["rope_title"].format(layout=layout),
            xlabel=text["length"],
            ylabel=text["ratio"],
            ylim=(0, None),
        )
    bandwidth = axes[1, 0]
    for layout, line in [("half", "-"), ("interleaved", ":")]:
        for impl in ("posenc", "posenc_compiled"):
            x, y = series(results, "rope", impl, "gb_per_s", layout=layout)
            bandwidth.semilogx(
                x,
                y,
                color=colors[impl],
                marker="o",
                linestyle=line,
                base=2,
                label=f"{impl} ({layout})",
            )
        x, y = series(results, "rope", "copy", "gb_per_s", layout=layout)
        bandwidth.semilogx(
            x, y, color="k", linestyle="--" if layout == "half" else ":", base=2,
            label=text["limit"].format(layout=layout),
        )  # fmt: skip
    bandwidth.set(title=text["bandwidth"], xlabel=text["length"], ylabel="GB/s", ylim=(0, None))
    for impl, style in [
        ("no_bias", "k--"),
        ("broadcast", "C0o-"),
        ("materialised", "C1s-"),
        ("flex", "C2^-"),
    ]:
        x, y = series(results, "alibi", impl, "median_ms")
        if x:
            axes[1, 1].loglog(x, y, style, label=impl, base=2)
    axes[1, 1].set(title=text["alibi"], xlabel=text["length"], ylabel=text["time"])
    # one legend for the two RoPE panels, above them, so no line hides behind it
    labels = {}
    for ax in axes[0]:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            labels.setdefault(label, handle)
    fig.legend(labels.values(), labels.keys(), loc="outside upper center", ncol=5, fontsize=8)
    for ax in axes[1]:
        ax.legend(fontsize=7)
    for ax in axes.flat:
        ax.grid(True, which="both", alpha=0.3)
    return fig


save_each_language(lambda text: draw_performance(results, text), "performance-cpu.svg", LABELS)
# --8<-- [end:figure]
