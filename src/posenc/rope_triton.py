r"""RoPE as one hand-written Triton kernel: ``q`` and ``k`` rotated in one launch, the angles
computed from the positions inside the kernel.

RoPE reads ``q`` and ``k`` once and writes them once, like a copy, and does a few
multiplications per element: it is limited by memory bandwidth, and a copy of ``q`` and ``k``
is its floor. This kernel moves nothing more than the copy: each program takes one token of
one batch row, computes \(a\cos(p\,\theta_i)\) and \(a\sin(p\,\theta_i)\) for its position
\(p\) in float32 (no table is read from memory), and rotates that token's pairs in every
head of ``q`` and then of ``k``; channels past ``2 * len(inv_freq)`` are copied (partial
rotary). An untuned kernel of this design reached 88-89 % of a copy's bandwidth on an H100
(``benchmarks/results/gpu/h100-2026-11-26``); this one is not yet measured on a GPU.

Triton is optional: ``pip install triton``. Without a GPU its interpreter runs the same kernel
on a CPU (``TRITON_INTERPRET=1`` set before this module is imported), which is how the tests
check it everywhere. `posenc.RotaryEmbedding` does not use it by default until it is measured.
"""

from __future__ import annotations

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


if triton is not None:

    @triton.jit
    def _rope_kernel(
        q_ptr, k_ptr, q_out_ptr, k_out_ptr, positions_ptr, inv_freq_ptr,
        seq, heads_q, heads_k,
        q_stride_b, q_stride_h, q_stride_s, q_stride_d,
        k_stride_b, k_stride_h, k_stride_s, k_stride_d,
        positions_stride_b, positions_stride_s,
        attention_factor,
        PAIRS: tl.constexpr, HEAD_DIM: tl.constexpr, INTERLEAVED: tl.constexpr,
        BLOCK_H: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_REST: tl.constexpr,
    ):  # fmt: skip
        token = tl.program_id(0)  # batch * seq + s
        head_block = tl.program_id(1)  # blocks of q's heads, then blocks of k's
        batch, s = token // seq, token % seq
        position = tl.load(positions_ptr + batch * positions_stride_b + s * positions_stride_s)
        pair = tl.arange(0, BLOCK_P)
        theta = tl.load(inv_freq_ptr + pair, mask=pair < PAIRS, other=0.0)
        angle = position.to(tl.float32) * theta  # p·θ_i in float32, as rotary_cos_sin
        cos = (tl.cos(angle) * attention_factor)[None, :]
        sin = (tl.sin(angle) * attention_factor)[None, :]
        if INTERLEAVED:  # pair i is channels (2i, 2i + 1)
            channel_a, channel_b = 2 * pair, 2 * pair + 1
        else:  # pair i is channels (i, i + d/2)
            channel_a, channel_b = pair, pair + PAIRS
        q_blocks = tl.cdiv(heads_q, BLOCK_H)
        if head_block < q_blocks:
            src, dst, heads, first = q_ptr, q_out_ptr, heads_q, head_block * BLOCK_H
            stride_b, stride_h, stride_s, stride_d = q_stride_b, q_stride_h, q_stride_s, q_stride_d
        else:
            src, dst, heads, first = k_ptr, k_out_ptr, heads_k, (head_block - q_blocks) * BLOCK_H
            stride_b, stride_h, stride_s, stride_d = k_stride_b, k_stride_h, k_stride_s, k_stride_d
        head = first + tl.arange(0, BLOCK_H)[:, None]
        rows = head < heads
        inside = rows & (pair[None, :] < PAIRS)
        read = src + batch * stride_b + head * stride_h + s * stride_s
        x_a = tl.load(read + channel_a[None, :] * stride_d, mask=inside).to(tl.float32)
        x_b = tl.load(read + channel_b[None, :] * stride_d, mask=inside).to(tl.float32)
        # the output is contiguous (batch, heads, seq, head_dim)
        write = dst + ((batch * heads + head) * seq + s) * HEAD_DIM
        kind = dst.dtype.element_ty
        tl.store(write + channel_a[None, :], (x_a * cos - x_b * sin).to(kind), mask=inside)
        tl.store(write + channel_b[None, :], (x_b * cos + x_a * sin).to(kind), mask=inside)
        if BLOCK_REST > 0:  # partial rotary: the channels past the rotated ones pass through
            rest = 2 * PAIRS + tl.arange(0, BLOCK_REST)[None, :]
            kept = rows & (rest < HEAD_DIM)
            tl.store(write + rest, tl.load(read + rest * stride_d, mask=kept), mask=kept)


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
    dtype at the end: in bfloat16 a closer result than the eager path, which rounds the
    tables first).

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
            ``inv_freq`` wider than half of ``head_dim``, or positions of the wrong shape.
    """
    if triton is None:
        raise RuntimeError(
            "posenc.rope_triton needs Triton: pip install triton (on a machine without a GPU, "
            "set TRITON_INTERPRET=1 before importing posenc.rope_triton to run it on the CPU)"
        )
    check_choice("layout", layout, LAYOUTS)
    check_floating("q", q, ndim=4)
    check_floating("k", k, ndim=4)
    if q.dtype not in (torch.float32, torch.bfloat16, torch.float16) or k.dtype != q.dtype:
        raise TypeError(
            "q and k must both be float32, bfloat16 or float16 (the same), "
            f"got {q.dtype} and {k.dtype}"
        )
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
    q_out = torch.empty_like(q, memory_format=torch.contiguous_format)
    k_out = torch.empty_like(k, memory_format=torch.contiguous_format)
    if q.numel() == 0:
        return q_out, k_out
    block_h = 4
    position_strides = (0, positions.stride(0)) if positions.ndim == 1 else positions.stride()
    grid = (batch * seq, triton.cdiv(heads_q, block_h) + triton.cdiv(k.shape[1], block_h))
    _rope_kernel[grid](
        q, k, q_out, k_out, positions, inv_freq.float().contiguous(),
        seq, heads_q, k.shape[1], *q.stride(), *k.stride(), *position_strides,
        attention_factor,
        PAIRS=pairs, HEAD_DIM=head_dim, INTERLEAVED=layout == "interleaved",
        BLOCK_H=block_h, BLOCK_P=triton.next_power_of_2(pairs),
        BLOCK_REST=triton.next_power_of_2(head_dim - 2 * pairs) if head_dim > 2 * pairs else 0,
    )  # fmt: skip
    return q_out, k_out


__all__ = ["rotate_qk"]
