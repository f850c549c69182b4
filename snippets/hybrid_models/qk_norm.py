"""Chapter "Position in hybrid and linear-attention models": QK-norm before or after RoPE.

RoPE's score q_m . k_n depends only on the distance m - n. One query and one key vector with
random content sit at every pair of positions (m, m - r); for each kind of norm the spread of
the score over m, at fixed r, says whether the score still depends only on the distance.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/hybrid_models/qk_norm.py
"""

# --8<-- [start:norms]
import unicodedata

import torch

import posenc

HEAD_DIM, HEADS, POSITIONS = 64, 4, 512
gen = torch.Generator().manual_seed(0)
q_all, k_all = torch.randn(2, HEADS * HEAD_DIM, generator=gen)  # one token's q and k, 4 heads
weight = 1 + 0.5 * torch.randn(HEAD_DIM, generator=gen)  # a learned per-channel scale
weight_all = 1 + 0.5 * torch.randn(HEADS * HEAD_DIM, generator=gen)  # OLMo 2: over all heads
pair_weight = weight[: HEAD_DIM // 2].repeat(2)  # equal on both channels of each pair ("half")
rope = posenc.RotaryEmbedding(HEAD_DIM)  # base 10000, pairs (i, i + 32)


def rms(x: torch.Tensor) -> torch.Tensor:
    """x / RMS(x) over the last dimension, no weight (Llama 4's L2 norm is this)."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


def rotate(q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The same q and k at every position, rotated by it: (POSITIONS, HEAD_DIM) each."""
    q, k = (x.expand(1, 1, POSITIONS, HEAD_DIM) for x in (q, k))
    q, k = rope(q, k)
    return q[0, 0], k[0, 0]


head = slice(0, HEAD_DIM)  # the first head
VARIANTS = {  # name: (rotated q, rotated k) at every position
    "no norm": rotate(q_all[head], k_all[head]),
    "RMSNorm with weight, before RoPE": rotate(weight * rms(q_all[head]), weight * rms(k_all[head])),
    "RMSNorm over all heads, before RoPE": rotate(
        (weight_all * rms(q_all))[head], (weight_all * rms(k_all))[head]),
    "L2 norm without weight, after RoPE": tuple(rms(x) for x in rotate(q_all[head], k_all[head])),
    "RMSNorm with weight, after RoPE": tuple(
        weight * rms(x) for x in rotate(q_all[head], k_all[head])),
    "weight equal within pairs, after RoPE": tuple(
        pair_weight * rms(x) for x in rotate(q_all[head], k_all[head])),
}  # fmt: skip


def spread(q: torch.Tensor, k: torch.Tensor, distances=(0, 1, 7, 100)) -> float:
    """Largest change of q_m . k_{m-r} over the positions m, at each distance r."""
    scores = q @ k.T  # (POSITIONS, POSITIONS): query position m, key position n
    return max((scores.diagonal(-r).max() - scores.diagonal(-r).min()).item() for r in distances)


spreads = {name: spread(*qk) for name, qk in VARIANTS.items()}
# --8<-- [end:norms]

# --8<-- [start:table]
NAMES_ZH = {
    "no norm": "不做归一化",
    "RMSNorm with weight, before RoPE": "带权重的 RMSNorm，在 RoPE 之前",
    "RMSNorm over all heads, before RoPE": "跨所有头的 RMSNorm，在 RoPE 之前",
    "L2 norm without weight, after RoPE": "不带权重的 L2 归一化，在 RoPE 之后",
    "RMSNorm with weight, after RoPE": "带权重的 RMSNorm，在 RoPE 之后",
    "weight equal within pairs, after RoPE": "每对维度权重相同，在 RoPE 之后",
}


def show_spreads(lang: str = "en") -> None:
    title = {"en": ("q and k", "spread of the score"), "zh": ("q 和 k 的处理", "分数的变化幅度")}
    print(_cell(title[lang][0], 40), title[lang][1])
    for name, value in spreads.items():
        print(_cell(name if lang == "en" else NAMES_ZH[name], 40), f"{value:.2f}")


def _cell(text: str, width: int) -> str:
    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return text + " " * (width - shown)


relative = {name: value < 1e-2 for name, value in spreads.items()}
assert relative == {name: name != "RMSNorm with weight, after RoPE" for name in spreads}
assert spreads["RMSNorm with weight, after RoPE"] > 1.0
# --8<-- [end:table]

# --8<-- [start:mistake]
q, k = q_all[head], k_all[head]
before = rotate(weight * rms(q), weight * rms(k))  # Qwen3 / Gemma 3: norm, then rotate
after = tuple(weight * rms(x) for x in rotate(q, k))  # the same weights, moved after RoPE
for q_rot, k_rot in (before, after):
    at_0, at_400 = q_rot[3] @ k_rot[0], q_rot[403] @ k_rot[400]  # distance 3 both times
    print(f"{at_0:8.3f} {at_400:8.3f}")  # positions (3, 0) and (403, 400)
# --8<-- [end:mistake]

if __name__ == "__main__":
    show_spreads(lang="en")
    show_spreads(lang="zh")
