"""Figure: RoPE ratio to the copy and bandwidth vs sequence length; ALiBi attention time."""

import json
from pathlib import Path

results = json.loads(
    (Path(__file__).resolve().parents[2] / "benchmarks/results/cpu.json").read_text()
)

# --8<-- [start:figure]
import matplotlib.pyplot as plt


def series(rows, bench, impl, key, layout=None):
    picked = sorted(
        (
            r
            for r in rows
            if r["bench"] == bench
            and r["impl"] == impl
            and (layout is None or r.get("layout") == layout)
        ),
        key=lambda r: r["seq_len"],
    )
    return [r["seq_len"] for r in picked], [r[key] for r in picked]


def draw_performance(results, path="performance-cpu.svg"):
    rows = results["results"]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8), constrained_layout=True)
    colors = {"posenc": "C0", "hf_eager": "C1", "compiled": "C2", "stack_flatten": "C4"}
    for layout, line in [("half", "-"), ("interleaved", ":")]:
        for impl, color in colors.items():
            x, y = series(rows, "rope", impl, "ratio", layout=layout)
            if x:
                axes[0].semilogx(
                    x,
                    y,
                    color=color,
                    marker="o",
                    linestyle=line,
                    base=2,
                    label=f"{impl} ({layout})",
                )
    axes[0].axhline(1.0, color="k", linestyle="--", label="copy")
    axes[0].axhline(1.5, color="k", linestyle="-.", linewidth=0.8, label="target 1.5x copy")
    axes[0].set(
        title="RoPE: time / copy time",
        xlabel="sequence length L",
        ylabel="ratio to the copy",
        ylim=(0, None),
    )
    for layout, line in [("half", "-"), ("interleaved", ":")]:
        x, y = series(rows, "rope", "posenc", "gb_per_s", layout=layout)
        axes[1].semilogx(
            x, y, color="C0", marker="o", linestyle=line, base=2, label=f"posenc ({layout})"
        )
        x, y = series(rows, "rope", "copy", "gb_per_s", layout=layout)
        axes[1].semilogx(
            x,
            y,
            color="k",
            linestyle="--" if layout == "half" else ":",
            base=2,
            label=f"copy = limit ({layout})",
        )
    axes[1].set(
        title="RoPE: achieved bandwidth", xlabel="sequence length L", ylabel="GB/s", ylim=(0, None)
    )
    for impl, style in [
        ("no_bias", "k--"),
        ("broadcast", "C0o-"),
        ("materialised", "C1s-"),
        ("flex", "C2^-"),
    ]:
        x, y = series(rows, "alibi", impl, "median_ms")
        if x:
            axes[2].loglog(x, y, style, label=impl, base=2)
    axes[2].set(
        title="ALiBi attention (causal)", xlabel="sequence length L", ylabel="median time (ms)"
    )
    for ax in axes:
        ax.legend(fontsize=7)
        ax.grid(True, which="both", alpha=0.3)
    fig.savefig(path)


draw_performance(results)
# --8<-- [end:figure]
