"""Chapter "ALiBi": the bias matrices, causal and bidirectional, and BLOOM's form.

Run it: python snippets/alibi/bias.py

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.
"""

# --8<-- [start:bias]
import torch

import posenc

bias = posenc.alibi_bias(num_heads=8, q_len=5)  # (heads, q_len, k_len), causal by default
print(tuple(bias.shape))
for row in bias[0]:  # head 1, m = 1/2: entry (i, j) is m·(j - i) = -m·(i - j)
    print(" ".join(f"{value + 0.0:+5.1f}" for value in row.tolist()))  # + 0.0: no "-0.0"
# --8<-- [end:bias]

# --8<-- [start:symmetric]
symmetric = posenc.alibi_bias(num_heads=8, q_len=5, causal=False)  # -m·|j - i|
for row in symmetric[0]:
    print(" ".join(f"{value + 0.0:+5.1f}" for value in row.tolist()))  # + 0.0: no "-0.0"
assert torch.equal(symmetric, symmetric.transpose(1, 2))  # a symmetric matrix per head
# --8<-- [end:symmetric]

# --8<-- [start:bloom]
torch.manual_seed(0)
heads, seq, head_dim = 8, 6, 16
q, k = torch.randn(heads, seq, head_dim), torch.randn(heads, seq, head_dim)  # one sequence
slopes = posenc.alibi_slopes(heads)
j = torch.arange(seq, dtype=torch.float32)
alibi = slopes[:, None, None] * j  # (heads, 1, seq): +m·j, one row per head, as in BLOOM
# BLOOM's scores: alibi + q·kᵀ/sqrt(d) in one baddbmm, the row of alibi broadcast over queries
scores = torch.baddbmm(alibi, q, k.transpose(1, 2), beta=1.0, alpha=head_dim**-0.5)
future = torch.ones(seq, seq, dtype=torch.bool).triu(1)  # j > i


def causal_softmax(logits):
    return logits.masked_fill(future, float("-inf")).softmax(dim=-1)


content = q @ k.transpose(1, 2) / head_dim**0.5
ours = causal_softmax(content + posenc.alibi_bias(heads, seq))  # m·(j - i)
bloom = causal_softmax(scores)  # +m·j = m·(j - i) + m·i
same_causal = torch.allclose(ours, bloom, atol=1e-6)

ours_bi = (content + posenc.alibi_bias(heads, seq, causal=False)).softmax(dim=-1)  # -m·|j - i|
bloom_bi = scores.softmax(dim=-1)  # +m·j with no mask
same_bidirectional = torch.allclose(ours_bi, bloom_bi, atol=1e-6)


def show_bloom(lang="en"):
    lines = {
        "en": ("bias {} -> scores {}", "causal, same weights: {}",
               "bidirectional, same weights: {}", "largest difference: {:.3f}"),
        "zh": ("偏置 {} -> 分数 {}", "有因果掩码，权重相同：{}", "双向（无掩码），权重相同：{}", "最大差值：{:.3f}"),
    }[lang]  # fmt: skip
    print(lines[0].format(tuple(alibi.shape), tuple(scores.shape)))
    print(lines[1].format(same_causal))
    print(lines[2].format(same_bidirectional))
    print(lines[3].format((ours_bi - bloom_bi).abs().max()))


# --8<-- [end:bloom]


if __name__ == "__main__":
    show_bloom()
