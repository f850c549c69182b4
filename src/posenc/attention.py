r"""Scaled dot-product attention that takes ALiBi slopes or any additive bias.

\[
\mathrm{Attention}(Q, K, V) = \operatorname{softmax}\!\Big(\frac{QK^\top}{\sqrt{d}} + B + M\Big) V,
\]

with \(B\) an additive bias (ALiBi's \(-m_h(i-j)\), T5's bucket bias, ...) and \(M\) the causal
mask (\(-\infty\) above the diagonal). Shapes: ``(batch, heads, seq, head_dim)``.
"""

from __future__ import annotations

import math
from functools import cache

import torch
import torch.nn.functional as F

from ._checks import check_choice, check_floating, is_compiling
from .alibi import alibi_distances

BACKENDS = ("auto", "sdpa", "flex")


try:
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
except ImportError:  # torch < 2.5: no FlexAttention, the SDPA path is used
    create_block_mask = flex_attention = None


@cache
def _compiled_flex_attention():
    # Outside torch.compile, flex_attention runs an unfused reference implementation;
    # compiling it once gives the fused kernel that never materialises the scores.
    return torch.compile(flex_attention, dynamic=False)


def _check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> None:
    for name, tensor in (("q", q), ("k", k), ("v", v)):
        check_floating(name, tensor, ndim=4)
    if k.shape[:3] != v.shape[:3]:
        raise ValueError(
            "k and v must agree in (batch, kv_heads, k_len), "
            f"got {tuple(k.shape)} and {tuple(v.shape)}"
        )
    if q.shape[0] != k.shape[0] or q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must agree in batch and head_dim, got {tuple(q.shape)} and {tuple(k.shape)}"
        )
    if q.shape[1] % k.shape[1]:
        raise ValueError(f"k's heads ({k.shape[1]}) must divide q's heads ({q.shape[1]})")
    if causal and q.shape[2] > k.shape[2]:
        raise ValueError(
            f"q_len ({q.shape[2]}) must be <= k_len ({k.shape[2]}) when causal "
            "(queries are the last q_len keys)"
        )


def _check_slopes(alibi_slopes: torch.Tensor, heads: int) -> None:
    check_floating("alibi_slopes", alibi_slopes, ndim=1)
    if alibi_slopes.shape[0] != heads:
        raise ValueError(
            f"alibi_slopes must have shape ({heads},) (one slope per query head), "
            f"got {tuple(alibi_slopes.shape)}"
        )


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
    q_len, offset = q.shape[2], k_len - q.shape[2]
    mask = None
    if alibi_slopes is not None:
        distance = alibi_distances(q_len, k_len, causal=causal, offset=offset, device=q.device)
        mask = (-alibi_slopes.float()[:, None, None] * distance)[
            None
        ]  # (1, heads, q, k): -m_h·(i−j)
    if bias is not None:
        mask = bias.float() if mask is None else mask + bias.float()
    if causal:
        query_position = torch.arange(q_len, device=q.device)[:, None] + offset
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


def _flex(q, k, v, *, causal, alibi_slopes, scale):
    q_len, k_len = q.shape[2], k.shape[2]
    offset = k_len - q_len
    slopes = alibi_slopes.float()

    def alibi_score_mod(score, batch, head, q_index, k_index):
        distance = q_index + offset - k_index  # i - j, computed per score, never stored
        if not causal:
            distance = distance.abs()
        return score - slopes[head] * distance

    block_mask = None
    if causal:

        def causal_mask(batch, head, q_index, k_index):
            return q_index + offset >= k_index

        block_mask = create_block_mask(causal_mask, None, None, q_len, k_len, device=q.device)
    run = flex_attention if is_compiling() or q.device.type == "cpu" else _compiled_flex_attention()
    return run(
        q, k, v, score_mod=alibi_score_mod, block_mask=block_mask, scale=scale,
        enable_gqa=q.shape[1] != k.shape[1],
    )  # fmt: skip


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
        s\,q_i^\top k_j - m_h\,(i - j) + B_{ij} + M_{ij}
    \big)\, v_j,
    \qquad s = 1/\sqrt{d}
    \]

    (\(|i - j|\) instead of \(i - j\) when not causal). Query \(i\) sits at key position
    ``k_len - q_len + i``, so a shorter ``q`` is the tail of the sequence (KV-cache decoding).

    Backends: ``"sdpa"`` folds ALiBi, the bias and the causal mask into one additive mask of shape
    ``(1, heads, q_len, k_len)`` (``(batch, ...)`` only when ``bias`` has a batch dimension),
    broadcast over the batch by `torch.nn.functional.scaled_dot_product_attention`. ``"flex"``
    adds the ALiBi term inside FlexAttention's ``score_mod``, so no ``(heads, L, L)`` tensor is
    ever built. ``"auto"`` picks ``"flex"`` on CUDA with ALiBi and no ``bias`` (where FlexAttention
    exists), else ``"sdpa"``.

    Args:
        q: Queries ``(batch, heads, q_len, head_dim)``.
        k: Keys ``(batch, kv_heads, k_len, head_dim)``; ``kv_heads`` divides ``heads`` (GQA).
        v: Values ``(batch, kv_heads, k_len, v_dim)``.
        causal: Mask out keys after each query.
        alibi_slopes: Slopes \(m_h\), shape ``(heads,)`` (see `posenc.alibi_slopes`).
        bias: Additive bias broadcastable to ``(batch, heads, q_len, k_len)``.
        scale: Logit scale \(s\); default \(1/\sqrt{\mathrm{head\_dim}}\).
        backend: ``"auto"``, ``"sdpa"`` or ``"flex"``.

    Returns:
        The output ``(batch, heads, q_len, v_dim)``, dtype of ``q``.

    Raises:
        TypeError: Non-floating inputs.
        ValueError: Wrong ranks or mismatched shapes, ``q_len > k_len`` when causal, slopes of the
            wrong shape, a bias that does not broadcast, an unknown ``backend``, or ``"flex"``
            requested with a ``bias`` or without FlexAttention.
    """
    check_choice("backend", backend, BACKENDS)
    _check_qkv(q, k, v, causal)
    batch, heads, q_len, head_dim = q.shape
    if alibi_slopes is not None:
        _check_slopes(alibi_slopes, heads)
    if bias is not None:
        check_floating("bias", bias)
        try:
            torch.broadcast_shapes(bias.shape, (batch, heads, q_len, k.shape[2]))
        except RuntimeError:
            raise ValueError(
                f"bias must broadcast to (batch, heads, q_len, k_len) = "
                f"{(batch, heads, q_len, k.shape[2])}, got {tuple(bias.shape)}"
            ) from None
    scale = 1.0 / math.sqrt(head_dim) if scale is None else scale
    flex_usable = alibi_slopes is not None and bias is None and flex_attention is not None
    if backend == "flex" and not flex_usable:
        raise ValueError(
            "backend 'flex' needs alibi_slopes, no bias and a torch with FlexAttention; "
            "use backend='sdpa' otherwise"
        )
    if backend == "flex" or (backend == "auto" and flex_usable and q.device.type == "cuda"):
        return _flex(q, k, v, causal=causal, alibi_slopes=alibi_slopes, scale=scale)
    return _sdpa(q, k, v, causal=causal, alibi_slopes=alibi_slopes, bias=bias, scale=scale)
