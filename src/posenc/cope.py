r"""CoPE: contextual position encoding (Golovneva, Wang, Weston & Sukhbaatar, 2024).

Positions are counted, not indexed: query \(i\) gives each key \(t\) a gate
\(g_{it} = \sigma(s_{it})\) from its attention logit \(s_{it} = q_i \cdot k_t / \sqrt{d}\), and
the position of key \(j\) seen from query \(i\) is the sum of the gates from \(j\) up to \(i\),

\[
p_{ij} = \sum_{t=j}^{i} g_{it},
\]

a fractional count of the keys the head "counts" (words, sentences, ...). Position \(p\)
has an embedding \(e[p]\), interpolated between the learned \(e[\lfloor p \rfloor]\) and
\(e[\lceil p \rceil]\), and the logit gains \(q_i \cdot e[p_{ij}]\). Computing
\(q_i \cdot e[n]\) for the integers \(n\) once and interpolating those numbers costs one
matrix product per query instead of one embedding per query and key.

Checked against the authors' release, facebookresearch/RAM
``projects/cope/src/cope/context_position.py`` (class ``ContextPosSelfAttn``, read at commit
``e6f051fbcfaef4cab69bf2ea1b25f500f94c0c64``, the file last changed in ``eff93c7``): gates
\(\sigma(q \cdot k / \sqrt{d})\) times the 0/1 mask, positions by a reversed cumulative sum,
clamped to ``npos - 1`` (``npos`` = block size + 1 by default, since position 0 is
possible), the table ``pos_emb`` of shape ``(1, head_dim, npos)`` initialised to zeros, and
the interpolation weight \(p - \lfloor p \rfloor\) (differentiable; the indices are not).
That layer adds the position term before dividing by \(\sqrt{d}\):
\((q \cdot k + q \cdot e[p]) / \sqrt{d}\). The listing printed in the paper (classes
``CoPE`` and ``SelfAttn``) adds it to the already divided logits, \(q \cdot k/\sqrt{d} +
q \cdot e[p]\); the two differ by a factor \(\sqrt{d}\) on the learned table. `CoPE` returns
the term \(q \cdot e[p]\) itself, so either form is one line (see its docstring).
"""

from __future__ import annotations

import torch
from torch import nn

from ._checks import check_bool, check_floating, check_int, check_on_device, resolve_lengths


def cope_positions(scores: torch.Tensor, *, causal: bool = True) -> torch.Tensor:
    r"""Contextual positions \(p_{ij} = \sum_{t \ge j} g_{it}\), \(g_{it} = \sigma(s_{it})\).

    With ``causal=True`` the gates of keys after the query are 0, so the sum runs from \(j\)
    to \(i\); the queries are the last ``q_len`` of the ``k_len`` keys (query row \(r\) sits
    at position ``k_len - q_len + r``). A logit of \(-\infty\) (a masked key) has gate 0 as
    well. When all gates are 1 the position is the number of keys from \(j\) to \(i\),
    \(i - j + 1\).

    Args:
        scores: Gate logits ``(..., q_len, k_len)``, floating: in the paper and its code the
            attention logits \(q \cdot k/\sqrt{d}\).
        causal: Zero the gates of keys after the query.

    Returns:
        Positions, shaped like ``scores``; float32 for half-precision ``scores`` (bfloat16
        cannot hold every integer above 256), else ``scores``' dtype.

    Raises:
        TypeError: ``scores`` is not a floating tensor, ``causal`` not a bool.
        ValueError: ``scores`` has fewer than 2 dimensions, or more queries than keys when
            causal.
    """
    check_floating("scores", scores)
    check_bool("causal", causal)
    if scores.ndim < 2:
        raise ValueError(
            f"scores must have at least 2 dimensions (..., q_len, k_len), got shape "
            f"{tuple(scores.shape)}"
        )
    if scores.dtype in (torch.float16, torch.bfloat16):
        scores = scores.float()
    gates = torch.sigmoid(scores)
    if causal:
        q_len, k_len, offset = resolve_lengths(scores.shape[-2], scores.shape[-1], None)
        query = torch.arange(offset, offset + q_len, device=scores.device)[:, None]
        seen = torch.arange(k_len, device=scores.device)[None, :] <= query  # j <= i
        gates = gates * seen  # as the released code: gates times the 0/1 mask
    # p_ij = g_ij + g_i,j+1 + ...: a cumulative sum from the last key backwards
    return gates.flip(-1).cumsum(dim=-1).flip(-1)


def cope_logits(q: torch.Tensor, positions: torch.Tensor, pos_emb: torch.Tensor) -> torch.Tensor:
    r"""The position term \(q_i \cdot e[p_{ij}]\), with \(e[p]\) interpolated linearly.

    \(e[p] = (1 - w)\,e[\lfloor p \rfloor] + w\,e[\lceil p \rceil]\), \(w = p - \lfloor p
    \rfloor\), for positions clamped to the last row of the table, as the released code
    does. The products \(q_i \cdot e[n]\) for every integer \(n\) are computed first and
    interpolated, which gives the same numbers up to rounding.

    Args:
        q: Queries ``(..., q_len, head_dim)``, floating.
        positions: `cope_positions` ``(..., q_len, k_len)``, with ``q``'s leading dimensions.
        pos_emb: The table ``(head_dim, num_positions)`` (the released ``pos_emb[0]``).

    Returns:
        A ``(..., q_len, k_len)`` tensor in ``q``'s dtype.

    Raises:
        TypeError: A non-floating argument.
        ValueError: Shapes that do not match, or arguments on different devices.
    """
    check_floating("q", q)
    check_floating("positions", positions)
    check_floating("pos_emb", pos_emb, ndim=2)
    if q.ndim < 2 or positions.shape[:-1] != q.shape[:-1]:
        raise ValueError(
            f"positions must have q's leading dimensions {tuple(q.shape[:-1])} (..., q_len, "
            f"k_len), got shape {tuple(positions.shape)}"
        )
    if pos_emb.shape[0] != q.shape[-1]:
        raise ValueError(
            f"pos_emb.shape[0] must equal q's head_dim ({q.shape[-1]}), got {pos_emb.shape[0]}"
        )
    check_on_device("positions", positions, q.device, "q's")
    check_on_device("pos_emb", pos_emb, q.device, "q's")
    positions = positions.clamp(max=pos_emb.shape[1] - 1)
    at_integers = torch.matmul(q, pos_emb)  # q·e[n] for n = 0 .. num_positions - 1
    ceil, floor = positions.ceil().long(), positions.floor().long()  # no gradient here
    weight = positions - floor  # ... but through the weight
    term = at_integers.gather(-1, ceil) * weight + at_integers.gather(-1, floor) * (1 - weight)
    return term.to(q.dtype)


class CoPE(nn.Module):
    r"""CoPE's learned position table \(e[0], \dots, e[P - 1]\) and the term it adds.

    ``module(q, scores)`` returns \(q_i \cdot e[p_{ij}]\) for the logits ``scores``
    \(= q \cdot k/\sqrt{d}\) (`cope_positions`, then `cope_logits`). The paper's listing
    adds it as it is, ``scores + module(q, scores)``; the authors' repository divides it by
    \(\sqrt{d}\) too, ``scores + module(q, scores) / math.sqrt(head_dim)``. Apply the causal
    mask after adding (`posenc.attention` with ``bias=`` and ``causal=True`` does).

    Args:
        head_dim: Channels per head.
        num_positions: Rows \(P\) of the table; positions are clamped to \(P - 1\) (the
            released default is the block size + 1).

    Attributes:
        pos_emb: Parameter ``(head_dim, num_positions)``, initialised to zeros as released
            (there ``(1, head_dim, num_positions)``), shared by the heads.
    """

    def __init__(self, head_dim: int, num_positions: int) -> None:
        super().__init__()
        self.head_dim = check_int("head_dim", head_dim, minimum=1)
        self.num_positions = check_int("num_positions", num_positions, minimum=1)
        self.pos_emb = nn.Parameter(torch.zeros(head_dim, num_positions))

    def forward(
        self, q: torch.Tensor, scores: torch.Tensor, *, causal: bool = True
    ) -> torch.Tensor:
        r"""The term \(q_i \cdot e[p_{ij}]\) ``(batch, heads, q_len, k_len)``.

        Args:
            q: Queries ``(batch, heads, q_len, head_dim)``.
            scores: Attention logits ``(batch, heads, q_len, k_len)``, ``q_len <= k_len``
                (the queries are the last keys).
            causal: Count only keys up to the query (see `cope_positions`).

        Returns:
            A tensor shaped like ``scores``, in ``q``'s dtype.

        Raises:
            TypeError: Non-floating ``q`` or ``scores``, ``causal`` not a bool.
            ValueError: Wrong ranks or shapes, another device.
        """
        check_floating("q", q, ndim=4)
        check_floating("scores", scores, ndim=4)
        return cope_logits(q, cope_positions(scores, causal=causal), self.pos_emb)

    def extra_repr(self) -> str:
        return f"head_dim={self.head_dim}, num_positions={self.num_positions}"
