"""Chapter "Comparing and choosing": which model uses what, computed from the released
configs posenc ships (src/posenc/configs/), each read by posenc.describe.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it from the repository: python snippets/choosing/released.py
"""

# --8<-- [start:released]
import posenc

# A config does not say how the code pairs channels; these families' Hugging Face code pairs
# adjacent ones (Llama 4: complex numbers; DeepSeek: rope_interleave), the others halves.
INTERLEAVED = {"llama4_text", "deepseek_v2", "deepseek_v3"}

TEXT = {
    "en": {
        "header": (
            "model",
            "encoding",
            "context",
            "base θ",
            "scaling",
            "layout",
            "rotary",
            "layers",
        ),
        "encoding": {
            "rope": "RoPE",
            "mrope": "M-RoPE",
            "mla": "RoPE (MLA)",
            "alibi": "ALiBi",
            "t5-bias": "T5 bias",
            "learned": "learned",
        },
        "global layers": "{} (global)",
        "all": "all",
        "part": "{} of {}",
        "interleaved": " interleaved",
        "alike": "all alike",
        "every": "all: {}",
        "where": {
            "full_attention": "global",
            "sliding_attention": "local {}",
            "chunked_attention": "chunks of {}",
        },
        "comma": ", ",
    },
    "zh": {
        "header": ("模型", "编码", "上下文长度", "底数 θ", "缩放", "排布", "旋转维度", "各层"),
        "encoding": {
            "rope": "RoPE",
            "mrope": "M-RoPE",
            "mla": "RoPE（MLA）",
            "alibi": "ALiBi",
            "t5-bias": "T5 偏置",
            "learned": "可学习",
        },
        "global layers": "{}（全局层）",
        "all": "全部",
        "part": "{1} 维中的 {0}",
        "interleaved": " 交错",
        "alike": "每层相同",
        "every": "每层：{}",
        "where": {
            "full_attention": "全局",
            "sliding_attention": "窗口 {}",
            "chunked_attention": "分块 {}",
        },
        "comma": "，",
    },
}


def number(x):
    return "-" if x is None else f"{x:g}" if x != int(x) else str(int(x))


def global_rope(layers):
    """The RoPE layers that attend to the whole context (all RoPE layers if none does)."""
    rope = [layer for layer in layers if layer.kind == "rope"]
    return [layer for layer in rope if layer.window is None] or rope


def scaling_cell(layers, text):
    rope = [layer for layer in layers if layer.kind == "rope"]
    spec = global_rope(layers)[0].scaling
    if spec.rope_type == "default":
        return "-"
    cell = spec.rope_type + (f" ×{spec.factor:g}" if spec.factor else "")
    if any(layer.scaling != spec for layer in rope):  # Gemma 3: only the global layers
        cell = text["global layers"].format(cell)
    return cell


def rotary_cell(layer, fields, text):
    width = layer.head_dim + fields.get("qk_nope_head_dim", 0)  # MLA: the q·k width of a head
    if layer.rotary_dim < width:
        return text["part"].format(layer.rotary_dim, width)
    cell = text["all"]
    if layer.mrope_axes is not None:  # pairs per axis, and whether the axes take turns
        sections = "/".join(str(layer.mrope_axes.count(axis)) for axis in range(3))
        interleaved = list(layer.mrope_axes) != sorted(layer.mrope_axes)
        cell += text["comma"] + "t/h/w " + sections + (text["interleaved"] if interleaved else "")
    return cell


def signature(layer, base, text):
    """What a layer does with positions, in words: RoPE or NoPE, where it attends, its base."""
    words = {"rope": "RoPE", "none": "NoPE"}.get(layer.kind, text["encoding"].get(layer.kind))
    if layer.layer_type is not None:
        words += " " + text["where"][layer.layer_type].format(layer.window)
    if layer.kind == "rope" and layer.rope_theta != base:
        words += f" θ {number(layer.rope_theta)}"
    return words


def layers_cell(layers, base, text):
    words = [signature(layer, base, text) for layer in layers]
    # the shortest unit that repeats through all the layers
    period = next(p for p in range(1, len(words) + 1)
                  if all(w == words[i % p] for i, w in enumerate(words)))  # fmt: skip
    unit = words[:period]
    if period == 1:
        plain = layers[0].layer_type in (None, "full_attention") and layers[0].kind != "none"
        return text["alike"] if plain else text["every"].format(unit[0])
    runs = []  # consecutive equal layers of the unit: [count, words]
    for w in unit:
        if runs and runs[-1][1] == w:
            runs[-1][0] += 1
        else:
            runs.append([1, w])
    return text["comma"].join(f"{n}× {w}" for n, w in runs)


def row(name, text):
    entry = posenc.released_config(name)
    config = entry["config"]
    fields = config.get("text_config", config)  # a multimodal model: its text model
    model = posenc.describe(config)
    first = model.layers[0]
    if "rope" not in model.kinds():
        return [entry["model"], text["encoding"][first.kind], number(model.max_position_embeddings),
                "-", "-", "-", "-", layers_cell(model.layers, None, text)]  # fmt: skip
    rope = global_rope(model.layers)[0]
    kind = "mrope" if rope.mrope_axes else "mla" if "qk_nope_head_dim" in fields else "rope"
    return [
        entry["model"],
        text["encoding"][kind],
        number(model.max_position_embeddings),
        number(rope.rope_theta),
        scaling_cell(model.layers, text),
        "interleaved" if model.model_type in INTERLEAVED else "half",
        rotary_cell(rope, fields, text),
        layers_cell(model.layers, rope.rope_theta, text),
    ]


def show_released(lang="en"):
    text = TEXT[lang]
    print("| " + " | ".join(text["header"]) + " |")
    print("|---|---|--:|--:|---|---|---|---|")
    for name in posenc.released_configs():
        print("| " + " | ".join(row(name, text)) + " |")


# --8<-- [end:released]

if __name__ == "__main__":
    for lang in ("en", "zh"):
        show_released(lang)
