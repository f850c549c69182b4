r"""Position ids at inference time: padded batches, packed documents, evicted caches.

A model that encodes position (RoPE, learned tables, sinusoids) needs one integer per token,
its position id. ``torch.arange(seq_len)`` is right for one unpadded sequence and wrong as
soon as the sequence index and the position part ways:

- **left padding** (batched generation): the first real token of a padded row sits at index
  ``pads`` but must get position 0. Positions come from the attention mask,
  `positions_from_mask`.
- **packing** (several documents in one row): positions restart at 0 for every document
  (`packed_positions`), and a block-diagonal causal mask keeps documents apart
  (`document_ids`, `document_causal_mask`).
- **eviction** (a sliding-window cache with attention sinks, StreamingLLM): the tokens kept
  in the cache get consecutive positions again (`sink_window_keep`, then
  `positions_from_mask` on what is kept), and keys cached *after* RoPE are turned back by the
  shift, `rerotate`.

Shapes: masks and positions ``(batch, seq)`` (or ``(seq,)``), keys
``(batch, heads, seq, head_dim)``. No function here reads tensor values on an accelerator
(no host-device synchronisation); value checks run on CPU tensors only.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import torch

from ._checks import (
    check_choice,
    check_floating,
    check_int,
    check_integer_tensor,
    check_tensor,
    values_checkable,
)
from .rope import LAYOUTS, apply_rotary


def _check_mask(name: str, mask: object) -> torch.Tensor:
    # A 0/1 mask: bool, or integers holding only 0 and 1 (checked where reading is free).
    mask = check_tensor(name, mask, ndim=(1, 2))
    if mask.dtype != torch.bool:
        check_integer_tensor(name, mask)
        if values_checkable(mask) and mask.numel() and bool(((mask != 0) & (mask != 1)).any()):
            raise ValueError(f"{name} must hold only 0 and 1, got values {mask.unique().tolist()}")
    return mask


def positions_from_mask(attention_mask: torch.Tensor, *, pad_position: int = 0) -> torch.Tensor:
    r"""Position ids from an attention mask: each kept token's rank among the kept tokens.

    \[
    p_t = \Big(\sum_{s \le t} m_s\Big) - 1 \quad \text{where } m_t = 1,
    \qquad p_t = \text{pad\_position} \quad \text{where } m_t = 0 .
    \]

    With left padding this gives the first real token of every row position 0, whatever the
    number of pads. Applied to the "kept" mask of an evicted cache it gives StreamingLLM's
    positions within the cache (cache ``[0, 1, 2, 3, 6, 7, 8]`` → ``[0, 1, ..., 6]``).
    Hugging Face transformers computes the same in ``generate`` (pads get 0 in 5.x, 1 in 4.x;
    masked tokens are never attended to, so the value does not change any output).

    Args:
        attention_mask: ``(batch, seq)`` or ``(seq,)``, bool or integer 0/1 (1 = real token).
        pad_position: The id given to masked tokens; an int >= 0.

    Returns:
        int64 positions, same shape as ``attention_mask``.

    Raises:
        TypeError: ``attention_mask`` is not a bool or integer tensor.
        ValueError: ``attention_mask`` has another rank, or values other than 0 and 1.
    """
    mask = _check_mask("attention_mask", attention_mask)
    check_int("pad_position", pad_position)
    kept = mask.long()
    positions = kept.cumsum(-1) - 1  # rank among the kept tokens: Σ_{s≤t} m_s − 1
    return positions.masked_fill(kept == 0, pad_position)


def packed_positions(lengths: Sequence[int], *, start: int = 0) -> torch.Tensor:
    r"""Position ids of documents packed into one row: \(0, 1, \dots, n_j - 1\) per document.

    Document \(j\) of length \(n_j\) gets \(\text{start}, \dots, \text{start} + n_j - 1\), as
    transformers' ``DataCollatorWithFlattening`` writes them (``position_ids_start``).

    Args:
        lengths: Document lengths, a list or tuple of ints >= 1 (Python ints: the output size
            depends on them, so a tensor of lengths would have to be read on the host).
        start: The first position of every document; 0 for RoPE models (RoBERTa-like learned
            tables start at 2).

    Returns:
        int64 tensor ``(sum(lengths),)``.

    Raises:
        TypeError: ``lengths`` is not a list or tuple of ints.
        ValueError: ``lengths`` is empty or holds a length < 1.
    """
    if isinstance(lengths, str | bytes | torch.Tensor) or not isinstance(lengths, Sequence):
        raise TypeError(
            f"lengths must be a list or tuple of ints >= 1, got {type(lengths).__name__}"
        )
    if not lengths:
        raise ValueError("lengths must hold at least one document length, got an empty list")
    sizes = [check_int(f"lengths[{j}]", n, minimum=1) for j, n in enumerate(lengths)]
    check_int("start", start)
    return torch.cat([torch.arange(start, start + n) for n in sizes])


def document_ids(positions: torch.Tensor) -> torch.Tensor:
    r"""Which packed document each token belongs to, read from the position ids.

    A new document starts wherever a position is not its predecessor's plus one:

    \[
    \mathrm{doc}_t = \#\{\, s \le t : p_s \ne p_{s-1} + 1 \,\}, \qquad
    \mathrm{doc}_0 = 0 .
    \]

    This is the rule transformers uses to build the mask of a packed row
    (``find_packed_sequence_indices``). It needs no host read, so it also runs on an
    accelerator and under `torch.compile`.

    Args:
        positions: Integer position ids ``(batch, seq)`` or ``(seq,)``.

    Returns:
        int64 document indices, same shape, 0 for the first document of each row.

    Raises:
        TypeError: ``positions`` is not an integer tensor.
        ValueError: ``positions`` has another rank or an empty last dimension.
    """
    positions = check_integer_tensor("positions", positions, ndim=(1, 2))
    if positions.shape[-1] == 0:
        raise ValueError("positions must have at least one token, got shape (…, 0)")
    previous = torch.cat((positions[..., :1] - 1, positions[..., :-1]), dim=-1)
    starts = positions != previous + 1  # p_t ≠ p_{t−1} + 1 (never true at t = 0)
    return starts.long().cumsum(-1)


def document_causal_mask(documents: torch.Tensor) -> torch.Tensor:
    r"""Block-diagonal causal mask of packed documents: True where query \(i\) may see key \(j\).

    \[
    M_{ij} = [\, j \le i \,] \wedge [\, \mathrm{doc}_i = \mathrm{doc}_j \,] .
    \]

    Args:
        documents: Integer document index per token, ``(batch, seq)`` or ``(seq,)``
            (`document_ids`, or transformers' ``seq_idx``).

    Returns:
        bool mask ``(batch, 1, seq, seq)`` (or ``(seq, seq)`` for a 1-D input), broadcastable
        over heads; pass ``~mask`` filled with \(-\infty\) as an additive bias.

    Raises:
        TypeError: ``documents`` is not an integer tensor.
        ValueError: ``documents`` has another rank.
    """
    documents = check_integer_tensor("documents", documents, ndim=(1, 2))
    seq = documents.shape[-1]
    causal = torch.ones(seq, seq, dtype=torch.bool, device=documents.device).tril()  # j ≤ i
    same = documents[..., :, None] == documents[..., None, :]  # doc_i = doc_j
    mask = causal & same
    return mask if documents.ndim == 1 else mask[:, None]


def sink_window_keep(seq_len: int, *, sinks: int, window: int) -> torch.Tensor:
    r"""Which tokens a cache with ``sinks`` first tokens and a ``window`` of recent ones keeps.

    Token \(t\) of \(0, \dots, L-1\) is kept if \(t < S\) or \(t \ge L - W\) (StreamingLLM's
    attention sinks plus a rolling window). While \(L \le S + W\) every token is kept.

    Args:
        seq_len: Tokens seen so far \(L\); an int >= 0.
        sinks: First tokens always kept \(S\) (StreamingLLM uses 4); an int >= 0.
        window: Most recent tokens kept \(W\); an int >= 1.

    Returns:
        bool tensor ``(seq_len,)``; `positions_from_mask` of it gives the positions within the
        cache.

    Raises:
        TypeError, ValueError: An argument is not an int of the allowed range.
    """
    seq_len = check_int("seq_len", seq_len)
    sinks = check_int("sinks", sinks)
    window = check_int("window", window, minimum=1)
    t = torch.arange(seq_len)
    return (t < sinks) | (t >= seq_len - window)


def rerotate(
    k: torch.Tensor,
    delta: int | torch.Tensor,
    inv_freq: torch.Tensor,
    *,
    layout: str = "half",
) -> torch.Tensor:
    r"""Move keys that were cached *after* RoPE from position \(p\) to \(p - \Delta\).

    A rotation by \(-\Delta\) composes exactly with the one the key already carries:

    \[
    R(-\Delta\,\theta_i)\, R(p\,\theta_i) = R\big((p - \Delta)\,\theta_i\big),
    \]

    so ``rerotate(R_p k, Δ)`` equals the key rotated at \(p - \Delta\) from scratch, without
    the unrotated key (up to rounding: each call rounds once more in the key's dtype, so
    re-rotating a bfloat16 cache by 1 at every step accumulates error, while one call by the
    whole shift does not). Only the first ``2 * len(inv_freq)`` dimensions turn (partial
    rotary); the rest pass through. No attention factor is applied: a YaRN key keeps the one it
    got when it was first rotated.

    Args:
        k: Rotated keys ``(batch, heads, seq, head_dim)`` (any leading dims), floating point.
        delta: The shift \(\Delta\): an int, or an integer tensor broadcastable to
            ``(batch, seq)`` (one shift per key, e.g. positions before minus positions after
            an eviction). Positive moves keys back (toward 0).
        inv_freq: The frequencies \(\theta_i\) the keys were rotated with, ``(rotary_dim // 2,)``.
        layout: ``"half"`` or ``"interleaved"``, as when the keys were rotated.

    Returns:
        Keys rotated by \(-\Delta\), same shape and dtype as ``k``.

    Raises:
        TypeError: ``k`` not floating, ``delta`` neither an int nor an integer tensor,
            ``inv_freq`` not floating.
        ValueError: Unknown ``layout``, ``inv_freq`` too wide for ``k``, ``delta`` of a shape
            that does not broadcast, or on another device.
    """
    check_choice("layout", layout, LAYOUTS)
    k = check_floating("k", k)
    if k.ndim < 2:
        raise ValueError(
            f"k must have at least 2 dimensions (seq, head_dim), got shape {tuple(k.shape)}"
        )
    inv_freq = check_floating("inv_freq", inv_freq, ndim=1)
    if 2 * inv_freq.shape[0] > k.shape[-1] or inv_freq.shape[0] == 0:
        raise ValueError(
            f"inv_freq must have between 1 and k.shape[-1] // 2 ({k.shape[-1] // 2}) entries, "
            f"got {inv_freq.shape[0]}"
        )
    if inv_freq.device != k.device:
        raise ValueError(f"inv_freq must be on k's device ({k.device}), got {inv_freq.device}")
    if isinstance(delta, bool) or not isinstance(delta, numbers.Integral | torch.Tensor):
        raise TypeError(
            f"delta must be an int or an integer tensor, got {type(delta).__name__} {delta!r}"
        )
    if isinstance(delta, torch.Tensor):
        check_integer_tensor("delta", delta, ndim=(0, 1, 2))
        if delta.device != k.device:
            raise ValueError(f"delta must be on k's device ({k.device}), got {delta.device}")
        seq = k.shape[-2]
        if delta.ndim >= 1 and delta.shape[-1] not in (1, seq):
            raise ValueError(
                f"delta.shape[-1] must be 1 or k's seq ({seq}), got shape {tuple(delta.shape)}"
            )
        if delta.ndim == 2 and k.ndim >= 4 and delta.shape[0] not in (1, k.shape[0]):
            raise ValueError(
                f"delta.shape[0] must be 1 or k's batch ({k.shape[0]}), "
                f"got shape {tuple(delta.shape)}"
            )
        shift = -delta
    else:
        shift = torch.tensor(-int(delta), device=k.device)
    # angles (−Δ)·θ_i in float32, as for any position: R(−Δθ_i) applied to R(pθ_i)k
    angles = shift.float()[..., None] * inv_freq.float()
    if layout == "half":
        angles = torch.cat((angles, angles), dim=-1)  # pair i is dimensions (i, i + d/2)
    else:
        angles = angles.repeat_interleave(2, dim=-1)  # pair i is dimensions (2i, 2i + 1)
    cos, sin = angles.cos(), angles.sin()
    if shift.ndim == 2 and k.ndim >= 4:
        cos, sin = cos.unsqueeze(-3), sin.unsqueeze(-3)  # (batch, 1, seq, rotary_dim): over heads
    return apply_rotary(k, cos, sin, layout=layout)
