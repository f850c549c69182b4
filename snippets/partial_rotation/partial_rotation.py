"""Chapter "Partial and proportional rotation": which pairs of a head turn, and how fast.

GPT-NeoX-style partial rotary and p-RoPE (transformers' ``proportional`` rope type) side by
side, from the same posenc calls a model makes. Functions named ``show_*`` print a result with
labels in the reader's language (``lang="en"`` or ``"zh"``); each page calls them in a one-line
block.

Run it: python snippets/partial_rotation/partial_rotation.py
"""

# --8<-- [start:schemes]
import math
import unicodedata

import torch

import posenc

head_dim, base = 16, 10000.0
# transformers' rope_parameters; None is ordinary RoPE over the whole head
SCHEMES = {
    "full": None,
    "neox_0.25": {"partial_rotary_factor": 0.25},
    "prope_0.75": {"rope_type": "proportional", "partial_rotary_factor": 0.75},
    "prope_0.25": {"rope_type": "proportional", "partial_rotary_factor": 0.25},
}
NAMES = {
    "en": {"full": "full RoPE", "neox_0.25": "NeoX 25%", "prope_0.75": "p-RoPE 0.75",
           "prope_0.25": "p-RoPE 0.25"},
    "zh": {"full": "完整 RoPE", "neox_0.25": "NeoX 25%", "prope_0.75": "p-RoPE 0.75",
           "prope_0.25": "p-RoPE 0.25"},
}  # fmt: skip
inv_freq = {name: posenc.rope_inv_freq(head_dim, base, scaling=s)[0] for name, s in SCHEMES.items()}


def rotate(x: torch.Tensor, position, scaling=None, base: float | None = None) -> torch.Tensor:
    """x (..., head_dim) turned to `position` by the RoPE that `scaling` describes (base:
    the dict's rope_theta, else 10 000)."""
    rope = posenc.RotaryEmbedding(x.shape[-1], base, scaling=scaling)
    cos, sin = rope.cos_sin(torch.as_tensor(position))  # one position, or one per row of x
    return posenc.apply_rotary(x, cos, sin)


def moves(scaling, head_dim: int = head_dim, base: float = base) -> torch.Tensor:
    """Which dimensions change between positions 0 and 1: one unit vector per dimension."""
    probes = torch.eye(head_dim)
    return (rotate(probes, 1, scaling, base) != probes).any(dim=-1)


def width(text: str) -> int:
    """Columns a terminal gives text (a Chinese character takes two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def pad(text: str, columns: int, right: bool = False) -> str:
    space = " " * max(columns - width(text), 0)
    return space + text if right else text + space


def show_schemes(lang: str = "en") -> None:
    names = NAMES[lang]
    pair, legend = {
        "en": ("pair i", "dimensions that turn (R) and stay (.):"),
        "zh": ("第 i 对", "旋转的维度（R）和不动的维度（.）："),
    }[lang]
    print(pad(pair, 7) + "".join(pad(names[n], 14, right=True) for n in SCHEMES))
    for i in range(head_dim // 2):
        cells = []
        for name in SCHEMES:
            theta = inv_freq[name]
            cells.append("-" if i >= len(theta) else "0" if theta[i] == 0 else f"{theta[i]:.4f}")
        print(pad(f"{i:>5}", 7) + "".join(pad(c, 14, right=True) for c in cells))
    print(legend)
    for name, scaling in SCHEMES.items():
        print(pad(names[name], 13) + "".join("R" if m else "." for m in moves(scaling)))


# NeoX: the first r = 4 dimensions, frequencies over r; p-RoPE: the fastest pairs of the
# whole head, frequencies over head_dim, and 0 for the others (formulas, not posenc)
r, exponents = 4, torch.arange(0, head_dim, 2) / head_dim
assert torch.allclose(inv_freq["neox_0.25"], base ** -(torch.arange(0, r, 2) / r))
assert torch.allclose(inv_freq["prope_0.75"][:6], base ** -exponents[:6])
assert (inv_freq["prope_0.75"][6:] == 0).all() and (inv_freq["prope_0.25"][2:] == 0).all()
# --8<-- [end:schemes]

show_schemes()

# --8<-- [start:turns]
# a head of 128 dimensions at base 10 000, trained on 4096 tokens
big_dim, trained = 128, 4096


def pair_counts(scaling) -> tuple[int, int, int, float]:
    """(rotated pairs, pairs that never turn, rotated pairs that turn less than once in
    `trained` tokens, longest period among the rotated pairs)."""
    theta = posenc.rope_inv_freq(big_dim, base, scaling=scaling)[0]
    theta = theta[theta > 0]
    slow = int((trained * theta < 2 * math.pi).sum())
    return len(theta), big_dim // 2 - len(theta), slow, 2 * math.pi / theta.min().item()


def show_turns(lang: str = "en") -> None:
    columns = {
        "en": ("", "rotated pairs", "fixed pairs", "< 1 turn in 4096", "longest period"),
        "zh": ("", "旋转的维度对", "不转的维度对", "4096 内不满一圈", "最长周期"),
    }[lang]
    print(pad(columns[0], 12) + "".join(pad(c, 18, right=True) for c in columns[1:]))
    for name, scaling in SCHEMES.items():
        rotated, fixed, slow, period = pair_counts(scaling)
        cells = [f"{rotated}/{big_dim // 2}", str(fixed), str(slow), f"{period:,.0f}"]
        print(pad(NAMES[lang][name], 12) + "".join(pad(c, 18, right=True) for c in cells))


# what the prose reads off the table
assert pair_counts(None)[2] == 18 and pair_counts(SCHEMES["prope_0.75"])[2] == 2
assert pair_counts(SCHEMES["neox_0.25"])[2] == 4 and pair_counts(SCHEMES["prope_0.25"])[2] == 0
# --8<-- [end:turns]

show_turns()

# --8<-- [start:channel]
# a query and a key that match only through pair 63, the slowest pair of full RoPE:
# in the half layout pair 63 is dimensions 63 and 127
match = torch.zeros(big_dim)
match[63] = 1.0
distances = [0, 1024, 4096, 16384, 65536]


def score(scaling, distance: int) -> float:
    """<R_m q, R_n k> with q = k = `match` and m - n = distance."""
    return (rotate(match, distance, scaling) @ rotate(match, 0, scaling)).item()


def show_channel(lang: str = "en") -> None:
    print(pad({"en": "distance", "zh": "距离"}[lang], 12) + "".join(f"{r:>8}" for r in distances))
    for name in ("full", "prope_0.75"):
        scores = "".join(f"{score(SCHEMES[name], r):8.3f}" for r in distances)
        print(pad(NAMES[lang][name], 12) + scores)


assert score(None, 4096) > 0.85 > 0 > score(None, 16384)  # nearly still, then reversed
assert all(score(SCHEMES["prope_0.75"], r) == 1.0 for r in distances)  # exactly still
# --8<-- [end:channel]

show_channel()

# --8<-- [start:proportional]
# Gemma 4's global layers (transformers' Gemma4TextConfig): 512-dimensional heads
gemma4_global = {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1e6}
theta, _ = posenc.rope_inv_freq(512, scaling=gemma4_global)
full = posenc.default_inv_freq(512, 1e6)
turning = int(theta.count_nonzero())
print(len(theta), turning, torch.equal(theta[:turning], full[:turning]))

torch.manual_seed(0)
x = torch.randn(512)
moved = rotate(x, 100_000, gemma4_global)
still = moved == x  # the dimensions of the zero-frequency pairs come out bit for bit
print(int(still.sum()), still[64:256].all().item(), still[320:].all().item())
# --8<-- [end:proportional]

# --8<-- [start:neox_base]
# the 64 turning pairs are a NeoX-style partial rotary over 128 dimensions with base b^p
neox_base = 1e6**0.25
neox = posenc.default_inv_freq(128, neox_base)
print(f"{neox_base:.2f}", f"{(neox / theta[:64] - 1).abs().max():.1e}")
# --8<-- [end:neox_base]

# --8<-- [start:mistake_head_dim]
# Phi-2: head_dim 2560 / 32 = 80, partial_rotary_factor 0.4: 32 rotated dimensions
phi2 = {"partial_rotary_factor": 0.4}
right, _ = posenc.rope_inv_freq(80, scaling=phi2)  # exponents over the 32 rotated dims
wrong = 1.0 / 10000.0 ** (torch.arange(0, 32, 2) / 80)  # exponents over the whole head


def show_head_dim_mistake(lang: str = "en") -> None:
    rows = {
        "en": ("over rotary_dim = 32", "over head_dim = 80"),
        "zh": ("指数除以 rotary_dim = 32", "指数除以 head_dim = 80"),
    }[lang]
    head = {
        "en": ("slowest θ", "period", "angle at 2047"),
        "zh": ("最慢的 θ", "周期", "2047 处的角度"),
    }
    print(pad("", 24) + "".join(pad(h, 16, right=True) for h in head[lang]))
    for label, theta in zip(rows, (right, wrong), strict=True):
        slowest = theta[-1].item()
        cells = [f"{slowest:.2e}", f"{2 * math.pi / slowest:,.0f}", f"{2047 * slowest:.2f}"]
        print(pad(label, 24) + "".join(pad(c, 16, right=True) for c in cells))


assert len(right) == len(wrong) == 16 and torch.equal(right[0], wrong[0])  # pair 0 agrees
assert (right[1:] < wrong[1:]).all()  # every other pair of the wrong table turns too fast
# --8<-- [end:mistake_head_dim]

show_head_dim_mistake()

# --8<-- [start:mistake_confuse]
# Gemma 4's global-layer dict without its rope_type: read as NeoX partial rotary
as_neox = {"partial_rotary_factor": 0.25, "rope_theta": 1e6}


def turning_dims(scaling) -> str:
    """The dimensions of a 512-dimensional head that turn, as ranges."""
    turning = moves(scaling, 512, None).nonzero().flatten().tolist()
    starts = [d for d in turning if d - 1 not in turning]
    ends = [d for d in turning if d + 1 not in turning]
    return ", ".join(f"{a}-{b}" for a, b in zip(starts, ends, strict=True))


torch.manual_seed(1)
q, k = torch.randn(2, 64, 512)  # 64 random queries and keys
q_pos, k_pos = torch.randint(0, 8192, (2, 64))


def scores(scaling, q=q, k=k, base=None) -> torch.Tensor:
    return (rotate(q, q_pos, scaling, base) * rotate(k, k_pos, scaling, base)).sum(-1)


print(turning_dims(gemma4_global), "|", turning_dims(as_neox))
print(f"{(scores(as_neox) - scores(gemma4_global)).abs().max():.1f}")
# --8<-- [end:mistake_confuse]

# --8<-- [start:mistake_convert]
# move pair i = (i, i + 256) of the proportional layout to (i, i + 64), i < 64: the turning
# dimensions first, as a NeoX rotary slice of 128 expects; then the base b^p
perm = torch.cat([torch.arange(0, 64), torch.arange(256, 320), torch.arange(64, 256),
                  torch.arange(320, 512)])  # fmt: skip
neox_quarter = {"partial_rotary_factor": 0.25}
reference = scores(gemma4_global)
cases = [(False, 1e6), (False, neox_base), (True, 1e6), (True, neox_base)]
results = []
for moved_rows, new_base in cases:
    qq, kk = (q[:, perm], k[:, perm]) if moved_rows else (q, k)
    difference = (scores(neox_quarter, qq, kk, new_base) - reference).abs().max().item()
    results.append((difference, difference < 1e-2))


def show_conversion(lang: str = "en") -> None:
    labels = {
        "en": (("q/k rows moved", "base", "max |Δ score|", "same"), ("no", "yes")),
        "zh": (("q/k 的行已移动", "底数", "分数最大差", "相同"), ("否", "是")),
    }[lang]
    (moved, base_, diff, same), yes_no = labels
    print(pad(moved, 16) + pad(base_, 10) + pad(diff, 15, right=True) + "  " + same)
    for (moved_rows, new_base), (difference, equal) in zip(cases, results, strict=True):
        shown = f"{new_base:,.0f}" if new_base > 100 else f"{new_base:.2f}"
        print(pad(yes_no[moved_rows], 16) + pad(shown, 10)
              + f"{difference:15.3f}  {yes_no[equal]}")  # fmt: skip


assert [equal for _, equal in results] == [False, False, False, True]
# --8<-- [end:mistake_convert]

show_conversion()


# --8<-- [start:exercise_gemma4]
# 8192 tokens: how many of the 256 pairs of a global head turn at least once?
def show_full_turns(lang: str = "en") -> None:
    for name, scaling in (("prope_0.25", gemma4_global), ("full", {"rope_theta": 1e6})):
        theta, _ = posenc.rope_inv_freq(512, scaling=scaling)
        print(
            pad(NAMES[lang][name], 12), f"{int((8192 * theta >= 2 * math.pi).sum())}/{len(theta)}"
        )


# --8<-- [end:exercise_gemma4]

show_full_turns()

# --8<-- [start:exercise_phi4]
# Phi-4-mini: head_dim 3072 / 24 = 128, partial_rotary_factor 0.75, LongRoPE factors
phi4 = {"rope_type": "longrope", "partial_rotary_factor": 0.75,
        "original_max_position_embeddings": 4096, "short_factor": [1.0] * 48,
        "long_factor": [1.0] * 48}  # fmt: skip
rope = posenc.RotaryEmbedding(128, scaling=phi4, max_position_embeddings=131072)
print(rope.rotary_dim, len(rope.inv_freq))
try:
    posenc.RotaryEmbedding(128, scaling=phi4 | {"short_factor": [1.0] * 64,
                                                "long_factor": [1.0] * 64},
                           max_position_embeddings=131072)  # fmt: skip
except ValueError as error:
    assert "48" in str(error)
    print("ValueError")
# --8<-- [end:exercise_phi4]
