"""Chapter "A real model past its context": what each method does to SmolLM2's frequencies.

Run it from the repository: python snippets/real_model_extrapolation/frequencies.py
"""

# --8<-- [start:frequencies]
import math

import posenc
from experiments.smollm2.model import methods

TRAINED, HEAD_DIM = 8192, 64  # SmolLM2-135M: max_position_embeddings, head_dim
plain = posenc.rope_inv_freq(HEAD_DIM, base=100000.0)[0]
wavelength = 2 * math.pi / plain  # tokens per full turn of each pair
print(f"pairs that never turn once in {TRAINED} tokens: {int((wavelength > TRAINED).sum())} of 32")
for n in (TRAINED, 2 * TRAINED, 4 * TRAINED):
    print(f"slowest pair at position {n}: {n * plain[-1].item():.3f} rad")

first_slow = int((wavelength > TRAINED).nonzero()[0])  # the fastest pair that never turns
assert first_slow == 20 and round(wavelength[first_slow].item()) == 8379
LENGTHS = (2 * TRAINED, 4 * TRAINED)  # the slowest pair's speed at 16384 and 32768 tokens
print(f"method          fastest  pair {first_slow}  slowest: 16384  32768  attention factor")
for name, setting in methods().items():  # the settings of experiments/smollm2, factor 2
    slowest = []
    for n in LENGTHS:  # only dynamic NTK changes with the length
        inv_freq, factor = posenc.rope_inv_freq(
            HEAD_DIM, base=setting["base"], scaling=setting["scaling"],
            seq_len=n, max_position_embeddings=TRAINED,
        )  # fmt: skip
        ratio = inv_freq / plain  # 1: the pair turns as in training; 0.5: half as fast
        slowest.append(ratio[-1].item())
    print(
        f"{name:<14} {ratio[0].item():>8.3f} {ratio[first_slow].item():>8.3f} {slowest[0]:>15.3f}"
        f" {slowest[1]:>6.3f} {factor:>17.3f}"
    )
# YaRN's 1.069 on cos and sin multiplies every score by 1.14: a temperature t of 0.87
yarn = methods()["yarn"]
_, yarn_factor = posenc.rope_inv_freq(
    HEAD_DIM, base=yarn["base"], scaling=yarn["scaling"], max_position_embeddings=TRAINED
)
assert round(yarn_factor**2, 2) == 1.14 and round(1 / yarn_factor**2, 2) == 0.87
# --8<-- [end:frequencies]
