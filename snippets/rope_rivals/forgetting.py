"""Chapter "RoPE's rivals": the Forgetting Transformer's forget gates, a data-dependent decay
added to the logits, in plain torch; with one constant gate per head it is ALiBi.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/rope_rivals/forgetting.py
"""

# --8<-- [start:forgetting]
import torch

import posenc


def forget_bias(log_f):
    """D_ij = log f_(j+1) + ... + log f_i for j <= i: log_f (..., heads, T) -> (..., heads, T, T).

    Above the diagonal the value is meaningless (the causal mask removes it)."""
    c = log_f.cumsum(-1)
    return c[..., :, None] - c[..., None, :]


heads, T, d = 8, 10, 16
torch.manual_seed(0)
q, k, v = torch.randn(3, 1, heads, T, d).unbind(0)

# One constant gate per head, f_h = exp(-m_h) with ALiBi's slopes: the decay is m_h (i - j).
slopes = posenc.alibi_slopes(heads)
gates = torch.exp(-slopes)
log_f = gates.log()[:, None].expand(heads, T)
fox = posenc.attention(q, k, v, bias=forget_bias(log_f), causal=True)
alibi = posenc.attention(q, k, v, alibi_slopes=slopes, causal=True)
same_as_alibi = torch.allclose(fox, alibi, atol=1e-6)
assert same_as_alibi

# Gates that depend on the token: open (f = 0.99) everywhere but at token 5, where the head
# forgets (f = 0.01). Every key before token 5 loses log 0.01 = -4.6 at once.
log_f_data = torch.full((T,), 0.99).log()
log_f_data[5] = torch.tensor(0.01).log()
row = forget_bias(log_f_data)[T - 1]  # the last query against keys 0 .. T - 1


def show_forgetting(lang="en"):
    text = {
        "en": ("constant gates f_h = exp(-m_h): ", "same attention as ALiBi: {}",
               "last query, gate 0.01 at token 5: "),
        "zh": ("常数遗忘门 f_h = exp(-m_h)：", "与 ALiBi 的注意力相同：{}",
               "最后一个 query，token 5 的门为 0.01："),
    }[lang]  # fmt: skip
    print(text[0] + " ".join(f"{g:.4f}" for g in gates.tolist()))
    print(text[1].format(same_as_alibi))
    print(text[2] + " ".join(f"{b:.2f}" for b in row.tolist()))


# --8<-- [end:forgetting]

if __name__ == "__main__":
    show_forgetting()
