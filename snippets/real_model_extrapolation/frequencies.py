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
print(f"slowest pair at position {2 * TRAINED}: {2 * TRAINED * plain[-1].item():.3f} rad")

print("method          fastest  slowest  attention factor (at 16384 tokens)")
for name, setting in methods().items():  # the settings of experiments/smollm2, factor 2
    inv_freq, factor = posenc.rope_inv_freq(
        HEAD_DIM, base=setting["base"], scaling=setting["scaling"],
        seq_len=2 * TRAINED, max_position_embeddings=TRAINED,
    )  # fmt: skip
    ratio = inv_freq / plain  # 1: the pair turns as in training; 0.5: half as fast
    print(f"{name:<14} {ratio[0].item():>8.3f} {ratio[-1].item():>8.3f} {factor:>8.3f}")
# --8<-- [end:frequencies]
