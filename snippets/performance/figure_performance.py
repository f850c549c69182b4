"""Figure: RoPE time and bandwidth vs sequence length, ALiBi attention time, from the results file."""

import json
from pathlib import Path

results = json.loads((Path(__file__).resolve().parents[2] / "benchmarks/results/cpu.json").read_text())

# --8<-- [start:figure]
import matplotlib.pyplot as plt


def series(rows, bench, impl, key, layout=None):
    picked = sorted((r for r in rows if r["bench"] == bench and r["impl"] == impl
                     and (layout is None or r.get("layout") == layout)), key=lambda r: r["seq_len"])
    return [r["seq_len"] for r in picked], [r[key] for r in picked]


def draw_performance(results, path="performance-cpu.svg"):
    rows = results["results"]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8), constrained_layout=True)
    styles = {"copy": "k--", "posenc": "C0o-", "hf_eager": "C1s-", "stack_flatten": "C4v-",
              "compiled": "C2^-", "fused": "C3D-"}
    for impl, style in styles.items():
        x, y = series(rows, "rope", impl, "median_ms", layout="half")
        if x:
            axes[0].loglog(x, y, style, label=impl, base=2)
    axes[0].set(title="RoPE, half layout: time per call", xlabel="sequence length L",
                ylabel="median time (ms)")
    for layout, marker in [("half", "o"), ("interleaved", "s")]:
        for impl, color in [("posenc", "C0"), ("fused", "C3")]:
            x, y = series(rows, "rope", impl, "gb_per_s", layout=layout)
            axes[1].semilogx(x, y, color=color, marker=marker, base=2, label=f"{impl} ({layout})",
                             linestyle="-" if layout == "half" else ":")
        x, y = series(rows, "rope", "copy", "gb_per_s", layout=layout)
        axes[1].semilogx(x, y, "k--" if layout == "half" else "k:", base=2,
                         label=f"copy = limit ({layout})")
    axes[1].set(title="RoPE: achieved bandwidth", xlabel="sequence length L", ylabel="GB/s",
                ylim=(0, None))
    for impl, style in [("no_bias", "k--"), ("broadcast", "C0o-"), ("materialised", "C1s-"),
                        ("flex", "C2^-")]:
        x, y = series(rows, "alibi", impl, "median_ms")
        if x:
            axes[2].loglog(x, y, style, label=impl, base=2)
    axes[2].set(title="ALiBi attention (causal)", xlabel="sequence length L",
                ylabel="median time (ms)")
    for ax in axes:
        ax.legend(fontsize=7)
        ax.grid(True, which="both", alpha=0.3)
    fig.savefig(path)


draw_performance(results)
# --8<-- [end:figure]
