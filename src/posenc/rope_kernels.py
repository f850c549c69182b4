r"""Fast forms of the RoPE rotation in `posenc.rope`; each computes exactly that rotation.

The reference rotation \(x' = x \odot \cos + \mathrm{rot}(x) \odot \sin\) (`posenc.rope`)
writes about 4.5 times the size of \(x\): \(\mathrm{rot}(x)\), two products and their sum.
RoPE is limited by memory traffic, so the forms here write less:

- `rotate`: eager PyTorch. Interleaved pairs in float32/float64 on CPU and CUDA are complex
  numbers, and the rotation is one complex product (the output is written once); otherwise
  one product ``x * cos`` and two in-place ``addcmul_`` (written twice).
- `rotate_qk_compiled`: ``q`` and ``k`` rotated by one kernel that `torch.compile` generates
  from `rotate_pairs` (each output written once, in either layout).

All take full-width tables as `posenc.rotary_cos_sin` builds them (each angle twice, once
per channel of its pair) and read one copy per pair, so both copies must be equal.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

from ._checks import is_compiling


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str) -> torch.Tensor:
    """The rotation of all of ``x``'s channels, tables already in ``x``'s dtype."""
    if layout == "interleaved" and _pairs_viewable_as_complex(x):
        # Pair (x_2i, x_2i+1) is the complex number x_2i + i x_2i+1, and the rotation is one
        # complex product with cos + i sin: a single pass that writes the output once.
        pairs = torch.view_as_complex(x.unflatten(-1, (-1, 2)))
        turn = torch.complex(cos[..., 0::2], sin[..., 0::2])  # one table entry per pair
        return torch.view_as_real(pairs * turn).flatten(-2)
    if layout == "half":
        a, b = slice(0, x.shape[-1] // 2), slice(x.shape[-1] // 2, None)  # pair (i, i + d/2)
    else:
        a, b = slice(0, None, 2), slice(1, None, 2)  # pair (2i, 2i + 1)
    # Both channels of a pair share one angle, so one contiguous product gives
    # (x_a cos, x_b cos); then add -x_b sin and x_a sin in place: the output is written twice.
    out = x * cos
    out[..., a].addcmul_(x[..., b], sin[..., a], value=-1)  # x_a' = x_a cos - x_b sin
    out[..., b].addcmul_(x[..., a], sin[..., a])  # x_b' = x_b cos + x_a sin
    return out


def _pairs_viewable_as_complex(x: torch.Tensor) -> bool:
    # view_as_complex is used for float32/float64 only (there is no complex bfloat16, and
    # torch.complex32, complex float16, is experimental with few kernels) and
    # each pair adjacent and aligned: last stride 1, every other stride and the offset even.
    # Inductor generates no code for complex numbers, so torch.compile gets the real form;
    # other backends' complex support varies, so they do too.
    return (
        x.dtype in (torch.float32, torch.float64)
        and x.device.type in ("cpu", "cuda")
        and not is_compiling()
        and x.stride(-1) == 1
        and x.storage_offset() % 2 == 0
        and all(stride % 2 == 0 for stride in x.stride()[:-1])
    )


def rotate_pairs(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str
) -> torch.Tensor:
    """The rotation written plainly for a compiler; ``cos``/``sin`` hold one entry per pair.

    Inductor turns this into one loop that reads ``x`` and writes the output once, which no
    sequence of eager PyTorch ops does for the half layout.
    """
    if layout == "half":
        x_a, x_b = x.chunk(2, dim=-1)
        return torch.cat((x_a * cos - x_b * sin, x_b * cos + x_a * sin), dim=-1)
    x_a, x_b = x[..., 0::2], x[..., 1::2]
    return torch.stack((x_a * cos - x_b * sin, x_b * cos + x_a * sin), dim=-1).flatten(-2)


def rotate_qk(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """``q`` and ``k`` in one graph, so that the compiler can emit one kernel for both."""
    pair = slice(0, cos.shape[-1] // 2) if layout == "half" else slice(0, None, 2)
    cos, sin = cos[..., pair], sin[..., pair]
    rotary_dim = cos.shape[-1] * 2

    def one(x: torch.Tensor) -> torch.Tensor:
        # tables in x's dtype, as apply_rotary does: the result keeps x's dtype
        rotated = rotate_pairs(x[..., :rotary_dim], cos.to(x.dtype), sin.to(x.dtype), layout)
        if rotary_dim == x.shape[-1]:
            return rotated
        return torch.cat((rotated, x[..., rotary_dim:]), dim=-1)

    return one(q), one(k)


@functools.cache
def _compiled_rotate_qk() -> Callable[..., tuple[torch.Tensor, torch.Tensor]]:
    # Built on first use: importing posenc must not pull in the compiler stack. torch.compile's
    # defaults: the first call specialises on its shapes, and the first change of a size makes
    # that size dynamic, so a decoding loop compiles once more, not at every step. Dynamic
    # shapes from the start (dynamic=True) would make head_dim symbolic too, and the
    # generated CPU loop measurably slower.
    return torch.compile(rotate_qk)


def rotate_qk_compiled(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """`rotate_qk` as one generated kernel; a clear error where nothing can compile it."""
    try:
        return _compiled_rotate_qk()(q, k, cos, sin, layout)
    except torch._dynamo.exc.BackendCompilerFailed as error:
        raise RuntimeError(
            f"RotaryEmbedding(kernel='compiled') could not compile its kernel for {q.device.type}: "
            "torch.compile needs a working C++ compiler on CPU and Triton on CUDA. "
            "Use kernel='eager' (PyTorch operators) where neither is available."
        ) from error
