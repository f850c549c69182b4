"""Chapter "Position in hybrid and linear-attention models": seven hybrids, and the decay of
a linear-attention layer as a relative position bias.

The layer patterns and position encodings of Jamba, Qwen3-Next, MiniMax-Text-01 and Kimi
Linear, as their released code and model cards give them (sources in
audit/chapters/17-hybrid-models.toml; tests/chapters/test_hybrid_models.py checks them against
transformers 5.23), turned into one RoPE setting per layer by posenc.layer_rope_settings; what
transformers' code of Nemotron-H, Granite 4.0-H and Falcon-H1 does with position; and the
decay rates of MiniMax's lightning layers, down to its deepest one.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/hybrid_models/models.py
"""

# --8<-- [start:models]
import unicodedata

import torch

import posenc

# One repeating unit of layers per model: "linear_attention" for a recurrent or linear layer
# (Mamba, Gated DeltaNet, lightning attention, KDA), "full_attention" for softmax attention.
# rope_parameters per layer type: None = no RoPE in that type of layer.
MODELS = {
    "Jamba": {
        "unit": ["linear_attention"] * 4 + ["full_attention"] + ["linear_attention"] * 3,
        "rope_parameters": {"linear_attention": None, "full_attention": None},
        "head_dim": 128, "linear": "Mamba", "short_conv": 4,
    },
    "Qwen3-Next": {
        "unit": ["linear_attention"] * 3 + ["full_attention"],
        # the base is left out: only the rotated width is shown here
        "rope_parameters": {"linear_attention": None,
                            "full_attention": {"rope_type": "default", "partial_rotary_factor": 0.25}},
        "head_dim": 256, "linear": "Gated DeltaNet", "short_conv": 4,
    },
    "MiniMax-Text-01": {
        "unit": ["linear_attention"] * 7 + ["full_attention"],
        "rope_parameters": {"linear_attention": None,
                            "full_attention": {"rope_type": "default", "rope_theta": 10_000_000.0,
                                               "partial_rotary_factor": 0.5}},
        "head_dim": 128, "linear": "lightning", "short_conv": None,
    },
    "Kimi Linear": {
        "unit": ["linear_attention"] * 3 + ["full_attention"],
        "rope_parameters": {"linear_attention": None, "full_attention": None},
        "head_dim": 192, "linear": "KDA", "short_conv": 4,  # MLA: 128 + 64 query/key channels
    },
}  # fmt: skip


def describe(name: str) -> tuple[str, str, str]:
    """(ratio of linear to attention layers, rotated channels of an attention head, short conv)."""
    model = MODELS[name]
    settings = posenc.layer_rope_settings(model["unit"], model["rope_parameters"])
    linear = model["unit"].count("linear_attention")
    attention = [s for s, t in zip(settings, model["unit"], strict=True) if t == "full_attention"]
    assert all(
        s is None for s, t in zip(settings, model["unit"], strict=True) if t != "full_attention"
    )
    if attention[0] is None:
        rotated = f"0 / {model['head_dim']}"
    else:
        rope = posenc.RotaryEmbedding(model["head_dim"], scaling=attention[0])
        rotated = f"{rope.rotary_dim} / {model['head_dim']}"
    conv = "-" if model["short_conv"] is None else str(model["short_conv"])
    return f"{linear}:{len(attention)}", rotated, conv


LABELS = {
    "en": ("model", "linear layer", "conv", "linear:attention", "RoPE channels"),
    "zh": ("模型", "线性层", "卷积核", "线性层:注意力层", "RoPE 维度"),
}


def show_models(lang: str = "en") -> None:
    widths = (16, 15, 7, 17, 13)
    print(" ".join(_cell(t, w) for t, w in zip(LABELS[lang], widths, strict=True)).rstrip())
    for name, model in MODELS.items():
        ratio, rotated, conv = describe(name)
        row = (name, model["linear"], conv, ratio, rotated)
        print(" ".join(_cell(t, w) for t, w in zip(row, widths, strict=True)).rstrip())


def _cell(text: str, width: int) -> str:
    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return text + " " * (width - shown)


assert describe("Jamba")[1] == "0 / 128" and describe("Kimi Linear")[1] == "0 / 192"
assert describe("Qwen3-Next")[1] == "64 / 256" and describe("MiniMax-Text-01")[1] == "64 / 128"
# --8<-- [end:models]


# --8<-- [start:others]
# Three more Mamba hybrids, as transformers 5.23 builds them (no layer pattern: transformers'
# defaults do not give the released one). Nemotron-H's attention has no rotary code;
# Granite 4.0-H rotates only if position_embedding_type is "rope" (the default is None);
# Falcon-H1 runs Mamba-2 and attention side by side in every layer and rotates whole heads.
OTHERS = {  # model: (linear layer, conv, RoPE in the attention layers), per language
    "Nemotron-H": {"en": ("Mamba-2", "4", "none"), "zh": ("Mamba-2", "4", "无")},
    "Granite 4.0-H": {"en": ("Mamba-2", "4", "none by default"), "zh": ("Mamba-2", "4", "默认无")},
    "Falcon-H1": {"en": ("Mamba-2, parallel", "4", "whole head"),
                  "zh": ("Mamba-2，并行", "4", "整个头")},
}  # fmt: skip
OTHER_LABELS = {
    "en": ("model", "linear layer", "conv", "RoPE in attention"),
    "zh": ("模型", "线性层", "卷积核", "注意力层的 RoPE"),
}


def show_others(lang: str = "en") -> None:
    widths = (16, 18, 7, 17)
    print(" ".join(_cell(t, w) for t, w in zip(OTHER_LABELS[lang], widths, strict=True)).rstrip())
    for name, rows in OTHERS.items():
        row = (name, *rows[lang])
        print(" ".join(_cell(t, w) for t, w in zip(row, widths, strict=True)).rstrip())


# --8<-- [end:others]


# --8<-- [start:decay]
# Lightning attention (MiniMax) weighs key j of query i by exp(-s_h (i - j)): head h forgets
# at rate s_h = 2^(-8h/H) (h = 1..H) times a factor that shrinks with the layer's depth.
def lightning_slopes(heads: int, layer: int, layers: int) -> torch.Tensor:
    """s_h of one layer, as transformers' MiniMaxLightningAttention.get_slope_rate computes it."""
    base = 1 / (2 ** (8 / heads))
    factor = 1 - layer / (layers - 1 + 1e-5) + 1e-5
    return base ** torch.arange(1, heads + 1) * factor


heads, n = 8, 6
slopes = lightning_slopes(heads, layer=0, layers=80)
lightning_weight = torch.exp(posenc.alibi_bias(heads, n, slopes=slopes)).tril()  # (heads, n, n)
print(torch.allclose(slopes, posenc.alibi_slopes(heads), atol=1e-4))  # ALiBi's slopes
print(lightning_weight[0])  # head 1: exp(-0.5 (i - j)) below the diagonal

# MiniMax-Text-01 (model card): 80 layers, 64 heads, a softmax layer after every 7 lightning
# layers, so layer 79 is softmax attention and layer 78 the deepest lightning layer.
layer_kinds = MODELS["MiniMax-Text-01"]["unit"] * 10
assert layer_kinds[78] == "linear_attention" and layer_kinds[79] == "full_attention"
deepest = lightning_slopes(64, layer=78, layers=80)
print(f"{deepest[0] / lightning_slopes(64, layer=0, layers=80)[0]:.4f}")  # the depth factor


def show_deepest(lang: str = "en") -> None:
    """s_h of the fastest and the slowest head of layer 78, and 1 / s_h: the distance at which
    the weight has fallen to 1/e."""
    line = {
        "en": "head {h:2d}: s = {s:.2e}, 1/s = {d:5.0f} tokens",
        "zh": "第 {h:2d} 个头：s = {s:.2e}，1/s = {d:5.0f} 个 token",
    }[lang]
    for h in (1, 64):
        s_h = deepest[h - 1].item()
        print(line.format(h=h, s=s_h, d=1 / s_h))


# --8<-- [end:decay]

if __name__ == "__main__":
    show_models(lang="en")
    show_models(lang="zh")
    show_others(lang="en")
    show_others(lang="zh")
