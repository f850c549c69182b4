"""Figure: the layers of six models, one cell per layer, coloured by kind: local RoPE (sliding
window), local RoPE (chunks), global RoPE, global NoPE. The kinds come from each config's
fields through posenc.layer_rope_settings.

Saved twice with the same data: mixing-layers-patterns.svg (English labels) and
mixing-layers-patterns.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt
from matplotlib.patches import Patch, Rectangle

import posenc
from snippets.figures import save_each_language

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


def _patterns() -> list[tuple[str, str]]:
    """(model, one letter per layer), from each config's fields through posenc."""
    sliding, chunked, full = "sliding_attention", "chunked_attention", "full_attention"
    default = {"rope_type": "default"}

    def every(n, layers, other, last):
        return [last if (i + 1) % n == 0 else other for i in range(layers)]

    models = [  # (name, layer_types, rope_parameters, no_rope_layers, nope_types)
        ("Gemma 2 9B", every(2, 42, sliding, full), default, None, ()),
        ("Gemma 3 27B", every(6, 62, sliding, full),
         {sliding: default, full: {"rope_type": "linear", "factor": 8.0}}, None, ()),
        ("gpt-oss-120b", every(2, 36, sliding, full), default, None, ()),
        ("Command R7B", every(4, 32, sliding, full), default, None, (full,)),
        ("Llama 4 Scout", every(4, 48, chunked, full), default, every(4, 48, 1, 0), ()),
        ("SmolLM3-3B", [full] * 36, default, every(4, 36, 1, 0), ()),
    ]  # fmt: skip
    letter = {sliding: "L", chunked: "C", full: "G"}
    rows = []
    for name, types, params, no_rope, nope in models:
        settings = posenc.layer_rope_settings(
            types, params, no_rope_layers=no_rope, nope_types=nope
        )
        text = "".join(
            "N" if s is None else letter[t] for t, s in zip(types, settings, strict=True)
        )
        rows.append((name, text))
    return rows


def draw_patterns(labels: dict) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(9.0, 3.2), layout="constrained")
    rows = _patterns()
    for row, (_, text) in enumerate(rows):
        for i, kind in enumerate(text):
            ax.add_patch(Rectangle((i, -row), 0.9, 0.8, facecolor=COLOURS[kind], lw=0))
    ax.set_xlim(0, 62)
    ax.set_ylim(-len(rows) + 0.8, 0.9)
    ax.set_yticks([-row + 0.4 for row in range(len(rows))], [r[0] for r in rows], fontsize=9)
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
    return fig


save_each_language(draw_patterns, "mixing-layers-patterns.svg", LABELS)
