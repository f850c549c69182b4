"""Chapter "ALiBi": using it in attention, and what the bias costs in memory.

Run it: python snippets/alibi/use.py

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.
"""

# --8<-- [start:sdpa]
import torch
import torch.nn.functional as F

import posenc

torch.manual_seed(0)
batch, heads, seq, head_dim = 2, 8, 10, 16
q, k, v = (torch.randn(batch, heads, seq, head_dim) for _ in range(3))

# 1. By hand: ALiBi bias plus the causal mask, as one additive float mask
bias = posenc.alibi_bias(heads, seq)  # (heads, seq, seq)
causal = torch.zeros(seq, seq).masked_fill(
    torch.ones(seq, seq, dtype=torch.bool).triu(1), float("-inf")
)
by_hand = F.scaled_dot_product_attention(q, k, v, attn_mask=bias + causal)

# 2. posenc.attention builds the same mask from the slopes
slopes = posenc.alibi_slopes(heads)
out = posenc.attention(q, k, v, causal=True, alibi_slopes=slopes)
print(out.shape, torch.allclose(out, by_hand, atol=1e-6))
# --8<-- [end:sdpa]

# --8<-- [start:decode]
# Decoding with a KV cache: one new query at position seq - 1 against all seq keys.
last = posenc.attention(q[:, :, -1:], k, v, causal=True, alibi_slopes=slopes)
print(torch.allclose(last, out[:, :, -1:], atol=1e-6))
row = posenc.alibi_bias(heads, 1, seq)[0, 0]  # head 1, m = 1/2: -m·(9 - j), j = 0..9
print(" ".join(f"{value + 0.0:.1f}" for value in row.tolist()))
# --8<-- [end:decode]


# --8<-- [start:memory]
def materialised_bias_gib(heads: int, seq_len: int, bytes_per_value: int = 4) -> float:
    """Size of one (heads, seq_len, seq_len) bias tensor, in GiB."""
    return heads * seq_len * seq_len * bytes_per_value / 2**30


def show_memory(lang="en"):
    line = {"en": "32 heads, {:>6} tokens: float32 {:8.2f} GiB, bfloat16 {:7.2f} GiB",
            "zh": "32 个头，{:>6} 个 token：float32 {:8.2f} GiB，bfloat16 {:7.2f} GiB"}[lang]  # fmt: skip
    for seq_len in (2_048, 8_192, 32_768):
        gib = materialised_bias_gib(32, seq_len), materialised_bias_gib(32, seq_len, 2)
        print(line.format(seq_len, *gib))


# --8<-- [end:memory]

# --8<-- [start:flex]
import torch

import posenc

# FlexAttention compiled by torch.compile: a Triton kernel on a CUDA GPU, C++ on a CPU.
# The first call compiles (seconds); later calls, decoding steps included, reuse the kernel.
device = "cuda" if torch.cuda.is_available() else "cpu"
heads, seq = 8, 1024
q, k, v = (torch.randn(1, heads, seq, 64, device=device) for _ in range(3))
slopes = posenc.alibi_slopes(heads, device=device)
# the bias is computed score by score: no (8, 1024, 1024) tensor is built
out = posenc.attention(q, k, v, causal=True, alibi_slopes=slopes, backend="flex")
# the same attention from one materialised mask
sdpa = posenc.attention(q, k, v, causal=True, alibi_slopes=slopes, backend="sdpa")
assert torch.allclose(out, sdpa, atol=1e-4)
# --8<-- [end:flex]


if __name__ == "__main__":
    show_memory()
