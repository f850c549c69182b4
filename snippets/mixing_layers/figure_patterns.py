"""Figure: the layers of six models, one cell per layer, coloured by kind: local RoPE (sliding
window), local RoPE (chunks), global RoPE, global NoPE. The kinds come from each config's
fields through posenc.layer_rope_settings.

Saved twice with the same data: mixing-layers-patterns.svg (English labels) and
mixing-layers-patterns.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt
from matplotlib.patches import Patch, Rectangle

import posenc

FILES = {"en": "mixing-layers-patterns.svg", "zh": "mixing-layers-patterns.zh.svg"}
LABELS = {
    "en": {
        "kinds": [
            "local RoPE (sliding window)",
            "local RoPE (chunks)",
            "global RoPE",
            "global NoPE",
        ],
        "layer": "layer",
    },
    "zh": {
        "kinds": ["局部 RoPE（滑动窗口）", "局部 RoPE（分块）", "全局 RoPE", "全局 NoPE"],
        "layer": "层",
    },
}
COLOURS = {"L": "#8fb3de", "C": "#b7a0d6", "G": "#4c72b0", "N": "#dd8452"}
L, C, G = "sliding_attention", "chunked_attention", "full_attention"
DEFAULT = {"rope_type": "default"}


def every(n, layers, other, last):
    return [last if (i + 1) % n == 0 else other for i in range(layers)]


# (name, layer_types, rope_parameters, no_rope_layers, nope_types)
MODELS = [
    ("Gemma 2 9B", every(2, 42, L, G), DEFAULT, None, ()),
    ("Gemma 3 27B", every(6, 62, L, G), {L: DEFAULT, G: {"rope_type": "linear", "factor": 8.0}},
     None, ()),
    ("gpt-oss-120b", every(2, 36, L, G), DEFAULT, None, ()),
    ("Command R7B", every(4, 32, L, G), DEFAULT, None, (G,)),
    ("Llama 4 Scout", every(4, 48, C, G), DEFAULT, every(4, 48, 1, 0), ()),
    ("SmolLM3-3B", [G] * 36, DEFAULT, every(4, 36, 1, 0), ()),
]  # fmt: skip
LETTER = {L: "L", C: "C", G: "G"}


def draw_patterns(lang: str = "en") -> None:
    labels = LABELS[lang]
    fig, ax = plt.subplots(figsize=(9.0, 3.2), layout="constrained")
    for row, (_, types, params, no_rope, nope) in enumerate(MODELS):
        settings = posenc.layer_rope_settings(
            types, params, no_rope_layers=no_rope, nope_types=nope
        )
        for i, (t, s) in enumerate(zip(types, settings, strict=True)):
            letter = "N" if s is None else LETTER[t]
            ax.add_patch(Rectangle((i, -row), 0.9, 0.8, facecolor=COLOURS[letter], lw=0))
    ax.set_xlim(0, 62)
    ax.set_ylim(-len(MODELS) + 0.8, 0.9)
    ax.set_yticks([-row + 0.4 for row in range(len(MODELS))], [m[0] for m in MODELS], fontsize=9)
    ax.set_xticks([i + 0.45 for i in range(0, 62, 6)], [str(i) for i in range(0, 62, 6)])
    ax.set_xlabel(labels["layer"], fontsize=9)
    ax.tick_params(labelsize=8, length=0)
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)
    handles = [
        Patch(facecolor=COLOURS[k], label=t) for k, t in zip("LCGN", labels["kinds"], strict=True)
    ]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.25), ncols=4,
              frameon=False, fontsize=9)  # fmt: skip
    fig.savefig(FILES[lang])
    plt.close(fig)


draw_patterns("en")
draw_patterns("zh")
