"""Chapter "ALiBi": worked answers to the exercises.

Run it: python snippets/alibi/exercises.py
"""

# --8<-- [start:distribution]
import math
from itertools import pairwise

import posenc

for heads in (4, 8, 16, 32):
    slopes = posenc.alibi_slope_values(heads)
    ratios = {round(b / a, 12) for a, b in pairwise(slopes)}
    assert len(ratios) == 1  # one common ratio: a geometric sequence
    print(
        f"{heads:2} heads: first 2^{math.log2(slopes[0]):+.2f}, last 2^{math.log2(slopes[-1]):+.0f}, "
        f"ratio {ratios.pop():.4f} = 2^{-8 / heads:+.2f}"
    )
# --8<-- [end:distribution]

# --8<-- [start:bloom_heads]
slopes = posenc.alibi_slope_values(112)
p = 2 ** math.floor(math.log2(112))
print(f"{p} from the {p}-head sequence, {112 - p} interleaved from the {2 * p}-head one")
print("all different:", len(set(slopes)) == 112, "| all below 1:", max(slopes) < 1)
print(f"largest {max(slopes):.4f}, smallest {min(slopes):.8f}")
# --8<-- [end:bloom_heads]
