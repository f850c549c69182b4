"""Chapter "Performance": count the bytes each RoPE formulation writes (machine-independent).

Run it: python snippets/performance/traffic.py
"""

# --8<-- [start:count]
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import posenc


class BytesWritten(TorchDispatchMode):
    """Add up the bytes of every tensor an operator writes (its outputs, or its out=/in-place target)."""

    def __init__(self):
        super().__init__()
        self.bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        is_view = func._schema.name.split("::")[-1] in {"view", "slice", "split", "unsqueeze",
                                                        "expand", "unflatten", "select", "alias"}
        if not is_view and func._schema.name != "aten::empty_like":
            outputs = result if isinstance(result, (tuple, list)) else [result]
            self.bytes += sum(t.numel() * t.element_size() for t in outputs
                              if isinstance(t, torch.Tensor))
        return result


def hf_eager(x, cos, sin):  # Hugging Face's formula, "half" layout
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


def fused(x, cos, sin):  # write each half of the output in place: out = [x1 c - x2 s, x2 c + x1 s]
    half = x.shape[-1] // 2
    c, s = cos[..., :half], sin[..., :half]
    x_view = x.unflatten(-1, (2, half))
    out = torch.empty_like(x_view)
    torch.mul(x_view, c.unsqueeze(-2), out=out)
    out[..., 0, :].addcmul_(x_view[..., 1, :], s, value=-1)
    out[..., 1, :].addcmul_(x_view[..., 0, :], s)
    return out.flatten(-2)


q = torch.randn(4, 16, 1024, 64)
cos, sin = posenc.RotaryEmbedding(64).cos_sin(1024)
assert torch.allclose(hf_eager(q, cos, sin), fused(q, cos, sin), atol=1e-5)
size = q.numel() * q.element_size()
for name, fn in [("clone", lambda x, c, s: x.clone()), ("hf_eager", hf_eager), ("fused", fused)]:
    with BytesWritten() as counter:
        fn(q, cos, sin)
    print(f"{name:9} writes {counter.bytes / size:.1f}x the size of q")
# --8<-- [end:count]
