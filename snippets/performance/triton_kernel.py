"""Chapter "Performance": posenc's Triton kernel computes the rotation the eager operators do,
rounding once instead of at every step.

Run it: python snippets/performance/triton_kernel.py   (needs Triton: on a machine without
a GPU the kernel runs in Triton's interpreter, slowly, which is enough to check it)

Functions named ``show_*`` print with labels in the reader's language (``lang="en"`` or
``"zh"``); each page calls them in a one-line block.
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
errors, dtypes = {}, {}
for kernel in ("eager", "triton"):
    rotated, _ = posenc.RotaryEmbedding(64, kernel=kernel)(x, x, offset=5000)
    errors[kernel], dtypes[kernel] = (rotated.double() - exact).abs(), rotated.dtype
rounded_once = (exact.half().double() - exact).abs()  # the best any float16 result can do
assert errors["triton"].mean() < errors["eager"].mean()

ERROR_TEXT = {
    "en": ("kernel={kernel!r:9} {dtype}: mean error {mean:.2e}, largest {largest:.2e}",
           "the exact rotation rounded to float16 once: mean error {mean:.2e}"),
    "zh": ("kernel={kernel!r:9} {dtype}：平均误差 {mean:.2e}，最大误差 {largest:.2e}",
           "精确结果一次舍入为 float16：平均误差 {mean:.2e}"),
}  # fmt: skip


def show_errors(lang="en"):
    line, once = ERROR_TEXT[lang]
    for kernel, error in errors.items():
        print(line.format(kernel=kernel, dtype=dtypes[kernel], mean=error.mean(),
                          largest=error.max()))  # fmt: skip
    print(once.format(mean=rounded_once.mean()))


# --8<-- [end:kernel]

if __name__ == "__main__":
    show_errors()
