"""Figure: the sinusoidal table as a heatmap, and a few of its dimensions over position.

Each figure is saved twice, with English and with Chinese labels (same data).
"""

import matplotlib.pyplot as plt

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "dimension": "dimension (2i: sin, 2i+1: cos)",
        "position": "position p",
        "value": "value",
        "heatmap": "PE(p), d_model = 64",
        "curve": "dimension {dim} (i = {pair})",
        "curves": "Higher dimensions oscillate more slowly (d_model = 64)",
    },
    "zh": {
        "dimension": "维度（2i：sin，2i+1：cos）",
        "position": "位置 p",
        "value": "取值",
        "heatmap": "PE(p)，d_model = 64",
        "curve": "第 {dim} 维（i = {pair}）",
        "curves": "维度编号越大，振荡越慢（d_model = 64）",
    },
}


def draw_heatmap(text):
    pe = posenc.sinusoidal(100, 64)  # 100 positions, d_model = 64
    fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
    image = ax.imshow(
        pe.numpy(), aspect="auto", cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest"
    )
    ax.set_xlabel(text["dimension"])
    ax.set_ylabel(text["position"])
    ax.set_title(text["heatmap"])
    fig.colorbar(image, ax=ax, label=text["value"])
    return fig


def draw_curves(text):
    pe = posenc.sinusoidal(100, 64)
    fig, ax = plt.subplots(figsize=(7, 3.6), constrained_layout=True)
    for dim in (0, 8, 16, 32):  # sine dimensions of pairs i = 0, 4, 8, 16
        ax.plot(pe[:, dim].numpy(), label=text["curve"].format(dim=dim, pair=dim // 2))
    ax.set_xlabel(text["position"])
    ax.set_ylabel("PE(p)")
    ax.set_title(text["curves"])
    ax.legend(loc="lower left", fontsize=9)
    return fig


save_each_language(draw_heatmap, "sinusoidal-heatmap.svg", LABELS)
save_each_language(draw_curves, "sinusoidal-curves.svg", LABELS)
