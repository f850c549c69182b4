"""Chapter "RoPE": posenc.RotaryEmbedding inside an attention block, with a KV cache.

Run it: python snippets/rope/use.py
"""

# --8<-- [start:block]
import torch
from torch import nn

import posenc


class RopeSelfAttention(nn.Module):
    """Multi-head causal self-attention; RoPE on queries and keys, never on values."""

    def __init__(self, dim: int = 64, heads: int = 4, base: float = 10_000.0):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)
        self.rope = posenc.RotaryEmbedding(self.head_dim, base=base)

    def forward(self, x, cache=None):
        """x: (batch, seq, dim). cache: (k, v) of earlier tokens or None. Returns (y, cache)."""
        q, k, v = (
            t.unflatten(-1, (self.heads, self.head_dim)).transpose(1, 2)
            for t in self.qkv(x).chunk(3, dim=-1)
        )  # each (batch, heads, seq, head_dim)
        start = 0 if cache is None else cache[0].shape[2]  # tokens already in the cache
        positions = torch.arange(start, start + x.shape[1])
        q, k = self.rope(q, k, positions)  # rotate by the absolute positions of the new tokens
        if cache is not None:
            k, v = torch.cat((cache[0], k), dim=2), torch.cat((cache[1], v), dim=2)
        y = posenc.attention(q, k, v, causal=True)  # new queries are the last keys
        return self.out(y.transpose(1, 2).flatten(-2)), (k, v)


torch.manual_seed(0)
layer = RopeSelfAttention()
x = torch.randn(1, 10, 64)
with torch.no_grad():
    full, _ = layer(x)  # all 10 tokens at once
print(full.shape)
# --8<-- [end:block]

# --8<-- [start:decode]
with torch.no_grad():
    y, cache = layer(x[:, :6])  # prompt: tokens 0..5
    steps = [y]
    for t in range(6, 10):  # then one token at a time, at positions 6, 7, 8, 9
        y, cache = layer(x[:, t : t + 1], cache)
        steps.append(y)
decoded = torch.cat(steps, dim=1)
print(torch.allclose(decoded, full, atol=1e-5), tuple(cache[0].shape))
# --8<-- [end:decode]
