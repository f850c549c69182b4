"""Figure: which frequencies a long input gets. Left, CLEX: θ_i(t)/θ_i for t = 2, 4 and 8
after integrating its ODE from t = 1, with the learned term at zero (CLEX's initialisation,
which gives dynamic NTK with factor 2 at t times the trained length: posenc's values marked) and
with a small random network in its place (an illustration, not a trained model). Right,
Phi-3.5-mini's released LongRoPE factors (what each pair's frequency is divided by, for inputs
up to 4096 tokens and beyond) and LongRoPE2's rule for short inputs, the original RoPE; the
dotted line is the theoretical critical dimension (pairs left of it turn at least once within
4096 tokens).

Saved twice with the same data: longer-context-frequencies.svg (English labels) and
longer-context-frequencies.zh.svg (Chinese labels).
"""

import math

import matplotlib.pyplot as plt
import torch

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {"clex": "CLEX, head of 32 dimensions", "ratio": "θᵢ(t) / θᵢ", "pair": "pair i",
           "init": "t = {}, learned term 0", "posenc": "dynamic NTK (posenc)",
           "bent": "t = 4, random network", "phi": "Phi-3.5-mini (96 dimensions, 4096 tokens)",
           "divisor": "θᵢ divided by", "short": "LongRoPE, ≤ 4096 tokens",
           "long": "LongRoPE, > 4096 tokens", "v2": "LongRoPE2, ≤ 4096 tokens: 1",
           "critical": "critical dimension (theory)"},
    "zh": {"clex": "CLEX，头维度 32", "ratio": "θᵢ(t) / θᵢ", "pair": "维度对 i",
           "init": "t = {}，可学习项为 0", "posenc": "动态 NTK（posenc）",
           "bent": "t = 4，随机网络", "phi": "Phi-3.5-mini（96 维，4096 个 token）",
           "divisor": "θᵢ 的除数", "short": "LongRoPE，≤ 4096 个 token",
           "long": "LongRoPE，> 4096 个 token", "v2": "LongRoPE2，≤ 4096 个 token：1",
           "critical": "临界维度（理论值）"},
}  # fmt: skip
HEAD, BASE, TRAINED = 32, 10000.0, 4096
COLOURS = ["#4c72b0", "#55a868", "#c44e52"]


def clex_inv_freq(freq, t_end, learned=None, step=0.01):
    """RK4 on d/dt log θ = learned(log θ + log θ_NTK(t)) + d/dt log θ_NTK(t), from t = 1
    (as longer_context.py's clex_inv_freq)."""
    exponent = torch.arange(0, 2 * len(freq), 2, dtype=torch.float64) / (2 * len(freq) - 2)

    def slope(t, z):
        ntk_log = torch.log(freq.double()) - exponent * math.log(2 * t - 1)
        return (0 if learned is None else learned(z + ntk_log)) - exponent * 2 / (2 * t - 1)

    z, t = torch.log(freq.double()), 1.0
    for _ in range(round((t_end - 1) / step)):
        k1 = slope(t, z)
        k2 = slope(t + step / 2, z + step / 2 * k1)
        k3 = slope(t + step / 2, z + step / 2 * k2)
        k4 = slope(t + step, z + step * k3)
        z, t = z + step / 6 * (k1 + 2 * k2 + 2 * k3 + k4), t + step
    return torch.exp(z)


def draw_frequencies(labels: dict) -> plt.Figure:
    fig, (left, right) = plt.subplots(1, 2, figsize=(7.4, 3.1), layout="constrained")
    theta = posenc.rope_inv_freq(HEAD, BASE)[0]
    pairs = torch.arange(HEAD // 2)
    dynamic = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": TRAINED}
    for t, colour in zip((2, 4, 8), COLOURS, strict=True):
        left.plot(pairs, clex_inv_freq(theta, float(t)) / theta, color=colour, lw=1.3,
                  label=labels["init"].format(t))  # fmt: skip
        ntk = posenc.rope_inv_freq(HEAD, BASE, scaling=dynamic, seq_len=t * TRAINED)[0]
        left.plot(pairs, ntk / theta, "o", color=colour, ms=3, mfc="none")
    g = torch.Generator().manual_seed(0)
    up = torch.randn(HEAD // 2, 2 * HEAD, generator=g, dtype=torch.float64) * 0.03
    down = torch.randn(2 * HEAD, HEAD // 2, generator=g, dtype=torch.float64) * 0.03
    bent = clex_inv_freq(theta, 4.0, learned=lambda x: torch.tanh(x @ up) @ down)
    left.plot(pairs, bent / theta, "--", color=COLOURS[1], lw=1.1, label=labels["bent"])
    left.plot([], [], "o", color="0.3", ms=3, mfc="none", label=labels["posenc"])
    left.set_yscale("log")
    left.set_xlabel(labels["pair"])
    left.set_ylabel(labels["ratio"])
    left.set_title(labels["clex"], fontsize=9)
    left.legend(fontsize=7, frameon=False, loc="lower left")

    scaling = posenc.released_config("phi-3.5-mini")["config"]["rope_scaling"]
    phi_pairs = torch.arange(48)
    right.plot(phi_pairs, scaling["long_factor"], color=COLOURS[2], lw=1.3, label=labels["long"])
    right.plot(phi_pairs, scaling["short_factor"], color=COLOURS[0], lw=1.3, label=labels["short"])
    right.plot(phi_pairs, torch.ones(48), color="0.35", lw=1.3, ls="--", label=labels["v2"])
    phi_theta = posenc.rope_inv_freq(96, BASE)[0].double()
    critical = int((2 * math.pi / phi_theta <= TRAINED).sum())  # pairs that turn in 4096 tokens
    right.axvline(critical - 0.5, color="0.3", lw=0.9, ls=":", label=labels["critical"])
    right.set_yscale("log")
    right.set_xlabel(labels["pair"])
    right.set_ylabel(labels["divisor"])
    right.set_title(labels["phi"], fontsize=9)
    right.legend(fontsize=7, frameon=False, loc="upper left")
    return fig


save_each_language(draw_frequencies, "longer-context-frequencies.svg", LABELS)
