"""Chapter "Performance": posenc's Triton kernel computes the rotation the eager operators do,
rounding once instead of at every step.

Run it: python snippets/performance/triton_kernel.py   (needs Triton: on a machine without
a GPU the kernel runs in Triton's interpreter, slowly, which is enough to check it)
"""

# --8<-- [start:kernel]
import os

import torch

if not torch.cuda.is_available():  # run the kernel in Triton's interpreter, on the CPU
    os.environ.setdefault("TRITON_INTERPRET", "1")  # (before posenc first uses the kernel)

import posenc

device = "cuda" if torch.cuda.is_available() else "cpu"
generator = torch.Generator().manual_seed(0)
x = torch.randn(1, 8, 256, 64, generator=generator).to(device, torch.float16)  # q or k
exact, _ = posenc.RotaryEmbedding(64, kernel="eager")(x.double(), x.double(), offset=5000)
errors = {}
for kernel in ("eager", "triton"):
    rotated, _ = posenc.RotaryEmbedding(64, kernel=kernel)(x, x, offset=5000)
    errors[kernel] = (rotated.double() - exact).abs()
    print(f"kernel={kernel!r:9} {rotated.dtype}: mean error {errors[kernel].mean():.2e}, "
          f"largest {errors[kernel].max():.2e}")  # fmt: skip
rounded_once = (exact.half().double() - exact).abs()  # the best any float16 result can do
print(f"the exact rotation rounded to float16 once: mean error {rounded_once.mean():.2e}")
assert errors["triton"].mean() < errors["eager"].mean()
# --8<-- [end:kernel]
