r"""Sinusoidal absolute position encoding (Vaswani et al., 2017).

Channel pair \(i\) of position \(p\) holds a sine and a cosine of the same angle:

\[
\mathrm{PE}(p)_{2i} = \sin(p\,\omega_i), \qquad
\mathrm{PE}(p)_{2i+1} = \cos(p\,\omega_i), \qquad
\omega_i = \mathrm{base}^{-2i/d}.
\]
"""

from __future__ import annotations

import torch
from torch import nn

from ._checks import (
    check_base,
    check_device,
    check_even,
    check_float_dtype,
    check_floating,
    check_int,
    check_on_device,
    check_positions,
    check_sequence_positions,
)


def _positions_tensor(positions: object, device: torch.device | None) -> torch.Tensor:
    """Turn ``positions`` (an int ``n`` meaning ``0..n-1``, or a tensor) into a tensor."""
    if isinstance(positions, torch.Tensor):
        check_positions("positions", positions)
        if device is not None:
            check_on_device("positions", positions, device, "the requested")
        return positions
    if isinstance(positions, bool) or not isinstance(positions, int):
        raise TypeError(
            "positions must be an int (positions 0 .. n - 1) or an integer torch.Tensor, "
            f"got {type(positions).__name__} {positions!r}"
        )
    check_int("positions", positions)
    return torch.arange(positions, device=device)


def sinusoidal(
    positions: int | torch.Tensor,
    dim: int,
    base: float = 10000.0,
    *,
    device: torch.device | str | None = None,
    dtype: torch.dtype | None = None,
) -> torch.Tensor:
    r"""Sinusoidal position encodings.

    \[
    \mathrm{PE}(p)_{2i} = \sin(p\,\omega_i), \quad
    \mathrm{PE}(p)_{2i+1} = \cos(p\,\omega_i), \quad
    \omega_i = \mathrm{base}^{-2i/d}
    \]

    Angles are computed in float32 whatever ``dtype`` is, then cast.

    Args:
        positions: An int ``n`` (positions \(0, \dots, n-1\)) or an integer tensor of any shape.
        dim: Encoding width \(d\); a positive even int.
        base: The base of the geometric frequency progression; a finite number > 1.
        device: Device of the result when ``positions`` is an int (a tensor keeps its own;
            with a tensor, None or the tensor's device).
        dtype: Floating dtype of the result (default float32).

    Returns:
        A tensor of shape ``(*positions.shape, dim)`` (``(n, dim)`` for an int).

    Raises:
        TypeError: ``positions`` is neither an int nor an integer tensor (float positions and
            lists included), or ``dtype`` is not floating.
        ValueError: ``dim`` is not a positive even int, ``base`` is not a finite number > 1,
            a position is negative, or ``device`` is not the tensor's.
    """
    check_even("dim", dim)
    base = check_base("base", base)
    dtype = check_float_dtype("dtype", dtype, default=torch.float32)
    positions = _positions_tensor(positions, check_device("device", device))
    channel_pair = torch.arange(0, dim, 2, dtype=torch.int64, device=positions.device).float()
    inv_freq = 1.0 / (base ** (channel_pair / dim))  # ω_i = base^(-2i/d)
    angles = positions.float()[..., None] * inv_freq  # p·ω_i, float32 on purpose
    # stack then flatten puts sin at even and cos at odd channels: [sin ω0p, cos ω0p, sin ω1p, ...]
    encoding = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)
    return encoding.to(dtype)


class SinusoidalPositionalEncoding(nn.Module):
    r"""Adds \(\mathrm{PE}(p)\) (see `sinusoidal`) to token embeddings.

    Args:
        dim: Embedding width; a positive even int.
        base: The base of the frequency progression; a finite number > 1.
    """

    def __init__(self, dim: int, base: float = 10000.0) -> None:
        super().__init__()
        self.dim = check_even("dim", dim)
        self.base = check_base("base", base)

    def forward(
        self, x: torch.Tensor, positions: torch.Tensor | None = None, *, offset: int = 0
    ) -> torch.Tensor:
        r"""Return \(x + \mathrm{PE}(p)\).

        Args:
            x: Embeddings of shape ``(batch, seq, dim)``.
            positions: Integer positions ``(seq,)`` or ``(batch, seq)``; default
                ``offset, ..., offset + seq - 1``.
            offset: First position when ``positions`` is None (tokens already in a KV cache);
                0 with ``positions``.

        Returns:
            A tensor shaped and typed like ``x``.

        Raises:
            TypeError: ``x`` is not a floating tensor, or ``positions`` is not an integer tensor.
            ValueError: ``x`` is not 3-D, its last size is not ``dim``, ``positions`` has the
                wrong shape or device, or an ``offset`` comes with ``positions``.
        """
        check_floating("x", x, ndim=3)
        if x.shape[-1] != self.dim:
            raise ValueError(f"x.shape[-1] must equal dim ({self.dim}), got {x.shape[-1]}")
        if positions is None:
            offset = check_int("offset", offset)
            positions = torch.arange(offset, offset + x.shape[1], device=x.device)
        else:
            check_sequence_positions(
                positions, batch=x.shape[0], seq=x.shape[1], device=x.device, offset=offset
            )
        return x + sinusoidal(positions, self.dim, base=self.base, dtype=x.dtype)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, base={self.base}"
