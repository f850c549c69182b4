"""Chapter "RoPE": why angles, cos and sin are computed in float32.

Run it: python snippets/rope/precision.py
"""

# --8<-- [start:precision]
import torch

import posenc

head_dim = 64
exact_freq = 1.0 / 10_000.0 ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)


def cos_table(position: int, dtype: torch.dtype, method: str) -> torch.Tensor:
    m = torch.tensor([position])
    if method == "right":  # angles, cos, sin in float32; cast only the finished table
        cos, _ = posenc.rotary_cos_sin(m, posenc.default_inv_freq(head_dim), dtype=dtype)
        return cos[..., : head_dim // 2]  # "half" layout: the table repeats
    # naive: positions, frequencies, angles and cos all in the low-precision dtype
    angles = m.to(dtype)[:, None] * posenc.default_inv_freq(head_dim).to(dtype)
    return angles.cos()


print(f"{'dtype':>8} {'method':>6} | {'pos 1k':>7} {'pos 32k':>7} {'pos 1M':>7}")
for dtype in (torch.float32, torch.bfloat16, torch.float16):
    for method in ("right", "naive"):
        errors = []
        for position in (1_000, 32_000, 1_000_000):
            exact = torch.cos(position * exact_freq)  # float64 reference
            error = (cos_table(position, dtype, method).double() - exact).abs().max().item()
            errors.append(f"{error:7.4f}")  # nan where float16 overflows (65 504 is its max)
        print(f"{str(dtype).removeprefix('torch.'):>8} {method:>6} | {' '.join(errors)}")
# --8<-- [end:precision]

# --8<-- [start:rounding]
import math

# Gap between neighbouring representable numbers near x (a cast rounds by up to half of it)
for dtype in (torch.float32, torch.bfloat16, torch.float16):
    info = torch.finfo(dtype)
    gaps = [
        f"{info.eps * 2 ** math.floor(math.log2(x)):g}" if x <= info.max else "overflow"
        for x in (1_000, 32_000, 1_000_000)
    ]
    print(
        f"{str(dtype).removeprefix('torch.'):>8}: gap near 1k {gaps[0]:>11}, "
        f"near 32k {gaps[1]:>10}, near 1M {gaps[2]:>8}"
    )
# --8<-- [end:rounding]
