"""Figure: YaRN's ramp as the paper writes it (linear in the turns r) and as code computes it
(linear in the pair index), for d = 64, base 1e4, trained length 4096, s = 4."""

import math

import matplotlib.pyplot as plt
import torch

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "paper": "paper: linear in r",
        "code": "code: linear in the pair index",
        "pair": "pair index i",
        "turns": "turns r within the trained length (log scale)",
        "gamma": "γ (1 = kept, 0 = divided by s)",
    },
    "zh": {
        "paper": "论文：对 r 线性",
        "code": "代码：对维度对序号线性",
        "pair": "维度对序号 i",
        "turns": "训练长度内转的圈数 r（对数坐标）",
        "gamma": "γ（1 = 保留，0 = 除以 s）",
    },
}


def ramps(head_dim=64, base=10000.0, trained=4096, s=4.0, alpha=1.0, beta=32.0):
    """(turns r_i, γ of the paper, γ of the code) for every pair."""
    inv_freq, _ = posenc.rope_inv_freq(head_dim, base=base)
    turns = trained * inv_freq / (2 * math.pi)
    paper = ((turns - alpha) / (beta - alpha)).clamp(0, 1)
    yarn = {"rope_type": "yarn", "factor": s, "original_max_position_embeddings": trained}
    scaled, _ = posenc.rope_inv_freq(head_dim, base=base, scaling=yarn)
    code = (scaled - inv_freq / s) / (inv_freq - inv_freq / s)  # solve θ' = (1−γ)θ/s + γθ for γ
    return turns, paper, code


def draw_ramp(label):
    turns, paper, code = ramps()
    pairs = torch.arange(len(turns))
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6), constrained_layout=True)
    for ax, x in ((left, pairs), (right, turns)):
        ax.plot(x, paper, "o-", color="C0", ms=3.5, lw=1.5, label=label["paper"])
        ax.plot(x, code, "s-", color="C1", ms=3.5, lw=1.5, label=label["code"])
        ax.set_ylabel(label["gamma"])
        ax.grid(True, alpha=0.3)
    left.set_xlabel(label["pair"])
    right.set_xscale("log")
    right.set_xlabel(label["turns"])
    for r in (1.0, 32.0):
        right.axvline(r, color="0.5", lw=0.8, ls=":")
    left.legend(loc="lower left")
    return fig


save_each_language(draw_ramp, "length-extrapolation-ramp.svg", LABELS)
