"""Chapter "ALiBi": worked answers to the exercises.

Run it: python snippets/alibi/exercises.py

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.
"""

# --8<-- [start:distribution]
import math
from itertools import pairwise

import posenc

ratio = {}  # heads -> the common ratio of its slopes
for heads in (4, 8, 16, 32):
    slopes = posenc.alibi_slope_values(heads)
    ratios = {round(b / a, 12) for a, b in pairwise(slopes)}
    assert len(ratios) == 1  # one common ratio: a geometric sequence
    ratio[heads] = ratios.pop()


def show_distribution(lang="en"):
    line = {"en": "{:2} heads: first 2^{:+.2f}, last 2^{:+.0f}, ratio {:.4f} = 2^{:+.2f}",
            "zh": "{:2} 个头：第一个 2^{:+.2f}，最后一个 2^{:+.0f}，公比 {:.4f} = 2^{:+.2f}"}[lang]  # fmt: skip
    for heads, r in ratio.items():
        slopes = posenc.alibi_slope_values(heads)
        print(line.format(heads, math.log2(slopes[0]), math.log2(slopes[-1]), r, -8 / heads))


# --8<-- [end:distribution]

# --8<-- [start:bloom_heads]
slopes = posenc.alibi_slope_values(112)
p = 2 ** math.floor(math.log2(112))


def show_bloom_heads(lang="en"):
    lines = {
        "en": ("{0} from the {0}-head sequence, {1} interleaved from the {2}-head one",
               "all different: {} | all below 1: {}", "largest {:.4f}, smallest {:.8f}"),
        "zh": ("{0} 个取自 {0} 头的数列，{1} 个从 {2} 头的数列里隔一个取一个",
               "两两不同：{} | 都小于 1：{}", "最大 {:.4f}，最小 {:.8f}"),
    }[lang]  # fmt: skip
    print(lines[0].format(p, 112 - p, 2 * p))
    print(lines[1].format(len(set(slopes)) == 112, max(slopes) < 1))
    print(lines[2].format(max(slopes), min(slopes)))


# --8<-- [end:bloom_heads]


if __name__ == "__main__":
    show_distribution()
    show_bloom_heads()
