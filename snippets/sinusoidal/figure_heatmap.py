"""Figure: the sinusoidal table as a heatmap, and a few of its channels over position."""

import matplotlib.pyplot as plt

import posenc


def draw_heatmap(path="sinusoidal-heatmap.svg"):
    pe = posenc.sinusoidal(100, 64)  # 100 positions, d_model = 64
    fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
    image = ax.imshow(
        pe.numpy(), aspect="auto", cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest"
    )
    ax.set_xlabel("channel (2i: sin, 2i+1: cos)")
    ax.set_ylabel("position p")
    ax.set_title("PE(p), d_model = 64")
    fig.colorbar(image, ax=ax, label="value")
    fig.savefig(path)


def draw_curves(path="sinusoidal-curves.svg"):
    pe = posenc.sinusoidal(100, 64)
    fig, ax = plt.subplots(figsize=(7, 3.6), constrained_layout=True)
    for channel in (0, 8, 16, 32):  # sine channels of pairs i = 0, 4, 8, 16
        ax.plot(pe[:, channel].numpy(), label=f"channel {channel} (i = {channel // 2})")
    ax.set_xlabel("position p")
    ax.set_ylabel("PE(p)")
    ax.set_title("Higher channels oscillate more slowly (d_model = 64)")
    ax.legend(loc="lower left", fontsize=9)
    fig.savefig(path)


draw_heatmap()
draw_curves()
