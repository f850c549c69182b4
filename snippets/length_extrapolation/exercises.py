"""Chapter "Length extrapolation for RoPE": worked answers to the exercises.

Run it: python snippets/length_extrapolation/exercises.py

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.
"""

# --8<-- [start:answers]
import torch

import posenc

d, b, s, trained = 64, 10000.0, 4.0, 4096
default, _ = posenc.rope_inv_freq(d, base=b)

# 1. NTK-aware: which pair is slowed by 2?
ntk, _ = posenc.rope_inv_freq(d, base=b * s ** (d / (d - 2)))
ratio = ntk / default

# 2. YaRN with beta_fast = 8: count the pairs left unchanged
yarn = {"rope_type": "yarn", "factor": s, "original_max_position_embeddings": trained}
narrow, _ = posenc.rope_inv_freq(d, base=b, scaling=yarn | {"beta_fast": 8})


def show_answers(lang="en"):
    lines = {
        "en": ("ratio at pairs 15 and 16: {:.4f}, {:.4f}", "pairs kept with beta_fast=8: {}"),
        "zh": ("第 15、16 对的比值：{:.4f}，{:.4f}", "beta_fast=8 时保持不变的维度对：{}"),
    }[lang]  # fmt: skip
    print(lines[0].format(ratio[15], ratio[16]))
    print(lines[1].format(int(torch.isclose(narrow, default).sum())))


# --8<-- [end:answers]


if __name__ == "__main__":
    show_answers()
