r"""KERPLE: kernelized relative position biases (Chi, Fan, Ramadge & Rudnicky, 2022).

Head \(h\) adds to the logit of query \(i\) and key \(j\) a bias that falls with the distance
\(|i - j|\), through one of two conditionally positive definite kernels with learnable
\(r_1, r_2 > 0\):

\[
b^{\log}_{h,i,j} = -r_{1,h} \log\bigl(1 + r_{2,h}\,|i - j|\bigr), \qquad
b^{\text{power}}_{h,i,j} = -r_{1,h}\,|i - j|^{\,r_{2,h}} \quad (0 < r_{2,h} \le 2).
\]

Both are 0 at distance 0 and never increase with the distance. The power kernel with
\(r_2 = 1\) is ALiBi with slope \(r_1\) on the keys up to the query.

Checked against the authors' release, chijames/KERPLE ``megatron/mpu/layers.py`` (classes
``ParallelKerpleLog`` and ``ParallelKerplePower``, read at commit
``25be3d712e96a3353b374f1f8e36b97d86f97ffa``; the paper's experiments use ``kerple_log`` and
``kerple_power_ap_``, per ``generate_ymls.py``):

- Parameters, one per head: log kernel ``bias_p`` \(= r_1\), initialised \(2\,U[0, 1)\),
  and ``bias_a`` \(= r_2\), \(U[0, 1)\), drawn in that order; power kernel ``bias_a``
  \(= r_1\), \(U[0, 1)\), and ``bias_p`` \(= r_2\), \(2\,U[0, 1)\), drawn ``bias_p`` first.
  `Kerple` draws them the same way, so one seed gives the released initial values.
- Before each use the stored values are clamped, in place, to at least \(\varepsilon = 0.01\)
  (and \(r_2 \le 2\) for the power kernel): a projection after each optimiser step, not a
  clamp inside the graph, so a parameter pushed below \(\varepsilon\) restarts from
  \(\varepsilon\) with a gradient.
- The distance is \(\max(i - j, 0)\): keys after the query get distance 0 (the causal mask
  removes them); ``causal=False`` here uses \(|i - j|\) instead.
- With a KV cache the released code supports one query, the last row; here any
  ``q_len``/``k_len``/``offset`` follows the package rule.
"""

from __future__ import annotations

import torch
from torch import nn

from ._checks import (
    check_bool,
    check_choice,
    check_floating,
    check_int,
    check_on_device,
    values_checkable,
)
from .relative import relative_positions

KERNELS = ("log", "power")
EPS = 1e-2  # the released lower bound of every parameter


def kerple_bias(
    q_len: int,
    k_len: int | None = None,
    *,
    r1: torch.Tensor,
    r2: torch.Tensor,
    kernel: str = "log",
    offset: int | None = None,
    causal: bool = True,
) -> torch.Tensor:
    r"""The KERPLE bias for queries ``offset .. offset + q_len - 1`` and keys ``0 .. k_len - 1``.

    \(b_{h,i,j} = -r_{1,h}\log(1 + r_{2,h}\,d_{ij})\) (``"log"``) or
    \(-r_{1,h}\,d_{ij}^{\,r_{2,h}}\) (``"power"``), with \(d_{ij} = \max(i - j, 0)\) when
    causal (the released code's) and \(|i - j|\) when not. The parameters are used as given
    (`Kerple` keeps them in range).

    Args:
        q_len: Number of queries.
        k_len: Number of keys (default ``offset + q_len``).
        r1: \(r_1 > 0\), a floating tensor ``(heads,)``.
        r2: \(r_2 > 0\) (at most 2 for ``"power"``), same shape, dtype and device as ``r1``.
        kernel: ``"log"`` or ``"power"``.
        offset: Position of the first query (default ``k_len - q_len``: the queries are the
            last keys).
        causal: Distance \(\max(i - j, 0)\) (decoder) or \(|i - j|\).

    Returns:
        A ``(heads, q_len, k_len)`` tensor in the dtype and on the device of ``r1``.

    Raises:
        TypeError: ``r1`` or ``r2`` not a floating tensor, ``causal`` not a bool.
        ValueError: An unknown ``kernel``; ``r1``/``r2`` not 1-D, of different shapes, dtypes
            or devices, or (checked on CPU) out of range; negative lengths, ``q_len > k_len``
            without an offset.
    """
    check_choice("kernel", kernel, KERNELS)
    check_bool("causal", causal)
    check_floating("r1", r1, ndim=1)
    check_floating("r2", r2, ndim=1)
    if r2.shape != r1.shape or r2.dtype != r1.dtype:
        raise ValueError(
            f"r2 must have r1's shape {tuple(r1.shape)} and dtype {r1.dtype}, got shape "
            f"{tuple(r2.shape)} and dtype {r2.dtype}"
        )
    check_on_device("r2", r2, r1.device, "r1's")
    _check_range(r1, r2, kernel)
    r = relative_positions(q_len, k_len, offset=offset, device=r1.device)  # j - i
    distance = (-r).clamp(min=0) if causal else r.abs()
    distance = distance.to(r1.dtype)  # as the released code: in the parameters' dtype
    r1, r2 = r1[:, None, None], r2[:, None, None]
    if kernel == "log":
        return -r1 * torch.log(1 + r2 * distance)  # -r1·log(1 + r2·d)
    return -(distance.pow(r2) * r1)  # -r1·d^r2, in the released order of operations


def _check_range(r1: torch.Tensor, r2: torch.Tensor, kernel: str) -> None:
    # Reading the values needs them on the host: only where that is free (see _checks).
    if not (values_checkable(r1) and r1.numel()):
        return
    for name, value in (("r1", r1), ("r2", r2)):
        if not bool((value > 0).all()):
            raise ValueError(f"{name} must be > 0, got a minimum of {float(value.min())}")
    if kernel == "power" and not bool((r2 <= 2).all()):
        raise ValueError(
            f"r2 must be <= 2 for the power kernel (conditionally positive definite), got a "
            f"maximum of {float(r2.max())}"
        )


class Kerple(nn.Module):
    r"""KERPLE's learnable per-head bias (see `kerple_bias`), initialised and kept in range as
    the released code does.

    ``forward`` first clamps the stored parameters in place (\(r \ge 0.01\), and
    \(r_2 \le 2\) for ``"power"``), through ``.data`` as the released code does: the clamp
    is not part of the graph, so a module shared by several layers can be called again
    before ``backward``.

    Args:
        num_heads: Number of heads.
        kernel: ``"log"`` (``kerple_log``) or ``"power"`` (``kerple_power_ap_``).
        causal: Distance \(\max(i - j, 0)\) (the released code's) or \(|i - j|\).

    Attributes:
        r1: Parameter ``(num_heads,)``: ``bias_p`` of ``ParallelKerpleLog``, ``bias_a`` of
            ``ParallelKerplePower`` (there shaped ``(heads, 1, 1)``).
        r2: Parameter ``(num_heads,)``: ``bias_a`` of ``ParallelKerpleLog``, ``bias_p`` of
            ``ParallelKerplePower``.
    """

    def __init__(self, num_heads: int, *, kernel: str = "log", causal: bool = True) -> None:
        super().__init__()
        self.num_heads = check_int("num_heads", num_heads, minimum=1)
        self.kernel = check_choice("kernel", kernel, KERNELS)
        self.causal = check_bool("causal", causal)
        # The released draws, in the released order: bias_p first, then bias_a.
        if kernel == "log":
            r1 = torch.rand(num_heads) * 2  # bias_p
            r2 = torch.rand(num_heads)  # bias_a
        else:
            r2 = torch.rand(num_heads) * 2  # bias_p
            r1 = torch.rand(num_heads)  # bias_a
        self.r1, self.r2 = nn.Parameter(r1), nn.Parameter(r2)

    def project_(self) -> None:
        r"""Clamp the parameters into range in place: \(r \ge 0.01\), and \(r_2 \le 2\) for
        ``"power"`` (what the released ``forward`` and ``stats`` do before each use)."""
        self.r1.data.clamp_(min=EPS)
        self.r2.data.clamp_(min=EPS, max=2 if self.kernel == "power" else None)

    def forward(
        self, q_len: int, k_len: int | None = None, *, offset: int | None = None
    ) -> torch.Tensor:
        """The bias ``(num_heads, q_len, k_len)``, after `project_`; see `kerple_bias`."""
        self.project_()
        return kerple_bias(
            q_len,
            k_len,
            r1=self.r1,
            r2=self.r2,
            kernel=self.kernel,
            offset=offset,
            causal=self.causal,
        )

    def extra_repr(self) -> str:
        return f"num_heads={self.num_heads}, kernel={self.kernel!r}, causal={self.causal}"
