"""Chapter "RoPE": the frequencies theta_i and their periods.

Run it: python snippets/rope/frequencies.py
"""

# --8<-- [start:table]
import math

import posenc

head_dim = 64
print(
    f"{'i':>3} | {'theta_i, base 1e4':>17} {'period':>13} | {'theta_i, base 1e6':>17} {'period':>13}"
)
for i in (0, 1, 2, 4, 8, 15, 16, 24, 31):
    row = f"{i:>3} |"
    for base in (10_000.0, 1_000_000.0):
        theta = base ** (-2 * i / head_dim)  # θ_i = base^(-2i/d), in float64
        assert math.isclose(theta, posenc.default_inv_freq(head_dim, base)[i].item(), rel_tol=1e-6)
        row += f" {theta:17.3e} {2 * math.pi / theta:13,.1f} |"  # period 2π/θ_i, in tokens
    print(row.rstrip(" |"))
# --8<-- [end:table]

# --8<-- [start:slowest]
for base in (10_000.0, 1_000_000.0):
    slowest = base ** (-(head_dim - 2) / head_dim)  # i = d/2 - 1: base^(-(d-2)/d)
    assert math.isclose(slowest, posenc.default_inv_freq(head_dim, base)[-1].item(), rel_tol=1e-6)
    print(
        f"base {base:9.0f}: slowest theta = base^(-62/64) = {slowest:.3e}, "
        f"period {2 * math.pi / slowest:,.0f} tokens; 1/base = {1 / base:.0e}, "
        f"period {2 * math.pi * base:,.0f}"
    )
# --8<-- [end:slowest]
