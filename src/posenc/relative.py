r"""Relative position encodings: T5's bucketed bias and Shaw et al.'s clipped embeddings.

Both depend only on the relative position \(r = j - i\) of key \(j\) and query \(i\) (key minus
query, the T5 convention, used everywhere in posenc).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ._checks import check_bool, check_device, check_int, check_integer_tensor, resolve_lengths


def relative_positions(
    q_len: int,
    k_len: int | None = None,
    *,
    offset: int | None = None,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    r"""Matrix \(r_{ij} = j - (i + \mathrm{offset})\) of shape ``(q_len, k_len)``.

    Query \(i\) sits at position ``offset + i``, key \(j\) at position \(j\). Given one of
    ``k_len`` and ``offset``, the other follows from "the queries are the last ``q_len`` keys"
    (``k_len = offset + q_len``); given neither, ``k_len = q_len`` and ``offset = 0``.

    Args:
        q_len: Number of queries.
        k_len: Number of keys.
        offset: Position of the first query (tokens already in a KV cache).
        device: Device of the result.

    Returns:
        An int64 tensor ``(q_len, k_len)``; negative entries are keys before the query.

    Raises:
        TypeError: A length or the offset is not an int.
        ValueError: A negative length or offset, or ``q_len > k_len`` without an offset.
    """
    q_len, k_len, offset = resolve_lengths(q_len, k_len, offset)
    device = check_device("device", device)
    query_position = torch.arange(q_len, device=device)[:, None] + offset
    key_position = torch.arange(k_len, device=device)[None, :]
    return key_position - query_position  # r = j - i


def t5_relative_bucket(
    relative_position: torch.Tensor,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> torch.Tensor:
    r"""T5's bucket index for each relative position \(r = j - i\).

    With \(B\) buckets per direction (\(B\) = ``num_buckets``, halved when bidirectional) and
    \(E = B/2\) exact buckets, a distance \(n\) (\(|r|\), or \(\max(-r, 0)\) when causal) maps to

    \[
    b(n) = \begin{cases}
      n & n < E \\
      \min\!\Big(B - 1,\;
        E + \Big\lfloor \dfrac{\ln(n/E)}{\ln(\mathrm{max\_distance}/E)}\,(B - E) \Big\rfloor\Big)
        & n \ge E
    \end{cases}
    \]

    and, when bidirectional, keys after the query (\(r > 0\)) use buckets \(B \dots 2B-1\).

    Args:
        relative_position: Integer tensor of \(j - i\), any shape.
        bidirectional: Encoder-style (both directions) or decoder-style (past only).
        num_buckets: Total number of buckets; at least 2 (4 when bidirectional), even when
            bidirectional.
        max_distance: Every distance \(n \ge\) ``max_distance`` falls in the last bucket, which
            starts earlier (with T5's 32 buckets and 128: at \(n = 91\) bidirectional, 113
            causal); greater than the number of exact buckets.

    Returns:
        An int64 tensor of bucket indices in \([0, \mathrm{num\_buckets})\), shaped like the input.

    Raises:
        TypeError: ``relative_position`` is not an integer tensor, or ``bidirectional`` not a
            bool.
        ValueError: Bucket counts or ``max_distance`` out of range.
    """
    _check_buckets(bidirectional, num_buckets, max_distance)
    check_integer_tensor("relative_position", relative_position)
    relative_position = relative_position.long()
    if bidirectional:
        num_buckets //= 2
        direction_bucket = (relative_position > 0).long() * num_buckets  # later keys: upper half
        distance = relative_position.abs()
    else:
        direction_bucket = torch.zeros_like(relative_position)
        distance = (-relative_position).clamp(min=0)  # later keys are masked anyway: distance 0
    max_exact = num_buckets // 2
    # E + ln(n/E) / ln(max_distance/E) * (B - E); the clamp keeps log() finite where n < E
    # (those entries take the exact branch below).
    log_ratio = torch.log(distance.clamp(min=max_exact).float() / max_exact)
    log_bucket = (
        max_exact
        + (log_ratio / math.log(max_distance / max_exact) * (num_buckets - max_exact)).long()
    )
    log_bucket = log_bucket.clamp(max=num_buckets - 1)
    return direction_bucket + torch.where(distance < max_exact, distance, log_bucket)


def _check_buckets(bidirectional: bool, num_buckets: int, max_distance: int) -> None:
    check_bool("bidirectional", bidirectional)
    minimum = 4 if bidirectional else 2
    check_int("num_buckets", num_buckets, minimum=minimum)
    if bidirectional and num_buckets % 2:
        raise ValueError(f"num_buckets must be even when bidirectional, got {num_buckets}")
    max_exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
    check_int("max_distance", max_distance, minimum=max_exact + 1)


class T5RelativeBias(nn.Module):
    r"""T5's learned per-head bias \(b_h(\mathrm{bucket}(j - i))\), added to attention logits.

    Args:
        num_heads: Number of attention heads (one bias per head and bucket).
        bidirectional: ``True`` for an encoder, ``False`` for a decoder.
        num_buckets: Number of buckets (T5: 32).
        max_distance: Distances from here on share the last bucket (T5: 128; see
            `t5_relative_bucket`).

    Attributes:
        weight: The bias table, shape ``(num_buckets, num_heads)`` (T5's
            ``relative_attention_bias.weight``).
    """

    def __init__(
        self,
        num_heads: int,
        *,
        bidirectional: bool = True,
        num_buckets: int = 32,
        max_distance: int = 128,
    ) -> None:
        super().__init__()
        _check_buckets(bidirectional, num_buckets, max_distance)
        self.num_heads = check_int("num_heads", num_heads, minimum=1)
        self.bidirectional = bidirectional
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.weight = nn.Parameter(torch.empty(num_buckets, num_heads))
        nn.init.normal_(self.weight, std=num_heads**-0.5)

    def forward(
        self, q_len: int, k_len: int | None = None, *, offset: int | None = None
    ) -> torch.Tensor:
        r"""Bias for queries ``offset .. offset + q_len - 1`` and keys ``0 .. k_len - 1``.

        Args:
            q_len: Number of queries.
            k_len: Number of keys (default ``offset + q_len``: the keys seen so far).
            offset: Position of the first query (for cached decoding, the cache length);
                default ``k_len - q_len`` (see `relative_positions`).

        Returns:
            A ``(num_heads, q_len, k_len)`` tensor, on the device and in the dtype of
            ``weight``; `posenc.attention` broadcasts it over the batch.

        Raises:
            TypeError: A length or the offset is not an int.
            ValueError: A negative length or offset, or ``q_len > k_len`` without an offset.
        """
        relative = relative_positions(q_len, k_len, offset=offset, device=self.weight.device)
        buckets = t5_relative_bucket(
            relative,
            bidirectional=self.bidirectional,
            num_buckets=self.num_buckets,
            max_distance=self.max_distance,
        )
        bias = self.weight[buckets]  # (q_len, k_len, heads)
        return bias.permute(2, 0, 1)  # (heads, q_len, k_len)

    def extra_repr(self) -> str:
        return (
            f"num_heads={self.num_heads}, bidirectional={self.bidirectional}, "
            f"num_buckets={self.num_buckets}, max_distance={self.max_distance}"
        )


class ShawRelativeEmbedding(nn.Module):
    r"""Shaw et al. (2018) relative embeddings, clipped at distance \(K\):

    \[
    a_{ij} = w_{\operatorname{clip}(j - i,\, -K,\, K)}, \qquad
    w_{-K}, \dots, w_K \in \mathbb{R}^{d}.
    \]

    Args:
        max_relative_position: The clipping distance \(K \ge 1\).
        dim: Embedding width \(d\) (usually the head dimension).

    Attributes:
        weight: The table of \(2K + 1\) vectors, row \(r + K\) for relative position \(r\).
    """

    def __init__(self, max_relative_position: int, dim: int) -> None:
        super().__init__()
        self.max_relative_position = check_int(
            "max_relative_position", max_relative_position, minimum=1
        )
        self.dim = check_int("dim", dim, minimum=1)
        self.weight = nn.Parameter(torch.empty(2 * max_relative_position + 1, dim))
        nn.init.xavier_uniform_(self.weight)

    def forward(
        self, q_len: int, k_len: int | None = None, *, offset: int | None = None
    ) -> torch.Tensor:
        r"""\(a_{ij}\) for queries ``offset .. offset + q_len - 1``, keys ``0 .. k_len - 1``.

        Args:
            q_len: Number of queries.
            k_len: Number of keys (default ``offset + q_len``).
            offset: Position of the first query (default ``k_len - q_len``, see
                `relative_positions`).

        Returns:
            A ``(q_len, k_len, dim)`` tensor.

        Raises:
            TypeError: A length or the offset is not an int.
            ValueError: A negative length or offset, or ``q_len > k_len`` without an offset.
        """
        relative = relative_positions(q_len, k_len, offset=offset, device=self.weight.device)
        limit = self.max_relative_position
        return self.weight[relative.clamp(-limit, limit) + limit]  # row clip(j-i, -K, K) + K

    def extra_repr(self) -> str:
        return f"max_relative_position={self.max_relative_position}, dim={self.dim}"
