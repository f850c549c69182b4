"""Chapter "ALiBi": the slopes m_h, for any number of heads.

Run it: python snippets/alibi/slopes.py
"""

# --8<-- [start:eight_heads]
import math

import posenc

slopes = posenc.alibi_slope_values(8)  # Python floats, Press et al.'s rule
for head, m in enumerate(slopes, start=1):
    print(f"head {head}: m = 2^{math.log2(m):+.1f} = {m:.8f}")
# --8<-- [end:eight_heads]


# --8<-- [start:rule]
def paper_slopes(num_heads: int) -> list[float]:
    """Press et al.'s rule, written out: a geometric sequence that starts at its own ratio."""

    def power_of_two(n: int) -> list[float]:
        ratio = 2 ** (-8 / n)  # 2^(-8/n)
        return [ratio**h for h in range(1, n + 1)]  # m_h = 2^(-8h/n), h = 1..n

    p = 2 ** math.floor(math.log2(num_heads))  # largest power of two <= num_heads
    extra = power_of_two(2 * p)[0::2][: num_heads - p]  # odd-numbered slopes of 2p heads
    return power_of_two(p) + extra


for n in (1, 2, 4, 6, 8, 12, 16, 20, 32, 40, 64, 96):
    assert all(
        math.isclose(a, b, rel_tol=1e-12)
        for a, b in zip(paper_slopes(n), posenc.alibi_slope_values(n), strict=True)
    )
print("paper_slopes matches posenc for 1 to 96 heads")
# --8<-- [end:rule]

# --8<-- [start:twelve_heads]
twelve = posenc.alibi_slope_values(12)
print("heads 1-8  :", " ".join(f"2^{math.log2(m):+.1f}" for m in twelve[:8]))
print("heads 9-12 :", " ".join(f"2^{math.log2(m):+.1f}" for m in twelve[8:]))
print("all 12, largest first:", " ".join(f"{m:.4f}" for m in sorted(twelve, reverse=True)))
# --8<-- [end:twelve_heads]


# --8<-- [start:wrong_slopes]
def growing_slopes(num_heads: int) -> list[float]:
    """A WRONG rule that circulates: m_h = h * 2^(-8/p), growing with the head index."""
    p = 2 ** (num_heads.bit_length() - 1)
    base = 2 ** (-8 / p)
    slopes = []
    for h in range(1, num_heads + 1):
        slopes.append(h * base if h <= p else slopes[h - p - 1] / 2)
    return slopes


def reach(m: float) -> float:
    """Distance at which the bias -m·(i-j) reaches -10 (a weight factor e^-10 ≈ 4.5e-5)."""
    return 10 / m


for name, rule in (("paper ", posenc.alibi_slope_values), ("wrong ", growing_slopes)):
    s = rule(8)
    print(
        f"{name}: "
        + " ".join(f"{m:.4f}" for m in s)
        + f" | reach {min(map(reach, s)):.0f} to {max(map(reach, s)):.0f} tokens"
    )
# --8<-- [end:wrong_slopes]
