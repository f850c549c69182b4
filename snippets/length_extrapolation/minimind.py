"""Chapter "Length extrapolation for RoPE": MiniMind's inference_rope_scaling, read as YaRN.

Run it: python snippets/length_extrapolation/minimind.py

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.
"""

# --8<-- [start:minimind]
import math
import unicodedata

import torch

import posenc

# MiniMind's defaults: hidden_size 768, 8 heads -> head_dim 96, rope_theta 1e6, and, when
# inference_rope_scaling=True, this dict (its own key "type" is the legacy name of "rope_type").
head_dim, theta = 768 // 8, 1e6
minimind_scaling = {
    "type": "yarn",
    "factor": 16,
    "original_max_position_embeddings": 2048,
    "beta_fast": 32,
    "beta_slow": 1,
    "attention_factor": 1.0,
}
default, _ = posenc.rope_inv_freq(head_dim, base=theta)
scaled, attention_factor = posenc.rope_inv_freq(head_dim, base=theta, scaling=minimind_scaling)

kept = int(torch.isclose(scaled, default).sum())
divided = int(torch.isclose(scaled, default / 16).sum())
ramp = head_dim // 2 - kept - divided
yarn_own = 0.1 * math.log(16) + 1


def show_minimind(lang="en"):
    lines = {
        "en": ("target length: {} tokens", "pairs kept: {}, divided by 16: {}, on the ramp: {}",
               "attention factor used: {}, YaRN's own would be {:.4f}"),
        "zh": ("目标长度：{} 个 token", "保持不变：{} 对，除以 16：{} 对，在斜坡上：{} 对",
               "实际用的注意力因子：{}，按 YaRN 自己的公式应为 {:.4f}"),
    }[lang]  # fmt: skip
    print(lines[0].format(16 * 2048))
    print(lines[1].format(kept, divided, ramp))
    print(lines[2].format(attention_factor, yarn_own))


# --8<-- [end:minimind]


# --8<-- [start:ramp_dims]
# Where the ramp starts and ends: the pair that turns beta times within the original length.
def pair_turning(turns, dim=head_dim, base=theta, original=2048):
    return dim * math.log(original / (turns * 2 * math.pi)) / (2 * math.log(base))


fast, slow = pair_turning(32), pair_turning(1)


def show_ramp_dims(lang="en"):
    line = {"en": "beta_fast=32 turns -> pair {:.2f}, beta_slow=1 turn -> pair {:.2f}",
            "zh": "beta_fast=32 圈 -> 第 {:.2f} 对，beta_slow=1 圈 -> 第 {:.2f} 对"}[lang]  # fmt: skip
    print(line.format(fast, slow))


# --8<-- [end:ramp_dims]


# --8<-- [start:arcs]
# A pair that never completed a turn in training has seen only the arc [0, L·θ_i) of its
# circle. With the scaled frequency θ'_i it reaches the end of that arc at position L·θ_i/θ'_i.
def first_exit(trained_len):
    """The first pair to leave its trained arc: (pair, its wavelength, position where)."""
    wavelength = 2 * math.pi / default
    exit_at = torch.where(wavelength <= trained_len, math.inf, trained_len * default / scaled)
    pair = int(exit_at.argmin())
    return pair, wavelength[pair].item(), exit_at[pair].item()


def right(text, width):
    """Right-aligned in `width` columns, counting a Chinese character as two."""
    return " " * (width - sum(1 + (unicodedata.east_asian_width(c) == "W") for c in text)) + text


def arc_table(lang="en"):
    label = {
        "en": ("trained on", "first pair out", "its wavelength", "leaves its arc at"),
        "zh": ("训练长度", "最先越界的维度对", "它的波长", "越界位置"),
    }[lang]
    widths = (10, 16, 14, 17)
    print("  ".join(right(text, width) for text, width in zip(label, widths, strict=True)))
    for trained_len in (340, 768, 1024, 2048):
        row = (trained_len, *first_exit(trained_len))
        print("  ".join(f"{value:>{width}.0f}" for value, width in zip(row, widths, strict=True)))


# Only the length the dict assumes keeps every angle in its arc up to factor × 2048:
assert first_exit(2048)[2] == 16 * 2048
# --8<-- [end:arcs]


if __name__ == "__main__":
    show_minimind()
    show_ramp_dims()
    arc_table()
