"""Chapter "Performance": count the bytes each RoPE formulation writes (machine-independent).

Functions named ``show_*`` print with labels in the reader's language (``lang="en"`` or
``"zh"``); each page calls them in a one-line block.

Run it: python snippets/performance/traffic.py
"""

# --8<-- [start:count]
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import posenc


class BytesWritten(TorchDispatchMode):
    """Add up the bytes of every tensor an operator writes (views write nothing)."""

    def __init__(self):
        super().__init__()
        self.bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if not func.is_view:  # an output, an out= target or an in-place target (a slice of one)
            outputs = result if isinstance(result, (tuple, list)) else [result]
            self.bytes += sum(t.nbytes for t in outputs if isinstance(t, torch.Tensor))
        return result


def hf_eager(x, cos, sin):  # Hugging Face's formula, "half" layout
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


torch.manual_seed(0)
q = torch.randn(4, 16, 1024, 64)  # (batch, heads, seq, head_dim)
size = q.nbytes
tables = {layout: posenc.RotaryEmbedding(64, layout=layout).cos_sin(1024)
          for layout in ("half", "interleaved")}  # fmt: skip
assert torch.allclose(hf_eager(q, *tables["half"]), posenc.apply_rotary(q, *tables["half"]),
                      atol=1e-5)  # fmt: skip
written = {}
for name, fn in [
    ("clone", lambda: q.clone()),
    ("hf_eager (half)", lambda: hf_eager(q, *tables["half"])),
    ("posenc (half)", lambda: posenc.apply_rotary(q, *tables["half"], layout="half")),
    ("posenc (interleaved)",
     lambda: posenc.apply_rotary(q, *tables["interleaved"], layout="interleaved")),
]:  # fmt: skip
    with BytesWritten() as counter:
        fn()
    written[name] = counter.bytes / size


def show_written(lang="en"):
    line = {"en": "{:20} writes {:.2f}x the size of q", "zh": "{:20} 写出的字节数是 q 的 {:.2f} 倍"}
    for name, times in written.items():
        print(line[lang].format(name, times))


# --8<-- [end:count]

# --8<-- [start:no_complex_half]
# Half layout: pair i is (x_i, x_{i+32}). Make it a last axis of size 2 ...
pairs = q.unflatten(-1, (2, 32)).transpose(-1, -2)  # (..., 32, 2)
try:  # ... but a complex number needs its two parts next to each other in memory
    torch.view_as_complex(pairs)
except RuntimeError as error:
    refused = error


def show_no_complex(lang="en"):
    lines = {
        "en": ("stride between the two numbers of a pair: {}", "view_as_complex: {}"),
        "zh": ("一对中两个数之间的 stride：{}", "view_as_complex 报错：{}"),
    }[lang]
    print(lines[0].format(pairs.stride(-1)))
    print(lines[1].format(refused))


# --8<-- [end:no_complex_half]

# the page's claims: the textbook formula writes 4.5 copies, posenc 2 (half) and 1 (interleaved,
# plus the complex table cos + i sin: 1024 x 32 complex numbers, 1/64 of q here)
assert written["clone"] == 1.0 and written["hf_eager (half)"] == 4.5
assert written["posenc (half)"] == 2.0
assert 1.0 < written["posenc (interleaved)"] <= 1.0 + 1 / 64

if __name__ == "__main__":
    show_written()
    show_no_complex()
