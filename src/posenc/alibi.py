r"""ALiBi: attention with linear biases (Press, Smith & Lewis, 2022).

No position is added to the tokens; instead head \(h\) adds \(m_h\,(j - i) = -m_h\,(i - j)\) to
the logit of query \(i\) and key \(j\), a penalty growing linearly with the distance to a
past key. The slopes \(m_h\) form a geometric sequence; for \(n = 2^k\) heads,
\(m_h = 2^{-8h/n}\), \(h = 1, \dots, n\).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ._checks import (
    check_bool,
    check_device,
    check_float_dtype,
    check_floating,
    check_int,
    check_on_device,
)
from .relative import relative_positions


def _power_of_two_slopes(n: int) -> list[float]:
    # m_h = (2^(-8/n))^h = 2^(-8h/n), h = 1..n: start at 2^(-8/n), ratio 2^(-8/n)
    start = 2 ** (-(2 ** -(math.log2(n) - 3)))  # 2^(-8/n), written as in Press et al.'s code
    return [start * start**h for h in range(n)]


def alibi_slope_values(num_heads: int) -> list[float]:
    r"""The ALiBi slopes as Python floats (float64), for any head count as Press et al.'s code does.

    For \(n\) heads with \(p = 2^{\lfloor \log_2 n \rfloor}\): the \(p\) slopes \(2^{-8h/p}\),
    then, if \(n > p\), the first \(n - p\) odd-indexed slopes of \(2p\) heads,
    \(2^{-8(2j-1)/(2p)} = 2^{-4(2j-1)/p}\), \(j = 1, \dots, n - p\). For a power of two this is
    the paper's geometric sequence; the rule for other head counts is the one of the authors'
    reference code (the paper trains only models with \(2^a\) heads), also BLOOM's.

    Args:
        num_heads: Number of heads \(n \ge 1\).

    Returns:
        A list of ``num_heads`` floats in \((0, 1)\).

    Raises:
        TypeError: ``num_heads`` is not an int.
        ValueError: ``num_heads`` < 1.
    """
    check_int("num_heads", num_heads, minimum=1)
    closest_power_of_two = 2 ** math.floor(math.log2(num_heads))
    slopes = _power_of_two_slopes(closest_power_of_two)
    extra = num_heads - closest_power_of_two
    # Interleave in the slopes of twice as many heads: they fall between the ones above.
    return slopes + _power_of_two_slopes(2 * closest_power_of_two)[0::2][:extra]


def alibi_slopes(
    num_heads: int,
    *,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    r"""ALiBi slopes \(m_1, \dots, m_n\) as a tensor (see `alibi_slope_values` for the rule).

    For 8 heads: \(m = 2^{-1}, 2^{-2}, \dots, 2^{-8}\), i.e. \(0.5, 0.25, \dots, 0.00390625\).

    Args:
        num_heads: Number of heads \(n \ge 1\).
        device: Device of the result.
        dtype: Floating dtype of the result.

    Returns:
        A tensor of shape ``(num_heads,)``.

    Raises:
        TypeError: ``num_heads`` is not an int, or ``dtype`` is not floating.
        ValueError: ``num_heads`` < 1.
    """
    dtype = check_float_dtype("dtype", dtype)
    device = check_device("device", device)
    return torch.tensor(alibi_slope_values(num_heads), dtype=dtype, device=device)


def alibi_bias(
    num_heads: int,
    q_len: int,
    k_len: int | None = None,
    *,
    offset: int | None = None,
    causal: bool = True,
    slopes: torch.Tensor | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    r"""The ALiBi bias added to attention logits, from the relative position \(r = j - i\).

    \[
    b_{h,i,j} = m_h\,(j - i) = -m_h\,(i - j) \quad\text{(causal)}, \qquad
    b_{h,i,j} = -m_h\,|j - i| \quad\text{(not causal)}.
    \]

    With ``causal=True`` entries for future keys (\(j > i\)) are positive; the causal mask
    (e.g. in `posenc.attention`) removes them. Because softmax ignores a constant per row, this
    equals BLOOM's \(+m_h\,j\) under a causal mask.

    Args:
        num_heads: Number of heads.
        q_len: Number of queries.
        k_len: Number of keys (default ``offset + q_len``).
        offset: Position of the first query (default ``k_len - q_len``: the queries are the
            last keys, as when decoding with a KV cache).
        causal: Signed distance (decoder) or absolute distance (encoder).
        slopes: Slopes to use, a floating tensor ``(num_heads,)``; default `alibi_slopes`.
        device: Device of the result (default: that of ``slopes``); with ``slopes``, None or
            their device.
        dtype: Floating dtype of the result; computed in float32 first.

    Returns:
        A tensor of shape ``(num_heads, q_len, k_len)``.

    Raises:
        TypeError: An argument of the wrong type (a list as ``slopes``, an integer ``dtype``).
        ValueError: ``num_heads`` < 1, negative lengths, ``q_len > k_len`` without an offset,
            ``slopes`` of the wrong shape or on another ``device``.
    """
    check_int("num_heads", num_heads, minimum=1)
    check_bool("causal", causal)
    dtype = check_float_dtype("dtype", dtype)
    device = check_device("device", device)
    if slopes is None:
        slopes = alibi_slopes(num_heads, device=device)
    else:
        check_floating("slopes", slopes, ndim=1)
        if slopes.shape[0] != num_heads:
            raise ValueError(f"slopes must have shape ({num_heads},), got {tuple(slopes.shape)}")
        if device is not None:
            check_on_device("slopes", slopes, device, "the requested")
    r = relative_positions(q_len, k_len, offset=offset, device=slopes.device).float()  # j - i
    distance = r if causal else -r.abs()
    return (slopes.float()[:, None, None] * distance).to(dtype)  # m_h·(j - i) or -m_h·|j - i|


class ALiBi(nn.Module):
    r"""Holds the slopes \(m_h\) as a buffer and returns the bias \(m_h(j - i)\), or
    \(-m_h\lvert j - i\rvert\) with ``causal=False`` (see `alibi_bias`).

    Pass ``module.slopes`` to `posenc.attention` (``alibi_slopes=``) to avoid building the bias
    at all.

    Attributes:
        slopes: Float32 buffer of the \(m_h\) (not saved in the state dict; computed again in
            float32 after ``.to(torch.bfloat16)`` or ``.half()``, which would round the slopes
            of a head count that is not a power of two, e.g. \(2^{-0.5}\) to 0.70703).

    Args:
        num_heads: Number of heads.
        causal: Signed (decoder) or absolute (encoder) distances.
    """

    def __init__(self, num_heads: int, *, causal: bool = True) -> None:
        super().__init__()
        self.num_heads = check_int("num_heads", num_heads, minimum=1)
        self.causal = check_bool("causal", causal)
        self.register_buffer("slopes", alibi_slopes(num_heads), persistent=False)

    def forward(
        self, q_len: int, k_len: int | None = None, *, offset: int | None = None
    ) -> torch.Tensor:
        """The bias ``(heads, q_len, k_len)`` on the device of ``slopes``, float32."""
        return alibi_bias(
            self.num_heads, q_len, k_len, causal=self.causal, offset=offset, slopes=self.slopes
        )

    def _apply(self, fn, recurse=True):
        super()._apply(fn, recurse)
        if self.slopes.dtype not in (torch.float32, torch.float64):
            # a model-wide .to(bfloat16) casts buffers too: keep the slopes exact (as RoPE does)
            self.slopes = alibi_slopes(self.num_heads, device=self.slopes.device)
        return self

    def extra_repr(self) -> str:
        return f"num_heads={self.num_heads}, causal={self.causal}"
