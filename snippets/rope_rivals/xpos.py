"""Chapter "RoPE's rivals": xPos, RoPE with a decay per pair, from posenc.XPos.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/rope_rivals/xpos.py
"""

# --8<-- [start:xpos]
import unicodedata

import torch

import posenc

torch.manual_seed(0)
head_dim, seq = 64, 16
xpos = posenc.XPos(head_dim)  # the released constants: gamma = 0.4, B = 512, base 10 000
# One query vector and one key vector, written at every position: whatever the scores do
# along a diagonal (same i - j, other positions) comes from the positions alone.
q = torch.randn(head_dim).expand(1, 1, seq, head_dim)
k = torch.randn(head_dim).expand(1, 1, seq, head_dim)


def scores_of(q_enc, k_enc):
    return (q_enc @ k_enc.transpose(-1, -2))[0, 0]  # (seq, seq): row i, column j


def depends_on_distance_only(scores):
    """Every diagonal constant: score(i, j) == score(i + s, j + s) for every shift s."""
    return all(
        torch.allclose(scores[s:, s:], scores[:-s, :-s], rtol=1e-4, atol=1e-5)
        for s in range(1, seq)
    )


right = scores_of(*xpos(q, k))  # queries times zeta^(n/B), keys divided by it
# The same factors, but keys multiplied like the queries instead of divided:
cos_q, sin_q = posenc.xpos_cos_sin(torch.arange(seq), xpos.inv_freq, center=posenc.xpos_center(seq))
wrong = scores_of(
    posenc.apply_rotary(q, cos_q, sin_q, layout="interleaved"),
    posenc.apply_rotary(k, cos_q, sin_q, layout="interleaved"),
)
assert depends_on_distance_only(right) and not depends_on_distance_only(wrong)

zeta = posenc.xpos_zeta(head_dim)  # one decay base per pair, rising from 2/7 towards 1
pairs, distances = (0, 8, 16, 31), (1, 128, 1024, 4096)
decay = {(i, r): float(zeta[i] ** (r / xpos.scale_base)) for i in pairs for r in distances}


def key_factor(k_len):
    """Largest factor by which xPos multiplies a key when the sequence has k_len keys."""
    cos, sin = posenc.xpos_cos_sin(
        torch.arange(k_len), xpos.inv_freq, center=posenc.xpos_center(k_len), downscale=True
    )
    return float(torch.hypot(cos, sin).max())


def pad(text, width):
    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return " " * max(width - shown, 0) + text


def show_xpos(lang="en"):
    text = {
        "en": ("scores depend on i - j only: {} (keys divided), {} (keys multiplied)",
               "pair", "r = {}", "largest key factor, L = {} keys: {}", ", "),
        "zh": ("分数只取决于 i - j：{}（key 除以系数），{}（key 乘以系数）",
               "维度对", "r = {}", "key 的最大放大倍数，L = {} 个 key：{}", "；"),
    }[lang]  # fmt: skip
    print(text[0].format(depends_on_distance_only(right), depends_on_distance_only(wrong)))
    head = pad(text[1], 6) + pad("zeta", 8)
    print(head + "".join(pad(text[2].format(r), 11) for r in distances))
    for i in pairs:
        cells = "".join(f"{decay[i, r]:11.4f}" if decay[i, r] >= 1e-3 else f"{decay[i, r]:11.1e}"
                        for r in distances)  # fmt: skip
        print(f"{i:6d}{float(zeta[i]):8.4f}{cells}")
    for n in (1024, 8192, 16384):
        print(text[3].format(n, f"{key_factor(n):.3g}"))


# --8<-- [end:xpos]

if __name__ == "__main__":
    show_xpos()
