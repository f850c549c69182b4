"""Chapter "RoPE": why angles, cos and sin are computed in float32.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

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


errors = {}  # (dtype, method) -> max error of the cosines at positions 1k, 32k, 1M
for dtype in (torch.float32, torch.bfloat16, torch.float16):
    for method in ("right", "naive"):
        errors[dtype, method] = [
            (cos_table(position, dtype, method).double() - torch.cos(position * exact_freq))
            .abs()
            .max()
            .item()  # nan where float16 overflows (65 504 is its largest number)
            for position in (1_000, 32_000, 1_000_000)
        ]
assert max(errors[torch.bfloat16, "right"][:2]) < 0.004 < 1 < min(errors[torch.bfloat16, "naive"])


def show_precision(lang: str = "en") -> None:
    names = {"en": {"right": "right", "naive": "naive"}, "zh": {"right": "正确", "naive": "朴素"}}
    print(f"{'dtype':>8} {'':6} | {'m = 1k':>7} {'m = 32k':>7} {'m = 1M':>7}")
    for (dtype, method), row in errors.items():
        name = names[lang][method]
        name = " " * (6 - 2 * len(name)) + name if lang == "zh" else f"{name:>6}"
        values = " ".join(f"{error:7.4f}" for error in row)
        print(f"{str(dtype).removeprefix('torch.'):>8} {name} | {values}")


# --8<-- [end:precision]

# --8<-- [start:rounding]
import math

# Gap between neighbouring representable numbers near x (a cast rounds by up to half of it)
print(f"{'x':>8} | {'1000':>11} {'32000':>11} {'1000000':>11}")
for dtype in (torch.float32, torch.bfloat16, torch.float16):
    info = torch.finfo(dtype)
    gaps = [
        f"{info.eps * 2 ** math.floor(math.log2(x)):g}" if x <= info.max else "inf"
        for x in (1_000, 32_000, 1_000_000)
    ]
    assert torch.tensor(1_000_000.0).to(dtype).isinf() == (gaps[2] == "inf")  # float16: overflow
    print(f"{str(dtype).removeprefix('torch.'):>8} | {' '.join(f'{gap:>11}' for gap in gaps)}")
# --8<-- [end:rounding]

show_precision()
