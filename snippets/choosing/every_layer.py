"""Chapter "Comparison and choosing": why an added code goes in once, a rotation in every layer.

Run it: python snippets/choosing/every_layer.py
"""

# --8<-- [start:every_layer]
import torch
import torch.nn.functional as F

import posenc

torch.manual_seed(0)
seq, dim = 6, 16
w_q, w_k, w_v = (torch.randn(dim, dim) / dim**0.5 for _ in range(3))
same_token = torch.randn(dim).expand(seq, dim)  # six copies of one token: only position differs


def layer(h, rotary=False):
    """One bidirectional attention layer with a residual connection, (seq, dim) -> (seq, dim)."""
    q, k, v = ((h @ w).view(1, 1, seq, dim) for w in (w_q, w_k, w_v))
    if rotary:
        q, k = posenc.RotaryEmbedding(dim)(q, k)
    return h + F.scaled_dot_product_attention(q, k, v).view(seq, dim)


def positions_distinguishable(h):
    return not torch.allclose(h, h[0].expand_as(h), atol=1e-5)


# RoPE rotates q and k only: the output of the layer carries no trace of the rotation.
after_rope = layer(same_token, rotary=True)
print("after a RoPE layer, positions distinguishable:", positions_distinguishable(after_rope))
# An added code is part of the hidden state: the residual stream carries it to every layer.
after_added = layer(same_token + posenc.sinusoidal(seq, dim))
print("after a layer fed x + p, positions distinguishable:", positions_distinguishable(after_added))
print("... and two layers later:", positions_distinguishable(layer(layer(after_added))))
# --8<-- [end:every_layer]
