"""Chapter "ALiBi": the bias matrices, causal and bidirectional, and BLOOM's form.

Run it: python snippets/alibi/bias.py
"""

# --8<-- [start:bias]
import torch

import posenc

bias = posenc.alibi_bias(num_heads=8, q_len=5)  # (heads, q_len, k_len), causal by default
print(tuple(bias.shape))
for row in bias[0]:  # head 1, m = 1/2: entry (i, j) is -m·(i - j)
    print(" ".join(f"{value + 0.0:+5.1f}" for value in row.tolist()))  # + 0.0: no "-0.0"
# --8<-- [end:bias]

# --8<-- [start:symmetric]
symmetric = posenc.alibi_bias(num_heads=8, q_len=5, causal=False)  # -m·|i - j|
for row in symmetric[0]:
    print(" ".join(f"{value + 0.0:+5.1f}" for value in row.tolist()))  # + 0.0: no "-0.0"
assert torch.equal(symmetric, symmetric.transpose(1, 2))  # a symmetric matrix per head
# --8<-- [end:symmetric]

# --8<-- [start:bloom]
torch.manual_seed(0)
heads, seq = 8, 6
scores = torch.randn(heads, seq, seq)  # q·k / sqrt(d) of 8 heads
slopes = posenc.alibi_slopes(heads)
j = torch.arange(seq, dtype=torch.float32)
bloom_bias = slopes[:, None, None] * j  # +m·j: depends on the key only, same for every row
future = torch.ones(seq, seq, dtype=torch.bool).triu(1)  # j > i


def causal_softmax(logits):
    return logits.masked_fill(future, float("-inf")).softmax(dim=-1)


ours = causal_softmax(scores + posenc.alibi_bias(heads, seq))  # -m·(i - j)
bloom = causal_softmax(scores + bloom_bias)  # +m·j = -m·(i - j) - m·i
print("causal, same weights:", torch.allclose(ours, bloom, atol=1e-6))

ours_bi = (scores + posenc.alibi_bias(heads, seq, causal=False)).softmax(dim=-1)  # -m·|i - j|
bloom_bi = (scores + bloom_bias).softmax(dim=-1)  # +m·j with no mask
print("bidirectional, same weights:", torch.allclose(ours_bi, bloom_bi, atol=1e-6))
print(f"largest difference: {(ours_bi - bloom_bi).abs().max():.3f}")
# --8<-- [end:bloom]
