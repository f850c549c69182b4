"""Chapter "Length extrapolation for RoPE": worked answers to the exercises.

Run it: python snippets/length_extrapolation/exercises.py
"""

# --8<-- [start:answers]
import torch

import posenc

d, b, s, trained = 64, 10000.0, 4.0, 4096
default, _ = posenc.rope_inv_freq(d, base=b)

# 1. NTK-aware: which pair is slowed by 2?
ntk, _ = posenc.rope_inv_freq(d, base=b * s ** (d / (d - 2)))
ratio = ntk / default
print(f"ratio at pairs 15 and 16: {ratio[15]:.4f}, {ratio[16]:.4f}")

# 2. YaRN with beta_fast = 8: count the pairs left unchanged
yarn = {"rope_type": "yarn", "factor": s, "original_max_position_embeddings": trained}
narrow, _ = posenc.rope_inv_freq(d, base=b, scaling=yarn | {"beta_fast": 8})
print(f"pairs kept with beta_fast=8: {int(torch.isclose(narrow, default).sum())}")
# --8<-- [end:answers]
