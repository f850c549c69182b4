"""Chapter "RoPE": the frequencies theta_i and their periods.

Run it: python snippets/rope/frequencies.py
"""

# --8<-- [start:table]
import math

import posenc

head_dim = 64
print(f"{'i':>3} | {'θ_i (b = 1e4)':>13} {'2π/θ_i':>13} | {'θ_i (b = 1e6)':>13} {'2π/θ_i':>13}")
for i in (0, 1, 2, 4, 8, 15, 16, 24, 31):
    row = f"{i:>3} |"
    for base in (10_000.0, 1_000_000.0):
        theta = base ** (-2 * i / head_dim)  # θ_i = base^(-2i/d), in float64
        assert math.isclose(theta, posenc.default_inv_freq(head_dim, base)[i].item(), rel_tol=1e-6)
        row += f" {theta:13.3e} {2 * math.pi / theta:13,.1f} |"  # period 2π/θ_i, in tokens
    print(row.rstrip(" |"))
# --8<-- [end:table]

# --8<-- [start:slowest]
for d, base in [(64, 1e4), (64, 1e6), (128, 1e4), (128, 5e5), (128, 1e6)]:
    slowest = base ** (-(d - 2) / d)  # i = d/2 - 1: base^(-(d-2)/d), not 1/base
    assert math.isclose(slowest, posenc.default_inv_freq(d, base)[-1].item(), rel_tol=1e-6)
    assert math.isclose(slowest * base, base ** (2 / d))  # larger than 1/base by base^(2/d)
    exponent = f"b^(-{d - 2}/{d})"
    print(
        f"d = {d:3}, b = {base:7.0f}: θ_{d // 2 - 1} = {exponent:11} = {slowest * base:.3f}/b, "
        f"2π/θ_{d // 2 - 1} = {2 * math.pi / slowest:>9,.0f}, 2πb = {2 * math.pi * base:>9,.0f}"
    )
# --8<-- [end:slowest]
