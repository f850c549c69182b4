"""Chapter "ALiBi": the window every head has, and what it cannot retrieve.

Run it: python snippets/alibi/window.py

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.
"""

# --8<-- [start:window]
import math

import torch

import posenc

slopes = posenc.alibi_slope_values(8)
k_len = 4096  # one query, the last token, looks back over 4096 keys
bias = posenc.alibi_bias(8, 1, k_len, dtype=torch.float64)[:, 0]  # (8, k_len): -m·distance
weights = bias.softmax(dim=-1)  # equal content scores: the bias alone decides
# key j lies k_len - 1 - j tokens back; at_least[h, k]: weight on keys k or more tokens back
at_least = weights.cumsum(dim=-1).flip(-1)


def share_beyond(head: int, distance: int) -> float:
    """Share of head `head`'s attention weight on keys more than `distance` tokens back."""
    return at_least[head - 1, distance + 1].item()


for head, m in enumerate(slopes, start=1):
    for D in (10, 100, 1000):  # a geometric series: the share beyond D is e^(-m(D + 1))
        assert math.isclose(share_beyond(head, D), math.exp(-m * (D + 1)), rel_tol=1e-4)


def within(head: int, share: float) -> int:
    """The smallest distance D with at least `share` of the weight on keys 0..D tokens back."""
    return int((at_least[head - 1, 1:] > 1 - share).sum())  # share_beyond falls with D


def rjust(text: str, width: int) -> str:
    """Right-align in a monospace font, where a Chinese character takes two columns."""
    return " " * max(width - sum(2 if ord(c) > 0x2E80 else 1 for c in text), 0) + text


def percent(x: float) -> str:
    return "< 0.01%" if x < 1e-4 else f"{100 * x:.2f}%" if x < 0.01 else f"{100 * x:.1f}%"


def show_window(lang: str = "en") -> None:
    labels = {
        "en": ("head", "slope", "50% within", "99% within", "beyond 512", "beyond 1024"),
        "zh": ("头", "斜率", "一半权重范围", "99% 权重范围", "512 之外占比", "1024 之外占比"),
    }[lang]
    widths = (4, 7, 13, 13, 13, 14)
    print(" ".join(rjust(label, width) for label, width in zip(labels, widths, strict=True)))
    for head, m in enumerate(slopes, start=1):
        print(
            f"{head:>4} {'1/' + str(round(1 / m)):>7} {within(head, 0.5):>13} "
            f"{within(head, 0.99):>13} {percent(share_beyond(head, 512)):>13} "
            f"{percent(share_beyond(head, 1024)):>14}"
        )


# --8<-- [end:window]


# --8<-- [start:retrieval]
def needle_weight(score: float, D: int, alibi_slopes: torch.Tensor | None) -> torch.Tensor:
    """Weight, per head, on one key `D` tokens back whose score is `score`; other keys score 0.

    head_dim 1, q = 1 and scale 1: key j's score is k_j. v is 1 at that key and 0 elsewhere,
    so the attention output is the weight the query gives it.
    """
    k_len = D + 1
    q = torch.ones(1, 8, 1, 1)
    k, v = torch.zeros(1, 8, k_len, 1), torch.zeros(1, 8, k_len, 1)
    k[:, :, 0, 0] = score  # the needle: the first key, D tokens before the query
    v[:, :, 0, 0] = 1.0
    out = posenc.attention(q, k, v, causal=True, alibi_slopes=alibi_slopes, scale=1.0)
    return out[0, :, 0, 0]


def score_needed(m: float, D: int) -> float:
    """Score at which the needle gets half the weight: e^(s - m·D) = sum over k < D of e^(-m·k)."""
    return m * D + math.log(sum(math.exp(-m * k) for k in range(D)))


D, score = 1000, 10.0
alibi = needle_weight(score, D, posenc.alibi_slopes(8))
no_bias = needle_weight(score, D, None)  # the same scores, no position term
assert alibi[0] < 1e-6 and (no_bias > 0.9).all()  # head 1 cannot see it; without ALiBi, all can
for head, m in enumerate(slopes, start=1):  # at the score needed, the needle gets half
    half = needle_weight(score_needed(m, D), D, posenc.alibi_slopes(8))[head - 1]
    assert math.isclose(half.item(), 0.5, abs_tol=1e-3)


def show_retrieval(lang: str = "en") -> None:
    labels = {
        "en": ("head", "slope", f"weight at score {score:.0f}", "score for half", "no bias"),
        "zh": ("头", "斜率", f"分数为 {score:.0f} 时的权重", "拿到一半权重的分数", "无位置偏置"),
    }[lang]
    widths = (10, 7, 22, 20)
    print(" ".join(rjust(label, width) for label, width in zip(labels[:4], widths, strict=True)))
    for head, m in enumerate(slopes, start=1):
        print(
            f"{head:>10} {'1/' + str(round(1 / m)):>7} {alibi[head - 1].item():>22.4f} "
            f"{score_needed(m, D):>20.1f}"
        )
    print(
        f"{rjust(labels[4], 10)} {'0':>7} {no_bias[0].item():>22.4f} {score_needed(0.0, D):>20.1f}"
    )


# --8<-- [end:retrieval]


if __name__ == "__main__":
    show_window()
    show_retrieval()
