r"""Learned absolute position embeddings (BERT, GPT-2).

A trainable table \(E \in \mathbb{R}^{P \times d}\).

Position \(p\) adds row \(E_p\) to the token embedding; there is no row for \(p \ge P\), so the
model cannot run past the length it was trained with.
"""

from __future__ import annotations

import torch
from torch import nn

from ._checks import (
    check_floating,
    check_int,
    check_positions,
    check_sequence_positions,
    is_compiling,
    values_checkable,
)


class LearnedPositionalEmbedding(nn.Module):
    r"""A trainable table of ``max_positions`` position vectors, added to ``x``: \(x_p + E_p\).

    Reading past the table raises a `ValueError` naming ``max_positions`` rather than failing
    with an index error (or, worse, wrapping around).

    Args:
        max_positions: Number of rows \(P\); positions must lie in \([0, P)\).
        dim: Embedding width \(d\).

    Attributes:
        weight: The table, shape ``(max_positions, dim)``, initialised \(\mathcal{N}(0, 0.02^2)\):
            Hugging Face's default for embeddings (``initializer_range = 0.02``, also GPT-2's
            ``wpe`` there). OpenAI's GPT-2 code initialised its position table with standard
            deviation 0.01 (0.02 is its token table's).
    """

    def __init__(self, max_positions: int, dim: int) -> None:
        super().__init__()
        self.max_positions = check_int("max_positions", max_positions, minimum=1)
        self.dim = check_int("dim", dim, minimum=1)
        self.weight = nn.Parameter(torch.empty(max_positions, dim))
        nn.init.normal_(self.weight, std=0.02)

    def embeddings(self, positions: torch.Tensor) -> torch.Tensor:
        r"""Rows \(E_p\) for integer ``positions`` of any shape -> ``(*positions.shape, dim)``.

        Raises:
            TypeError: ``positions`` is not an integer tensor.
            ValueError: A position is negative or \(\ge\) ``max_positions`` (checked on CPU
                tensors; on accelerators an out-of-range index fails asynchronously instead,
                so that no host-device synchronisation is needed).
        """
        check_positions("positions", positions)
        if values_checkable(positions) and positions.numel():
            largest = int(positions.max())
            if largest >= self.max_positions:
                raise ValueError(
                    f"positions must be < max_positions ({self.max_positions}) (the table has no "
                    f"row past it), got position {largest}"
                )
        elif not is_compiling() and positions.numel():
            # Queued on the device, no sync; a failure surfaces at the next synchronisation.
            torch._assert_async(
                positions.max() < self.max_positions,
                f"positions must be < max_positions ({self.max_positions})",
            )
        return self.weight[positions]

    def forward(
        self, x: torch.Tensor, positions: torch.Tensor | None = None, *, offset: int = 0
    ) -> torch.Tensor:
        r"""Return \(x + E_p\).

        Args:
            x: Embeddings of shape ``(batch, seq, dim)``.
            positions: Integer positions ``(seq,)`` or ``(batch, seq)``; default
                ``offset, ..., offset + seq - 1``.
            offset: First position when ``positions`` is None (tokens already in a KV cache);
                0 with ``positions``.

        Returns:
            A tensor shaped like ``x``.

        Raises:
            TypeError: ``x`` is not floating, or ``positions`` is not an integer tensor.
            ValueError: Wrong shapes or devices, a position past ``max_positions``, or an
                ``offset`` together with ``positions``.
        """
        check_floating("x", x, ndim=3)
        if x.shape[-1] != self.dim:
            raise ValueError(f"x.shape[-1] must equal dim ({self.dim}), got {x.shape[-1]}")
        seq = x.shape[1]
        if positions is None:
            offset = check_int("offset", offset)
            # Known from shapes alone, so checked on every device.
            if offset + seq > self.max_positions:
                raise ValueError(
                    f"offset + x.shape[1] must be <= max_positions ({self.max_positions}) (the "
                    f"table has no row past it), got {offset} + {seq} = {offset + seq}"
                )
            return x + self.weight[offset : offset + seq].to(x.dtype)
        check_sequence_positions(
            positions, batch=x.shape[0], seq=seq, device=x.device, offset=offset
        )
        return x + self.embeddings(positions).to(x.dtype)

    def extra_repr(self) -> str:
        return f"max_positions={self.max_positions}, dim={self.dim}"
