"""Chapter "Performance": RotaryEmbedding(kernel="compiled") rotates q and k with one kernel.

Functions named ``show_*`` print with labels in the reader's language (``lang="en"`` or
``"zh"``); each page calls them in a one-line block.

Run it: python snippets/performance/compiled.py   (compiles on the first call: a few seconds)
"""

# --8<-- [start:one_kernel]
import re

import torch
from torch._inductor.utils import run_and_get_code  # returns the code inductor generated

import posenc

rope = posenc.RotaryEmbedding(64, layout="half", kernel="compiled")
q, k = torch.randn(4, 16, 1024, 64), torch.randn(4, 16, 1024, 64)
(q_rot, k_rot), sources = run_and_get_code(rope, q, k)
code = "\n".join(sources)
kernels = re.findall(r"^(\w+) = async_compile\.", code, flags=re.MULTILINE)
buffers = re.findall(r"empty_strided_cpu\(\(([\d, ]+)\)", code)

eager = posenc.RotaryEmbedding(64, layout="half")  # the same rotation with eager operators
for got, want in zip((q_rot, k_rot), eager(q, k), strict=True):
    assert torch.allclose(got, want, atol=1e-6)


def show_kernels(lang="en"):
    kernels_line, tensors_line, comma = {
        "en": ("kernels generated: {}", "tensors allocated: {}", ", "),
        "zh": ("生成的内核：{} 个", "分配的张量：{}", "、"),
    }[lang]
    print(kernels_line.format(len(kernels)))
    print(tensors_line.format(comma.join(f"({b})" for b in buffers)))


# --8<-- [end:one_kernel]

if __name__ == "__main__":
    show_kernels()
