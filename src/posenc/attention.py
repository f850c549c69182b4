r"""Scaled dot-product attention that takes ALiBi slopes or any additive bias.

\[
\mathrm{Attention}(Q, K, V) = \operatorname{softmax}\!\Big(s\,QK^\top + B + M\Big) V,
\qquad s = 1/\sqrt{d},
\]

with \(B\) an additive bias (ALiBi's \(m_h(j - i)\), T5's bucket bias, ...) and \(M\) the causal
mask (\(-\infty\) for keys after the query). The queries are the last ``q_len`` of the
``k_len`` keys: query \(i\) sits at position ``k_len - q_len + i`` (decoding with a KV cache).
Shapes: ``(batch, heads, seq, head_dim)``.
"""

from __future__ import annotations

import math
from functools import cache, lru_cache

import torch
import torch.nn.functional as F

from ._checks import (
    check_bool,
    check_choice,
    check_floating,
    check_heads,
    check_number,
    check_on_device,
    is_compiling,
)
from .alibi import alibi_bias

BACKENDS = ("auto", "sdpa", "flex")


try:
    from torch.nn.attention.flex_attention import BlockMask, flex_attention
except ImportError:  # torch < 2.5: no FlexAttention, the SDPA path is used
    BlockMask = flex_attention = None

_FLEX_BLOCK = 128  # FlexAttention's default tile: 128 queries by 128 keys

# The smallest head_dim for which inductor's C++ FlexAttention kernel computes q·kᵀ exactly on
# every x86 CPU; a smaller one that is a multiple of 8 is padded with zeros to it (see _flex).
_CPU_SAFE_QK_DIM = 24


def _check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> None:
    for name, tensor in (("q", q), ("k", k), ("v", v)):
        check_floating(name, tensor, ndim=4)
    for name, tensor in (("k", k), ("v", v)):
        check_on_device(name, tensor, q.device, "q's")
        if tensor.dtype != q.dtype:
            raise ValueError(f"{name} must have q's dtype ({q.dtype}), got {tensor.dtype}")
    if k.shape[:3] != v.shape[:3]:
        raise ValueError(
            "v must agree with k in (batch, kv_heads, k_len) "
            f"{tuple(k.shape[:3])}, got {tuple(v.shape[:3])}"
        )
    if q.shape[0] != k.shape[0] or q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"k must agree with q in batch and head_dim ({q.shape[0]}, {q.shape[-1]}), "
            f"got shape {tuple(k.shape)}"
        )
    check_heads(q.shape[1], k.shape[1])
    if k.shape[2] == 0:
        raise ValueError("k_len must be >= 1 (softmax over no keys is undefined), got 0")
    if causal and q.shape[2] > k.shape[2]:
        raise ValueError(
            f"q_len must be <= k_len ({k.shape[2]}) when causal (the queries are the last "
            f"q_len keys), got {q.shape[2]}"
        )


# ── SDPA: one additive mask ─────────────────────────────────────────────────


def _additive_mask(
    q: torch.Tensor,
    k_len: int,
    causal: bool,
    alibi_slopes: torch.Tensor | None,
    bias: torch.Tensor | None,
) -> torch.Tensor | None:
    """B + M as one tensor broadcastable to (batch, heads, q_len, k_len).

    Its batch size stays 1 unless ``bias`` has one: SDPA broadcasts it, no per-batch copy.
    """
    heads, q_len = q.shape[1], q.shape[2]
    mask = None
    if alibi_slopes is not None and q_len == 1:
        # a decoding step: the one query is the last key, i = k_len − 1 >= j, so both forms are
        # m_h·(j − i); three kernels instead of alibi_bias's dozen (per step, host time counts)
        distance = torch.arange(1 - k_len, 1, device=q.device, dtype=torch.float32)  # j − i
        mask = (alibi_slopes.float()[:, None] * distance)[None, :, None, :]
    elif alibi_slopes is not None:
        # (1, heads, q, k): m_h·(j − i), or −m_h·|j − i| when not causal
        mask = alibi_bias(heads, q_len, k_len, causal=causal, slopes=alibi_slopes)[None]
    if bias is not None:
        mask = bias.float() if mask is None else mask + bias.float()
    if causal and q_len > 1:  # one query is the last position: no key lies in its future
        query_position = torch.arange(q_len, device=q.device)[:, None] + (k_len - q_len)
        future = torch.arange(k_len, device=q.device)[None, :] > query_position  # j > i
        causal_mask = torch.zeros(q_len, k_len, device=q.device).masked_fill(future, float("-inf"))
        mask = causal_mask if mask is None else mask + causal_mask
    return None if mask is None else mask.to(q.dtype)


def _sdpa(q, k, v, *, causal, alibi_slopes, bias, scale):
    gqa = q.shape[1] != k.shape[1]
    if alibi_slopes is None and bias is None and (not causal or q.shape[2] == k.shape[2]):
        # No bias and square (or no) causal mask: let SDPA pick its fastest kernel.
        return F.scaled_dot_product_attention(
            q, k, v, is_causal=causal, scale=scale, enable_gqa=gqa
        )
    mask = _additive_mask(q, k.shape[2], causal, alibi_slopes, bias)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale, enable_gqa=gqa)


# ── FlexAttention: the bias computed per score, never stored ────────────────


@cache
def _compiled_flex_attention():
    # Outside torch.compile, flex_attention runs an unfused reference implementation that
    # builds the scores; compiled, it is one fused kernel (Triton on CUDA, C++ on CPU).
    # Default dynamic shapes: the first change of a length makes it symbolic, so a decoding
    # loop (a new k_len at every step) compiles once more and then never again.
    return torch.compile(flex_attention)


@lru_cache(maxsize=16)
def _causal_block_mask(
    q_len: int, k_len: int, device: torch.device
) -> tuple[BlockMask, torch.Tensor]:
    """Which 128×128 tiles of the scores the causal mask leaves, computed from the tile
    indices, and the first query's position ``k_len - q_len`` as a 0-d tensor on ``device``
    (the mask and ``score_mod`` read it).

    Built once per (q_len, k_len, device) and kept (the 16 most recent): building it is some
    three hundred small tensor operations, ~1.4 ms of host time per call on an H100 machine
    where the kernel itself took 0.13 ms at L = 1024
    (``benchmarks/results/gpu/h100-2026-11-26``); a repeated call now dispatches only the
    kernel. Its tensors are O((L/128)²) int32, no (L, L) tensor.

    ``create_block_mask`` would evaluate the mask at every (query, key) pair, a (q_len, k_len)
    tensor; here the tiles follow from arithmetic. Query tile ``t`` holds positions
    ``k_len - q_len + t·128 ..``; key tile ``u`` is visible to it when its first key comes no
    later than the tile's last query, and full (no mask needed) when its last key comes no
    later than the tile's first query and neither tile is cut short by the end of the sequence.
    """
    # a tensor, not a Python int: the compiled kernel would guard on an int captured by
    # score_mod and compile again for every new offset (torch.full fills it on the device:
    # no host-to-device copy, no synchronisation)
    offset = torch.full((), k_len - q_len, device=device)
    block, start = _FLEX_BLOCK, k_len - q_len
    q_tiles, k_tiles = -(-q_len // block), -(-k_len // block)
    tile = torch.arange(q_tiles, device=device)
    first_query = start + tile * block
    last_query = start + ((tile + 1) * block).clamp(max=q_len) - 1
    visible = (last_query // block + 1).clamp(max=k_tiles)  # key tiles 0 .. visible - 1
    full = ((first_query + 1) // block).clamp(max=k_len // block)  # key tiles 0 .. full - 1
    full = torch.where((tile + 1) * block <= q_len, full, torch.zeros_like(full))
    order = torch.arange(k_tiles, device=device)
    partial_indices = (order + full[:, None]) % k_tiles  # tiles full .. visible - 1 first

    def causal(batch, head, q_index, k_index):
        return k_index <= q_index + offset  # j <= i

    def tiles(x):  # (batch = 1, heads = 1, q_tiles, ...) as int32, as BlockMask stores them
        return x[None, None].to(torch.int32)

    mask = BlockMask.from_kv_blocks(
        tiles(visible - full),
        tiles(partial_indices),
        tiles(full),
        tiles(order.expand(q_tiles, k_tiles)),
        BLOCK_SIZE=block,
        mask_mod=causal,
        seq_lengths=(q_len, k_len),
    )
    return mask, offset


def _pad_qk_for_cpu(q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``q`` and ``k`` with zero columns appended up to 24 when head_dim is 8 or 16, on CPU.

    Works around a bug in torch's C++ FlexAttention kernel (found in torch 2.13, no upstream
    report found). It computes each tile of scores q·kᵀ with a micro-GEMM
    (``torch/_inductor/codegen/cpp_micro_gemm.py``, ``CppMicroGemmFP32Vec`` with transposed B,
    blocks of 16 keys), whose tail kernel for the last ``N < 16`` keys of a tile takes a
    "first implementation" when ``head_dim % VLEN == 0``, ``N % VLEN == 0`` and
    ``head_dim < 24``, and that implementation reads and writes a full block of 16 columns, not
    ``N``. With AVX2 (``VLEN = 8``, CPUs without AVX-512) that is the case for head_dim 8 or 16
    and a tile of ``16·m + 8`` keys: it multiplies by 8 rows of ``k`` past the tile (past the
    end of ``k`` for the last kv head) and stores the 8 scores past each row, on the next row
    (computed after it) or, for the last row, past the tile. When the tile is the whole
    per-thread score buffer (``k_len < 128`` and ``k_len % 16 == 8``: 8, 24, 40, ..., prompts
    and decoding steps alike), they overwrite the softmax's running maxima (for ``q_len`` 1
    also its sum and output): results off by ~1, with no error (measured at 8, 24, 40, 56,
    72, 120; none with head_dim 32). Zero columns change no dot product (the scale is passed
    explicitly), and from 24 on the kernel takes its exact path. The copy is
    O((q_len + k_len)·head_dim), no ``(L, L)`` tensor. CUDA (Triton) is not affected.
    """
    head_dim = q.shape[-1]
    if q.device.type != "cpu" or head_dim % 8 or head_dim >= _CPU_SAFE_QK_DIM:
        return q, k
    pad = (0, _CPU_SAFE_QK_DIM - head_dim)
    return F.pad(q, pad), F.pad(k, pad)


def _flex(q, k, v, *, causal, alibi_slopes, scale):
    q_len, k_len = q.shape[2], k.shape[2]
    block_mask, offset = _causal_block_mask(q_len, k_len, q.device)
    if not causal:
        block_mask = None
    score_mod = slopes = None
    if alibi_slopes is not None:
        slopes = alibi_slopes.float().view(-1)  # a new tensor object: marked below, not theirs
        if causal:

            def score_mod(score, batch, head, q_index, k_index):
                return score + slopes[head] * (k_index - (q_index + offset))  # m_h·(j − i)

        else:

            def score_mod(score, batch, head, q_index, k_index):
                return score - slopes[head] * (k_index - (q_index + offset)).abs()  # −m_h·|j − i|

    q, k = _pad_qk_for_cpu(q, k)
    kwargs = {"score_mod": score_mod, "block_mask": block_mask, "scale": scale}
    kwargs["enable_gqa"] = q.shape[1] != k.shape[1]
    if is_compiling():  # inside the caller's compiled model: its compiler fuses this call
        return flex_attention(q, k, v, **kwargs)
    # Only the lengths may become symbolic (decoding changes them at every step): batch, heads,
    # head_dim and the slopes stay fixed in a kernel, and a new value compiles a new one
    # (inductor's CPU kernel does not compile with a symbolic head count in torch 2.13).
    # Views, so that the caller's tensors are not marked.
    q, k, v = (t.view(t.shape) for t in (q, k, v))
    for tensor, dims in ((q, (0, 1, 3)), (k, (0, 1, 3)), (v, (0, 1, 3)), (slopes, (0,))):
        if tensor is not None:
            for dim in dims:
                torch._dynamo.mark_static(tensor, dim)
    try:
        return _compiled_flex_attention()(q, k, v, **kwargs)
    except torch._dynamo.exc.BackendCompilerFailed as error:
        raise RuntimeError(
            f"attention(backend='flex') could not compile FlexAttention for {q.device.type}: "
            "torch.compile needs a working C++ compiler on CPU and Triton on CUDA. "
            "Use backend='sdpa' where neither is available."
        ) from error


def _auto_backend(device_type: str, q_len: int, flex_usable: bool) -> str:
    """What ``backend="auto"`` runs, by what was measured on an H100
    (``benchmarks/results/gpu/h100-2026-11-27``, run 2): FlexAttention for a prompt with ALiBi
    on CUDA (1.1 ms against SDPA's 6.4 ms with a 1 GiB bias at 4k tokens), SDPA for a decoding
    step (0.13–0.35 ms against FlexAttention's 0.21–0.49 ms at 1k–32k keys: its bias is only
    heads × keys, and FlexAttention would build a block mask for every new cache length) and
    on every other device."""
    return "flex" if flex_usable and device_type == "cuda" and q_len > 1 else "sdpa"


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    causal: bool = True,
    alibi_slopes: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    scale: float | None = None,
    backend: str = "auto",
) -> torch.Tensor:
    r"""Scaled dot-product attention with optional ALiBi slopes and additive bias.

    \[
    o_i = \sum_j \operatorname{softmax}_j\!\big(
        s\,q_i^\top k_j + m_h\,(j - i) + B_{ij} + M_{ij}
    \big)\, v_j,
    \qquad s = 1/\sqrt{d}
    \]

    (\(-m_h|j - i|\) instead of \(m_h(j - i)\) when not causal). Query \(i\) sits at key
    position ``k_len - q_len + i``, so a shorter ``q`` is the tail of the sequence (KV-cache
    decoding).

    Backends: ``"sdpa"`` folds ALiBi (`posenc.alibi_bias`), the bias and the causal mask into
    one additive mask of shape ``(1, heads, q_len, k_len)`` (``(batch, ...)`` only when ``bias``
    has a batch dimension), broadcast over the batch by
    `torch.nn.functional.scaled_dot_product_attention`. ``"flex"`` runs FlexAttention compiled
    by `torch.compile` (Triton on CUDA, C++ on CPU): the ALiBi term is computed per score in
    ``score_mod`` and the causal mask skips whole tiles, so no ``(heads, L, L)`` tensor is
    ever built. Its first call compiles (seconds), so does the first call with a new length;
    after that, decoding steps with a growing ``k_len`` reuse the kernel. On CPU, ``q`` and
    ``k`` with head_dim 8 or 16 are padded with zero columns to 24 first: torch 2.13's C++
    kernel computes wrong scores for them at some lengths (e.g. ``k_len`` 40). ``"auto"`` picks
    ``"flex"`` on CUDA with ALiBi, no ``bias`` and more than one query (where FlexAttention
    exists), else ``"sdpa"``: a decoding step's additive mask is only ``heads × k_len``, and on
    an H100 SDPA with it took 0.13–0.35 ms against FlexAttention's 0.21–0.49 ms at 1k–32k keys,
    while for a 4k-token prompt FlexAttention took 1.1 ms against SDPA's 6.4 ms (and a 1 GiB
    bias); ``benchmarks/results/gpu/h100-2026-11-27``, run 2. On the SDPA path the bias and
    mask are cast to ``q.dtype`` (so in bfloat16 a bias of 1000 is rounded to a multiple of 4);
    FlexAttention adds the ALiBi term in float32.

    Args:
        q: Queries ``(batch, heads, q_len, head_dim)``.
        k: Keys ``(batch, kv_heads, k_len, head_dim)``; ``kv_heads`` divides ``heads`` (GQA).
        v: Values ``(batch, kv_heads, k_len, v_dim)``.
        causal: Mask out keys after each query.
        alibi_slopes: Slopes \(m_h\), a floating tensor ``(heads,)`` on ``q``'s device (see
            `posenc.alibi_slopes`).
        bias: Additive floating bias broadcastable to ``(batch, heads, q_len, k_len)``, e.g.
            `posenc.T5RelativeBias`'s ``(heads, q_len, k_len)``.
        scale: Logit scale \(s\), a finite number > 0; default \(1/\sqrt{\mathrm{head\_dim}}\).
        backend: ``"auto"``, ``"sdpa"`` or ``"flex"``.

    Returns:
        The output ``(batch, heads, q_len, v_dim)``, dtype of ``q``.

    Raises:
        TypeError: Non-floating inputs, a non-bool ``causal``, a non-number ``scale``.
        ValueError: Wrong ranks, mismatched shapes, dtypes or devices, no keys, ``q_len > k_len``
            when causal or with ALiBi, slopes of the wrong shape, a bias that does not broadcast, a
            ``scale`` that is not finite and > 0, an unknown ``backend``, or ``"flex"``
            requested with a ``bias`` or without FlexAttention.
        RuntimeError: ``"flex"`` and `torch.compile` cannot build its kernel.
    """
    check_choice("backend", backend, BACKENDS)
    check_bool("causal", causal)
    _check_qkv(q, k, v, causal)
    batch, heads, q_len, head_dim = q.shape
    if alibi_slopes is not None:
        check_floating("alibi_slopes", alibi_slopes, ndim=1)
        if alibi_slopes.shape[0] != heads:
            raise ValueError(
                f"alibi_slopes must have shape ({heads},) (one slope per query head), "
                f"got {tuple(alibi_slopes.shape)}"
            )
        check_on_device("alibi_slopes", alibi_slopes, q.device, "q's")
        if q_len > k.shape[2]:
            raise ValueError(
                f"q_len must be <= k_len ({k.shape[2]}) with alibi_slopes (the queries are the "
                f"last q_len keys), got {q_len}"
            )
    if bias is not None:
        check_floating("bias", bias)
        check_on_device("bias", bias, q.device, "q's")
        target = (batch, heads, q_len, k.shape[2])
        try:
            fits = torch.broadcast_shapes(bias.shape, target) == target
        except RuntimeError:
            fits = False
        if not fits:
            raise ValueError(
                f"bias must broadcast to (batch, heads, q_len, k_len) = {target}, "
                f"got {tuple(bias.shape)}"
            )
    scale = 1.0 / math.sqrt(head_dim) if scale is None else check_number("scale", scale, above=0)
    if q_len == 0:  # no queries: nothing to attend (kernels would divide by zero tiles)
        return q.new_empty(batch, heads, 0, v.shape[-1])
    if backend == "flex" and (bias is not None or flex_attention is None):
        raise ValueError(
            "backend must be 'sdpa' or 'auto' with a bias or without FlexAttention "
            "(torch < 2.5), got 'flex'"
        )
    if backend == "auto":
        flex_usable = alibi_slopes is not None and bias is None and flex_attention is not None
        backend = _auto_backend(q.device.type, q_len, flex_usable)
    if backend == "flex":
        return _flex(q, k, v, causal=causal, alibi_slopes=alibi_slopes, scale=scale)
    return _sdpa(q, k, v, causal=causal, alibi_slopes=alibi_slopes, bias=bias, scale=scale)
