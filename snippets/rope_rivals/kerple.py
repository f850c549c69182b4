"""Chapter "RoPE's rivals": KERPLE's logarithmic and power biases, from posenc.kerple_bias.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/rope_rivals/kerple.py
"""

# --8<-- [start:kerple]
import math

import torch

import posenc

# The power kernel with exponent r2 = 1 is ALiBi with slope r1 (chapter 6):
slopes = posenc.alibi_slopes(8)
power = posenc.kerple_bias(6, r1=slopes, r2=torch.ones(8), kernel="power")
alibi = posenc.alibi_bias(8, 6)  # m·(j - i); above the diagonal (future keys) it differs
power_is_alibi = torch.allclose(power.tril(), alibi.tril())
assert power_is_alibi

# Three log-kernel heads, b = -r1·log(1 + r2·d), and one ALiBi head for comparison.
r1 = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)
r2 = torch.tensor([1.0, 1.0, 1.0], dtype=torch.float64)
k_len = 16384  # one query, the last token, and every key up to it


def share_beyond(bias_row, D):
    """Share of the weight more than D tokens back when every content score is equal."""
    weights = bias_row.softmax(-1).flip(-1)  # index = distance back
    return float(weights[D + 1 :].sum())


log_rows = posenc.kerple_bias(1, k_len, r1=r1, r2=r2)[:, 0]  # (3, k_len)
alibi_row = posenc.alibi_bias(8, 1, k_len, dtype=torch.float64)[3, 0]  # slope 1/16
rows = {("log", f"r1 = {a:g}"): row for a, row in zip(r1.tolist(), log_rows, strict=True)}
rows["alibi", "m = 1/16"] = alibi_row
# the weight ratio of two keys is a power of the distance: (1 + r2·d)^(-r1), no window
for a, row in zip(r1.tolist(), log_rows, strict=True):
    ratio = math.exp(float(row[-1001] - row[-1]))  # key 1000 back against the query's own
    assert math.isclose(ratio, 1001**-a, rel_tol=1e-9)


# r1 <= 1: the weights (1 + r2·r)^(-r1) add up to a total that diverges with the length, so the
# share beyond any fixed distance keeps growing towards 1; r1 > 1: they converge to a fixed shape
short_rows = posenc.kerple_bias(1, 1024, r1=r1, r2=r2)[:, 0]  # the same heads over 1024 keys
for a, short, long in zip(r1.tolist(), short_rows, log_rows, strict=True):
    growth = share_beyond(long, 100) - share_beyond(short, 100)
    assert growth > 0.1 if a <= 1 else abs(growth) < 0.01, (a, growth)


def pad(text, width, left=False):
    """``text`` in ``width`` terminal columns (a Chinese character takes two)."""
    fill = " " * max(width - sum(2 if ord(ch) > 0x2E80 else 1 for ch in text), 0)
    return text + fill if left else fill + text


def show_kerple(lang="en"):
    text = {
        "en": ("power kernel with r2 = 1 equals ALiBi: {}",
               "{} keys, equal content scores: bias at distance r, share of the weight beyond D",
               "head", {"log": "log, ", "alibi": "ALiBi, "}),
        "zh": ("指数 r2 = 1 的幂核等于 ALiBi：{}",
               "{} 个 key，内容分数全部相同：距离 r 处的偏置，距离 D 之外的权重占比",
               "头", {"log": "对数核 ", "alibi": "ALiBi "}),
    }[lang]  # fmt: skip
    print(text[0].format(power_is_alibi))
    print(text[1].format(k_len))
    print(pad(text[2], 16, left=True) + "".join(f"{f'r = {d}':>10}" for d in (10, 1000))
          + "".join(f"{f'D = {D}':>10}" for D in (100, 1000)))  # fmt: skip
    for (kind, value), row in rows.items():
        biases = "".join(f"{float(row[-1 - d]):10.2f}" for d in (10, 1000))
        shares = "".join(f"{share_beyond(row, D):10.1%}" for D in (100, 1000))
        print(pad(text[3][kind] + value, 16, left=True) + biases + shares)


# --8<-- [end:kerple]

if __name__ == "__main__":
    show_kerple()
