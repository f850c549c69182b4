"""Figure: one pair of dimensions rotated at positions 0..3, and several frequencies over position.

The labels are symbols only (no words), so one file serves both languages.
"""

import math

import matplotlib.pyplot as plt
import numpy as np

import posenc
from snippets.figures import save


def draw_pair_rotation():
    theta = math.pi / 6  # a fast pair: 30 degrees per position
    slow = theta / 4  # a slower pair of the same vector
    fig, ax = plt.subplots(figsize=(4.6, 4.6), constrained_layout=True)
    circle = np.linspace(0, 2 * math.pi, 200)
    ax.plot(np.cos(circle), np.sin(circle), color="lightgray", linewidth=0.8)
    for speed, start, color, label in (
        (theta, 0.35, "tab:blue", r"$\theta = \pi/6$"),
        (slow, -1.2, "tab:orange", r"$\theta = \pi/24$"),
    ):
        for m in range(4):
            angle = start + m * speed  # angle of the pair at position m
            ax.annotate(
                "",
                xy=(math.cos(angle), math.sin(angle)),
                xytext=(0, 0),
                arrowprops=dict(arrowstyle="->", color=color, alpha=0.4 + 0.2 * m),
            )
            ax.text(
                1.1 * math.cos(angle),
                1.1 * math.sin(angle),
                f"m = {m}",
                color=color,
                ha="center",
                va="center",
                fontsize=8,
            )
        ax.plot([], [], color=color, label=label)
    ax.set_xlim(-1.3, 1.3)
    ax.set_ylim(-1.3, 1.3)
    ax.set_aspect("equal")
    ax.set_xlabel(r"$x_{2i}$")
    ax.set_ylabel(r"$x_{2i+1}$")
    ax.legend(fontsize=8, loc="lower left")
    return fig


def draw_frequencies():
    head_dim = 64
    inv_freq = posenc.default_inv_freq(head_dim).double().numpy()
    positions = np.arange(0, 200)
    fig, ax = plt.subplots(figsize=(7.5, 3.6), constrained_layout=True)
    for i in (0, 4, 8, 12, 16):
        ax.plot(
            positions,
            np.cos(positions * inv_freq[i]),
            linewidth=1.2,
            label=rf"$i = {i},\ 2\pi/\theta_i \approx {2 * math.pi / inv_freq[i]:.0f}$",
        )
    ax.set_xlabel(r"$m$")
    ax.set_ylabel(r"$\cos(m\theta_i)$")
    ax.set_title(r"$d = 64,\ b = 10000$", fontsize=10)
    ax.legend(fontsize=8, loc="lower left", ncol=2)
    return fig


save(draw_pair_rotation(), "rope-pair-rotation.svg")
save(draw_frequencies(), "rope-frequencies.svg")
