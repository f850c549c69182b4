r"""RoPE as one hand-written Triton kernel: ``q`` and ``k`` rotated in one launch, the angles
computed from the positions inside the kernel.

RoPE reads ``q`` and ``k`` once and writes them once, like a copy, and does a few
multiplications per element: it is limited by memory bandwidth, and a copy of ``q`` and ``k``
is its floor. This kernel moves nothing more than the copy: each program takes a tile of
heads × positions of one batch row (`DEFAULT_TILE`), computes \(a\cos(p\,\theta_i)\) and
\(a\sin(p\,\theta_i)\) for its positions in float32 (no table is read from memory), and
rotates the tile's pairs, the heads of ``q`` and then of ``k`` in the same launch; an
interleaved row is read in one contiguous load and split in registers. Channels past
``2 * len(inv_freq)`` are copied (partial rotary). `rotate` is the same kernel reading
`posenc.apply_rotary`'s tables instead.

Why it is the default on CUDA (`posenc.RotaryEmbedding` and `posenc.apply_rotary` with
``kernel="auto"``), measured on an H100 at (8, 32, 4096, 128) bfloat16
(``benchmarks/results/gpu/h100-2026-11-27``): the kernel moves 97 % (half layout) and 100 %
(interleaved) of a copy's bandwidth, and the module called back to back, as a model calls
it, 99 %; posenc's eager rotation moves 20 %, ``torch.compile`` of it 57-67 % and
``torch.compile`` of the textbook formula 67-86 % in the same benchmark. It needs no
compilation when a length or dtype changes. Timed one synchronised call at a time, the
host's work before the launch shows (82-83 % for the module).

Triton is optional: ``pip install triton``; without it ``kernel="auto"`` stays eager. Without a
GPU, Triton's interpreter runs the same kernel on a CPU (``TRITON_INTERPRET=1`` set before
posenc is imported), which is how the tests check it everywhere.
"""

from __future__ import annotations

import os

import torch

from ._checks import (
    check_choice,
    check_floating,
    check_heads,
    check_number,
    check_on_device,
    check_positions,
)
from .rope import LAYOUTS

try:
    import triton
    import triton.language as tl
except ImportError:  # the module imports; rotate_qk says what is missing
    triton = tl = None

# The tile each program takes: (heads, positions, warps). Measured on an H100 at (8, 32, 4096,
# 128) bfloat16 (benchmarks/rope_tiles.py; benchmarks/results/gpu/h100-2026-11-27, run 2):
# 97 % of a copy's bandwidth for the half layout, 100 % interleaved, within a point of the best
# of 36 tiles; the first guess (8, 1, 4) had 90-91 %, tiles of 16 positions 16-97 %.
DEFAULT_TILE = (4, 1, 2)

# Triton reads this when a kernel is defined (below): set it before importing posenc.
_INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


if triton is not None:

    @triton.jit
    def _rope_kernel(
        q_ptr, k_ptr, q_out_ptr, k_out_ptr, positions_ptr, inv_freq_ptr, cos_ptr, sin_ptr,
        seq, heads_q, heads_k,
        q_stride_b, q_stride_h, q_stride_s, q_stride_d,
        k_stride_b, k_stride_h, k_stride_s, k_stride_d,
        positions_stride_b, positions_stride_s,
        table_stride_b, table_stride_h, table_stride_s, table_stride_d,
        attention_factor,
        PAIRS: tl.constexpr, HEAD_DIM: tl.constexpr, INTERLEAVED: tl.constexpr,
        TABLES: tl.constexpr,
        BLOCK_H: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_P: tl.constexpr,
        BLOCK_REST: tl.constexpr,
    ):  # fmt: skip
        # a tile is (BLOCK_H heads, BLOCK_S positions, BLOCK_P pairs) of one batch row
        s_blocks = tl.cdiv(seq, BLOCK_S)
        batch, s_block = tl.program_id(0) // s_blocks, tl.program_id(0) % s_blocks
        head_block = tl.program_id(1)  # blocks of q's heads, then blocks of k's
        q_blocks = tl.cdiv(heads_q, BLOCK_H)
        if head_block < q_blocks:
            src, dst, heads, first = q_ptr, q_out_ptr, heads_q, head_block * BLOCK_H
            stride_b, stride_h, stride_s, stride_d = q_stride_b, q_stride_h, q_stride_s, q_stride_d
        else:
            src, dst, heads, first = k_ptr, k_out_ptr, heads_k, (head_block - q_blocks) * BLOCK_H
            stride_b, stride_h, stride_s, stride_d = k_stride_b, k_stride_h, k_stride_s, k_stride_d
        head = first + tl.arange(0, BLOCK_H)[:, None, None]
        s = s_block * BLOCK_S + tl.arange(0, BLOCK_S)[None, :, None]
        pair = tl.arange(0, BLOCK_P)[None, None, :]
        rows = (head < heads) & (s < seq)
        inside = rows & (pair < PAIRS)
        if TABLES:  # apply_rotary's tables: one entry per pair read (the pair's first channel)
            first_channel = 2 * pair if INTERLEAVED else pair
            at = (batch * table_stride_b + head * table_stride_h + s * table_stride_s
                  + first_channel * table_stride_d)  # fmt: skip
            cos = tl.load(cos_ptr + at, mask=inside).to(tl.float32)
            sin = tl.load(sin_ptr + at, mask=inside).to(tl.float32)
        else:  # the angles from the positions: no table is read from memory
            at = batch * positions_stride_b + s * positions_stride_s
            position = tl.load(positions_ptr + at, mask=s < seq, other=0)
            theta = tl.load(inv_freq_ptr + pair, mask=pair < PAIRS, other=0.0)
            angle = position.to(tl.float32) * theta  # p·θ_i in float32, as rotary_cos_sin
            cos = tl.cos(angle) * attention_factor  # (1, BLOCK_S, BLOCK_P): shared by the heads
            sin = tl.sin(angle) * attention_factor
        read = src + batch * stride_b + head * stride_h + s * stride_s
        # the output is contiguous (batch, heads, seq, head_dim)
        write = dst + ((batch * heads + head) * seq + s) * HEAD_DIM
        kind = dst.dtype.element_ty
        if INTERLEAVED:  # pair i is channels (2i, 2i + 1): one contiguous load, split in two
            channel = tl.arange(0, 2 * BLOCK_P)[None, None, :]
            both = rows & (channel < 2 * PAIRS)
            x = tl.load(read + channel * stride_d, mask=both).to(tl.float32)
            x_a, x_b = tl.split(tl.reshape(x, (BLOCK_H, BLOCK_S, BLOCK_P, 2)))
            y = tl.join(x_a * cos - x_b * sin, x_b * cos + x_a * sin)
            tl.store(write + channel, tl.reshape(y, (BLOCK_H, BLOCK_S, 2 * BLOCK_P)).to(kind),
                     mask=both)  # fmt: skip
        else:  # pair i is channels (i, i + d/2)
            x_a = tl.load(read + pair * stride_d, mask=inside).to(tl.float32)
            x_b = tl.load(read + (pair + PAIRS) * stride_d, mask=inside).to(tl.float32)
            tl.store(write + pair, (x_a * cos - x_b * sin).to(kind), mask=inside)
            tl.store(write + pair + PAIRS, (x_b * cos + x_a * sin).to(kind), mask=inside)
        if BLOCK_REST > 0:  # partial rotary: the channels past the rotated ones pass through
            rest = 2 * PAIRS + tl.arange(0, BLOCK_REST)[None, None, :]
            kept = rows & (rest < HEAD_DIM)
            tl.store(write + rest, tl.load(read + rest * stride_d, mask=kept), mask=kept)


def runs_on(device: torch.device) -> bool:
    """Whether the kernel can run on ``device``: Triton installed and a CUDA device, or any
    device under Triton's interpreter (``TRITON_INTERPRET=1``, slow: for tests)."""
    return triton is not None and (device.type == "cuda" or _INTERPRETED)


def rotate_qk(
    q: torch.Tensor,
    k: torch.Tensor,
    positions: torch.Tensor,
    inv_freq: torch.Tensor,
    *,
    layout: str = "half",
    attention_factor: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""``q`` and ``k`` rotated at ``positions`` by one Triton kernel launch.

    Equals `posenc.apply_rotary` with `posenc.rotary_cos_sin` tables for the same positions,
    frequencies, layout and attention factor (computed in float32, rounded once to ``q``'s
    dtype at the end: in float16 and bfloat16 a closer result than the eager path, which
    rounds the tables and each step).

    Args:
        q: Queries ``(batch, heads, seq, head_dim)``, float32, bfloat16 or float16, any strides.
        k: Keys ``(batch, kv_heads, seq, head_dim)``, ``q``'s dtype and device;
            ``kv_heads`` divides ``heads``.
        positions: Integer positions ``(seq,)`` shared by the batch, or ``(batch, seq)``.
        inv_freq: Frequencies \(\theta_i\), ``(rotary_dim // 2,)`` on ``q``'s device
            (`posenc.rope_inv_freq`); channels past ``rotary_dim`` pass through.
        layout: ``"half"`` (pairs ``(i, i + rotary_dim/2)``) or ``"interleaved"``.
        attention_factor: Factor \(a\) on cos and sin (YaRN, LongRoPE); 1 by default.

    Returns:
        ``(q_rotated, k_rotated)``, contiguous, in ``q``'s dtype.

    Raises:
        RuntimeError: Triton is not installed.
        TypeError, ValueError: As `posenc.apply_rotary`; also ``k`` of another dtype,
            ``inv_freq`` wider than half of ``head_dim``, positions of the wrong shape, or a
            device the kernel does not run on (see `runs_on`).
    """
    check_choice("layout", layout, LAYOUTS)
    _check_inputs(("q", q), ("k", k))
    batch, heads_q, seq, head_dim = q.shape
    if (k.shape[0], k.shape[2], k.shape[3]) != (batch, seq, head_dim):
        raise ValueError(
            f"k must have q's batch, seq and head_dim sizes ({batch}, {seq}, {head_dim}), "
            f"got shape {tuple(k.shape)}"
        )
    check_heads(heads_q, k.shape[1])
    check_on_device("k", k, q.device, "q's")
    positions = check_positions("positions", positions, ndim=(1, 2))
    if positions.shape[-1] != seq or (positions.ndim == 2 and positions.shape[0] != batch):
        raise ValueError(
            f"positions must have shape ({seq},) or ({batch}, {seq}), got {tuple(positions.shape)}"
        )
    check_on_device("positions", positions, q.device, "q's")
    check_floating("inv_freq", inv_freq, ndim=1)
    check_on_device("inv_freq", inv_freq, q.device, "q's")
    pairs = inv_freq.shape[0]
    if not 0 < 2 * pairs <= head_dim:
        raise ValueError(
            f"inv_freq must have 1 to head_dim // 2 ({head_dim // 2}) entries, got {pairs}"
        )
    attention_factor = check_number("attention_factor", attention_factor, above=0)
    return _rotate_qk(q, k, positions, inv_freq.float().contiguous(), layout, attention_factor)


def _rotate_qk(q, k, positions, inv_freq, layout, attention_factor):
    """`rotate_qk` on checked arguments (`posenc.RotaryEmbedding` checks its own first). The
    autograd wrapper only when a gradient will be asked for: host time per call counts (a call
    is ~0.4 ms of GPU time at the benchmark's size, and everything before the launch adds)."""
    if torch.is_grad_enabled() and (q.requires_grad or k.requires_grad):
        return _RotateQK.apply(q, k, positions, inv_freq, layout, attention_factor)
    return _launch(q, k, layout, positions, inv_freq, attention_factor=attention_factor)


def rotate(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, *, layout: str = "half"
) -> torch.Tensor:
    """``x`` rotated by full-width tables in one Triton kernel launch: `posenc.apply_rotary`
    with ``kernel="triton"``, which checks the arguments and calls this.

    ``x`` is ``(batch, heads, seq, head_dim)``; ``cos`` and ``sin`` broadcast to
    ``(batch, heads, seq, rotary_dim)`` (broadcast dimensions are read with stride 0, never
    copied), in any floating dtype: one entry per pair is read, converted to float32, and
    the result rounded once to ``x``'s dtype.
    """
    check_choice("layout", layout, LAYOUTS)
    _check_inputs(("x", x))
    if cos.requires_grad or sin.requires_grad:
        raise ValueError(
            "cos and sin must not require grad for the Triton kernel (it passes gradients to x "
            "only); use kernel='eager' to train the tables"
        )
    return _Rotate.apply(x, cos, sin, layout)


class _RotateQK(torch.autograd.Function):
    """The kernel with its gradient: a rotation's transpose is the rotation by the opposite
    angle, so the backward pass is the same kernel at the negated positions."""

    @staticmethod
    def forward(ctx, q, k, positions, inv_freq, layout, attention_factor):
        ctx.save_for_backward(positions, inv_freq)
        ctx.layout, ctx.attention_factor = layout, attention_factor
        ctx.set_materialize_grads(False)  # an unused output's gradient arrives as None
        return _launch(q, k, layout, positions, inv_freq, attention_factor=attention_factor)

    @staticmethod
    def backward(ctx, grad_q, grad_k):
        positions, inv_freq = ctx.saved_tensors
        # an output that reached no loss has no gradient: an empty stand-in, and None back
        stand_in_q = grad_q if grad_q is not None else grad_k[:, :0]
        stand_in_k = grad_k if grad_k is not None else grad_q[:, :0]
        out_q, out_k = _launch(
            stand_in_q, stand_in_k, ctx.layout, -positions, inv_freq,
            attention_factor=ctx.attention_factor,
        )  # fmt: skip
        return (
            out_q if grad_q is not None else None,
            out_k if grad_k is not None else None,
            None, None, None, None,
        )  # fmt: skip


class _Rotate(torch.autograd.Function):
    """`rotate` with its gradient: the transposed rotation, the same tables with sin negated."""

    @staticmethod
    def forward(ctx, x, cos, sin, layout):
        ctx.save_for_backward(cos, sin)
        ctx.layout = layout
        return _launch(x, x[:, :0], layout, tables=_broadcast_tables(x, cos, sin))[0]

    @staticmethod
    def backward(ctx, grad):
        cos, sin = ctx.saved_tensors
        tables = _broadcast_tables(grad, cos, -sin)  # negated before the broadcast: small
        return _launch(grad, grad[:, :0], ctx.layout, tables=tables)[0], None, None, None


def _broadcast_tables(x, cos, sin):
    # (batch, heads, seq, rotary_dim) views: a broadcast dimension is read with stride 0
    cos = cos.expand(*x.shape[:-1], cos.shape[-1])
    sin = sin.expand(*x.shape[:-1], sin.shape[-1])
    if sin.stride() != cos.stride():  # one set of strides is passed for both tables
        cos, sin = cos.contiguous(), sin.contiguous()
    return cos, sin


def _check_inputs(*named: tuple[str, torch.Tensor]) -> None:
    """Triton installed; each tensor 4-D, float32/bfloat16/float16, all one dtype, on a device
    the kernel runs on. ``named`` gives each tensor with the argument name an error shows."""
    if triton is None:
        raise RuntimeError(
            "posenc.rope_triton needs Triton: pip install triton (on a machine without a GPU, "
            "set TRITON_INTERPRET=1 before importing posenc to run it on the CPU)"
        )
    for name, tensor in named:
        check_floating(name, tensor, ndim=4)
    names = " and ".join(name for name, _ in named)
    dtypes = [tensor.dtype for _, tensor in named]
    if dtypes[0] not in (torch.float32, torch.bfloat16, torch.float16) or len(set(dtypes)) > 1:
        raise TypeError(
            f"{names} must be float32, bfloat16 or float16 (the same), got "
            + " and ".join(str(dtype) for dtype in dtypes)
        )
    first_name, first = named[0]
    if not runs_on(first.device):
        raise ValueError(
            f"{first_name} must be on a CUDA device for the Triton kernel, got {first.device} "
            "(set TRITON_INTERPRET=1 before importing posenc to run it in Triton's interpreter)"
        )


def _launch(
    q, k, layout, positions=None, inv_freq=None, *, attention_factor=1.0, tables=None,
    block_h=None, block_s=None, num_warps=None,
):  # fmt: skip
    """One launch over every token: a program per (token, block of heads) of q, then of k.
    With ``tables`` the angles are read from them, else computed from ``positions``.
    ``block_h`` (heads per program), ``block_s`` (positions per program) and ``num_warps``
    override the defaults, for ``benchmarks/rope_tiles.py``'s sweep."""
    q_out = torch.empty_like(q, memory_format=torch.contiguous_format)
    k_out = torch.empty_like(k, memory_format=torch.contiguous_format)
    if q.numel() + k.numel() == 0:
        return q_out, k_out
    batch, heads_q, seq, head_dim = q.shape
    heads_k = k.shape[1]
    pairs = inv_freq.shape[0] if tables is None else tables[0].shape[-1] // 2
    default_heads, default_positions, default_warps = DEFAULT_TILE
    if block_h is None:  # fewer for models with fewer heads, so that no lane idles
        block_h = min(default_heads, triton.next_power_of_2(max(heads_q, heads_k)))
    if block_s is None:
        block_s = default_positions
    if num_warps is None:
        num_warps = default_warps
    if tables is None:
        cos = sin = inv_freq  # not read: the angles come from positions and inv_freq
        table_strides = (0, 0, 0, 0)
        position_strides = (0, positions.stride(0)) if positions.ndim == 1 else positions.stride()
    else:
        position_strides = (0, 0)
        cos, sin = tables
        table_strides = cos.stride()
        positions = inv_freq = cos  # not read: the tables hold the angles' cos and sin
    blocks_k = triton.cdiv(heads_k, block_h) if heads_k else 0
    grid = (batch * triton.cdiv(seq, block_s), triton.cdiv(heads_q, block_h) + blocks_k)
    _rope_kernel[grid](
        q, k, q_out, k_out, positions, inv_freq, cos, sin,
        seq, heads_q, heads_k, *q.stride(), *k.stride(), *position_strides, *table_strides,
        attention_factor,
        PAIRS=pairs, HEAD_DIM=head_dim, INTERLEAVED=layout == "interleaved",
        TABLES=tables is not None,
        BLOCK_H=block_h, BLOCK_S=block_s, BLOCK_P=triton.next_power_of_2(pairs),
        BLOCK_REST=triton.next_power_of_2(head_dim - 2 * pairs) if head_dim > 2 * pairs else 0,
        num_warps=num_warps,
    )  # fmt: skip
    return q_out, k_out


__all__ = ["rotate", "rotate_qk", "runs_on"]
