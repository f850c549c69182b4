"""Chapter "Length extrapolation for RoPE": MiniMind's inference_rope_scaling, read as YaRN.

Run it: python snippets/length_extrapolation/minimind.py
"""

# --8<-- [start:minimind]
import math

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

print(f"target length: {16 * 2048} tokens")
kept = int(torch.isclose(scaled, default).sum())
divided = int(torch.isclose(scaled, default / 16).sum())
ramp = head_dim // 2 - kept - divided
print(f"pairs kept: {kept}, divided by 16: {divided}, on the ramp: {ramp}")
yarn_own = 0.1 * math.log(16) + 1
print(f"attention factor used: {attention_factor}, YaRN's own would be {yarn_own:.4f}")
# --8<-- [end:minimind]


# --8<-- [start:ramp_dims]
# Where the ramp starts and ends: the pair that turns beta times within the trained length.
def pair_turning(turns, dim=head_dim, base=theta, trained=2048):
    return dim * math.log(trained / (turns * 2 * math.pi)) / (2 * math.log(base))


fast, slow = pair_turning(32), pair_turning(1)
print(f"beta_fast=32 turns -> pair {fast:.2f}, beta_slow=1 turn -> pair {slow:.2f}")
# --8<-- [end:ramp_dims]

# --8<-- [start:theta_values]
# Frequencies with rope_theta = 1e6 and head_dim 64 (MiniMind's earlier 512-wide models)
freq_64, _ = posenc.rope_inv_freq(64, base=1e6)
for i in (0, 15, 31):
    print(f"θ_{i} = {freq_64[i]:.3e}, one turn every {2 * math.pi / freq_64[i]:,.0f} tokens")
# --8<-- [end:theta_values]
