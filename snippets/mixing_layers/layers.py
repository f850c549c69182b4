"""Chapter "Mixing layers": the three kinds of attention layer and the patterns of six models.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/mixing_layers/layers.py
"""

# --8<-- [start:masks]
import unicodedata

import torch

import posenc


def visible(n: int, kind: str, size: int | None = None, causal: bool = True) -> torch.Tensor:
    """Which keys j query i may attend to: an (n, n) boolean matrix.

    "full": every key up to the query. "sliding": the last `size` keys, the query itself
    included. "chunked": the keys of the query's own block of `size` tokens, up to the query.
    """
    i = torch.arange(n)[:, None]  # query positions, a column
    j = torch.arange(n)[None, :]  # key positions, a row
    allowed = j <= i if causal else torch.ones(n, n, dtype=torch.bool)
    if kind == "sliding":
        allowed = allowed & ((i - j).abs() < size)
    elif kind == "chunked":
        allowed = allowed & (i // size == j // size)
    return allowed


def show_masks(n: int = 8, size: int = 3, lang: str = "en") -> None:
    names = {
        "en": ["query", "full", "sliding", "chunked"],
        "zh": ["query", "全局", "滑动窗口", "分块"],
    }
    masks = [visible(n, kind, size) for kind in ("full", "sliding", "chunked")]
    print(
        "  ".join(
            _cell(name, width) for name, width in zip(names[lang], [5, n, n, n], strict=True)
        ).rstrip()
    )
    for i in range(n):
        rows = ("".join("x" if a else "." for a in mask[i].tolist()) for mask in masks)
        print(f"{i:5d}  " + "  ".join(rows))


def _cell(text: str, width: int, right: bool = False) -> str:
    """Pad text to a column: a Chinese character takes two columns of a terminal."""
    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    fill = " " * (width - shown)
    return fill + text if right else text + fill


# the query itself and the 2 before it; a chunk of 3 starts afresh at positions 3 and 6
assert visible(8, "sliding", 3)[5].nonzero().flatten().tolist() == [3, 4, 5]
assert visible(8, "chunked", 3)[6].nonzero().flatten().tolist() == [6]
# --8<-- [end:masks]

# --8<-- [start:configs]
L, C, G = "sliding_attention", "chunked_attention", "full_attention"


def every(n: int, layers: int, other, last) -> list:
    """transformers' rule for a repeating pattern: layer i is `last` when (i + 1) % n == 0."""
    return [last if (i + 1) % n == 0 else other for i in range(layers)]


# The fields of each model's config as transformers 5.23 holds them after reading the
# released config.json (sources in the chapter's references); window: tokens a local layer sees;
# context: the length the model is released for.
MODELS = {
    "Gemma 2 9B": {
        "context": 8192,
        "layer_types": every(2, 42, L, G),
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0},
        "window": 4096,
    },
    "Gemma 3 27B": {
        "context": 131072,
        "layer_types": every(6, 62, L, G),
        "rope_parameters": {  # one dict per layer type
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
        },
        "window": 1024,
    },
    "gpt-oss-120b": {
        "context": 131072,
        "layer_types": every(2, 36, L, G),
        "rope_parameters": {
            "rope_type": "yarn",
            "factor": 32.0,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "truncate": False,
            "original_max_position_embeddings": 4096,
            "rope_theta": 150000.0,
        },  # fmt: skip
        "window": 128,
    },
    "Command R7B": {
        "context": 131072,
        "layer_types": every(4, 32, L, G),
        "rope_parameters": {"rope_type": "default", "rope_theta": 50000.0},
        "nope_types": (G,),  # Cohere2 rotates only in its sliding layers (in its code)
        "window": 4096,
    },
    "Llama 4 Scout": {
        "context": 10485760,
        "layer_types": every(4, 48, C, G),
        "no_rope_layers": every(4, 48, 1, 0),  # 1 = RoPE, 0 = NoPE
        "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0},
        "window": 8192,  # attention_chunk_size
    },
    "SmolLM3-3B": {
        "context": 65536,
        "layer_types": [G] * 36,
        "no_rope_layers": every(4, 36, 1, 0),
        "rope_parameters": {"rope_type": "default", "rope_theta": 5000000.0},
        "window": None,
    },
}

settings = {
    name: posenc.layer_rope_settings(
        m["layer_types"],
        m["rope_parameters"],
        no_rope_layers=m.get("no_rope_layers"),
        nope_types=m.get("nope_types", ()),
    )
    for name, m in MODELS.items()
}
gemma3 = settings["Gemma 3 27B"]
print(gemma3[0].rope_theta, gemma3[5].rope_theta, gemma3[5].rope_type, gemma3[5].factor)
print([i for i, s in enumerate(settings["Llama 4 Scout"]) if s is None][:4])
# --8<-- [end:configs]

# --8<-- [start:patterns]
LETTER = {L: "L", C: "C", G: "G"}  # local sliding, local chunked, global; N: no RoPE


def pattern(name: str) -> str:
    """One letter per layer."""
    layer_types = MODELS[name]["layer_types"]
    return "".join(
        "N" if s is None else LETTER[t] for t, s in zip(layer_types, settings[name], strict=True)
    )


def unit(text: str) -> str:
    """The shortest block that, repeated, gives the pattern (the last copy may be cut)."""
    for p in range(1, len(text) + 1):
        if all(text[i] == text[i % p] for i in range(len(text))):
            return text[:p]


def describe(setting) -> str:
    base = f"{setting.rope_theta:.0f}"
    return (
        base
        if setting.rope_type == "default"
        else f"{base} {setting.rope_type} x{setting.factor:g}"
    )


def show_patterns(lang: str = "en") -> None:
    titles = {
        "en": ["model", "layers", "unit", "L", "C", "G", "N", "window", "RoPE base"],
        "zh": ["模型", "层数", "重复单元", "L", "C", "G", "N", "窗口", "RoPE 底数"],
    }[lang]
    widths = [13, 6, 8, 3, 3, 3, 3, 6]
    print(
        " ".join(
            _cell(t, w, right=i > 0) for i, (t, w) in enumerate(zip(titles, widths, strict=False))
        ),
        titles[-1],
    )
    for name in MODELS:
        text = pattern(name)
        bases = {}  # the setting of the first layer of each letter
        for letter, s in zip(text, settings[name], strict=True):
            if s is not None:
                bases.setdefault(letter, describe(s))
        counts = [str(text.count(letter)) for letter in "LCGN"]
        cells = [name, str(len(text)), unit(text), *counts, str(MODELS[name]["window"] or "-")]
        shown = " ".join(
            _cell(c, w, right=i > 0) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )
        print(shown, ", ".join(f"{letter} {b}" for letter, b in bases.items()))


assert pattern("Gemma 3 27B") == ("LLLLLG" * 11)[:62]  # 10 full blocks, then two local layers
assert pattern("Llama 4 Scout") == "CCCN" * 12 and pattern("SmolLM3-3B") == "GGGN" * 9
# --8<-- [end:patterns]


# --8<-- [start:distances]
def longest_distance(name: str) -> dict[str, int]:
    """The longest query-key distance each kind of RoPE layer sees at the model's context."""
    n, window = MODELS[name]["context"], MODELS[name]["window"]
    reach = {"L": window - 1 if window else None, "C": window - 1 if window else None, "G": n - 1}
    return {
        letter: min(reach[letter], n - 1)
        for letter in dict.fromkeys(pattern(name))
        if letter != "N"
    }


def show_distances(lang: str = "en") -> None:
    titles = {"en": ["model", "context", "longest distance in a RoPE layer"],
              "zh": ["模型", "上下文", "RoPE 层见到的最远距离"]}[lang]  # fmt: skip
    print(_cell(titles[0], 13), _cell(titles[1], 8, right=True), titles[2])
    for name in MODELS:
        reach = ", ".join(f"{k} {v}" for k, v in longest_distance(name).items())
        print(_cell(name, 13), str(MODELS[name]["context"]).rjust(8), reach)


assert longest_distance("Command R7B") == {"L": 4095}  # no RoPE layer sees further
assert longest_distance("Gemma 3 27B") == {"L": 1023, "G": 131071}
# --8<-- [end:distances]


# --8<-- [start:mistake_chunked]
def keys_seen(position: int, kind: str, size: int) -> int:
    """How many keys the query at `position` attends to (the row of `visible` for it)."""
    i, j = torch.tensor([[position]]), torch.arange(position + 1)[None, :]
    if kind == "sliding":
        return int(((i - j) < size).sum())
    return int((i // size == j // size).sum())  # chunked


def show_keys_seen(lang: str = "en") -> None:
    titles = {"en": ["position", "sliding window 8192", "chunks of 8192"],
              "zh": ["位置", "滑动窗口 8192", "分块 8192"]}[lang]  # fmt: skip
    print(_cell(titles[0], 8, right=True), *(_cell(t, 20, right=True) for t in titles[1:]))
    for p in (8190, 8191, 8192, 8193, 12287):
        seen = [keys_seen(p, kind, 8192) for kind in ("sliding", "chunked")]
        print(f"{p:8d}", *(f"{n:20d}" for n in seen))


assert keys_seen(8192, "chunked", 8192) == 1  # the first token of a chunk sees only itself
# --8<-- [end:mistake_chunked]

if __name__ == "__main__":
    show_masks(lang="en")
    show_patterns(lang="en")
    show_distances(lang="en")
