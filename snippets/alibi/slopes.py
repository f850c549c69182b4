"""Chapter "ALiBi": the slopes m_h, for any number of heads.

Run it: python snippets/alibi/slopes.py

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.
"""

# --8<-- [start:eight_heads]
import math

import posenc

slopes = posenc.alibi_slope_values(8)  # Python floats, Press et al.'s slopes


def show_slopes(lang="en"):
    line = {"en": "head {}: m = 2^{:+.1f} = {:.8f}", "zh": "第 {} 个头：m = 2^{:+.1f} = {:.8f}"}[
        lang
    ]
    for head, m in enumerate(slopes, start=1):
        print(line.format(head, math.log2(m), m))


# --8<-- [end:eight_heads]


# --8<-- [start:rule]
def get_slopes(n):
    """Press et al.'s get_slopes, copied from the code released with the paper:
    github.com/ofirpress/attention_with_linear_biases, fairseq/models/transformer.py, L742-L752.
    """

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))  # 2^(-8/n)
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)  # "In the paper, we only train models that have 2^a heads"
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        get_slopes_power_of_2(closest_power_of_2)
        + get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )


same = [n for n in range(1, 257) if posenc.alibi_slope_values(n) == get_slopes(n)]
assert same == list(range(1, 257))  # equal floats, not merely close


def show_rule(lang="en"):
    line = {"en": "posenc equals get_slopes for {} head counts: 1 to {}",
            "zh": "posenc 与 get_slopes 在 {} 种头数（1 到 {}）下都相同"}[lang]  # fmt: skip
    print(line.format(len(same), same[-1]))


# --8<-- [end:rule]

# --8<-- [start:twelve_heads]
twelve = posenc.alibi_slope_values(12)
literal = [2 ** (-8 * h / 12) for h in range(1, 13)]  # §3 read literally: start = ratio = 2^(-8/12)
assert sorted(twelve) != sorted(literal) and min(twelve) == min(literal) == 2**-8


def show_twelve(lang="en"):
    labels = {
        "en": ("heads 1-8  : ", "heads 9-12 : ", "all 12, largest first: ", "2^(-8h/12), h = 1..12 : "),
        "zh": ("第 1-8 个头： ", "第 9-12 个头：", "全部 12 个，从大到小：", "2^(-8h/12)，h = 1..12："),
    }[lang]  # fmt: skip
    print(labels[0] + " ".join(f"2^{math.log2(m):+.1f}" for m in twelve[:8]))
    print(labels[1] + " ".join(f"2^{math.log2(m):+.1f}" for m in twelve[8:]))
    print(labels[2] + " ".join(f"{m:.4f}" for m in sorted(twelve, reverse=True)))
    print(labels[3] + " ".join(f"{m:.4f}" for m in literal))


# --8<-- [end:twelve_heads]


# --8<-- [start:wrong_slopes]
def growing_slopes(num_heads: int) -> list[float]:
    """A WRONG rule: m_h = h * 2^(-8/p), growing with the head index."""
    p = 2 ** (num_heads.bit_length() - 1)
    base = 2 ** (-8 / p)
    slopes = []
    for h in range(1, num_heads + 1):
        slopes.append(h * base if h <= p else slopes[h - p - 1] / 2)
    return slopes


def reach(m: float) -> float:
    """Distance at which the bias m·(j - i) reaches -10 (a weight factor e^-10 ≈ 4.5e-5)."""
    return 10 / m


def show_wrong(lang="en"):
    names, line = {
        "en": (("paper : ", "wrong : "), " | reach {:.0f} to {:.0f} tokens"),
        "zh": (("论文：", "错误："), " | 作用范围 {:.0f} 到 {:.0f} 个 token"),
    }[lang]
    for name, rule in zip(names, (posenc.alibi_slope_values, growing_slopes), strict=True):
        s = rule(8)
        reaches = list(map(reach, s))
        print(name + " ".join(f"{m:.4f}" for m in s) + line.format(min(reaches), max(reaches)))


# --8<-- [end:wrong_slopes]


if __name__ == "__main__":
    show_slopes()
    show_rule()
    show_twelve()
    show_wrong()
