"""Figure: RoPE frequencies of each long-context method against the default, log scale."""

import matplotlib.pyplot as plt
import torch

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "titles": (
            "linear (PI), s = 4",
            "NTK-aware, s = 4",
            "dynamic NTK (factor 4), at 2 × 4096",
            "YaRN, s = 4",
            "Llama 3 (d = 128, base 5e5), s = 8",
            "LongRoPE (illustrative factors)",
        ),
        "x": "pair index i",
        "y": r"$\theta_i$ (rad / token)",
        "default": "default",
        "scaled": "scaled",
    },
    "zh": {
        "titles": (
            "线性内插（PI），s = 4",
            "NTK-aware，s = 4",
            "动态 NTK（factor 4），长度 2 × 4096",
            "YaRN，s = 4",
            "Llama 3（d = 128，底数 5e5），s = 8",
            "LongRoPE（示意用的因子）",
        ),
        "x": "维度对序号 i",
        "y": "θᵢ（弧度 / token）",
        "default": "默认",
        "scaled": "缩放后",
    },
}


def method_frequencies(head_dim=64, base=10000.0, trained=4096, s=4.0):
    """(default, scaled) for each method: stretch a 4096-token model by s = 4."""
    default, _ = posenc.rope_inv_freq(head_dim, base=base)
    ntk, _ = posenc.rope_inv_freq(head_dim, base=base * s ** (head_dim / (head_dim - 2)))
    common = {"factor": s, "original_max_position_embeddings": trained}
    dynamic = {"rope_type": "dynamic", **common}
    long_factor = torch.linspace(1.0, 8.0, head_dim // 2).tolist()
    longrope = {
        "rope_type": "longrope",
        **common,
        "short_factor": [1.0] * (head_dim // 2),
        "long_factor": long_factor,
    }
    llama3 = {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }

    def scaled(scaling, seq_len=None, dim=head_dim, b=base):
        return posenc.rope_inv_freq(dim, base=b, scaling=scaling, seq_len=seq_len)[0]

    l3_default = posenc.rope_inv_freq(128, base=500000.0)[0]
    return [
        (default, scaled({"rope_type": "linear", "factor": s})),
        (default, ntk),
        (default, scaled(dynamic, seq_len=2 * trained)),
        (default, scaled({"rope_type": "yarn", **common})),
        (l3_default, scaled(llama3, dim=128, b=500000.0)),
        (default, scaled(longrope, seq_len=2 * trained)),
    ]


def draw_inv_freq(label):
    fig, axes = plt.subplots(2, 3, figsize=(10, 6), constrained_layout=True)
    panels = zip(axes.flat, label["titles"], method_frequencies(), strict=True)
    for ax, title, (default, scaled) in panels:
        pairs = range(len(default))
        ax.semilogy(pairs, default.numpy(), "k--", lw=1.2, label=label["default"])
        ax.semilogy(pairs, scaled.numpy(), "C1", lw=1.8, label=label["scaled"])
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(label["x"])
        ax.grid(True, which="major", alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel(label["y"])
    axes[0, 0].legend(loc="lower left")
    return fig


save_each_language(draw_inv_freq, "length-extrapolation-inv-freq.svg", LABELS)
