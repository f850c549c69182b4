r"""xPos: RoPE with an exponential decay per pair (Sun et al., 2022, "A Length-Extrapolatable
Transformer").

Pair \(i\) of a query at position \(m\) is rotated by \(m\theta_i\) as in RoPE and multiplied by
\(\zeta_i^{\,n_m/B}\); pair \(i\) of a key at position \(m\) is rotated the same way and divided
by that factor. With \(\hat\zeta_i = (2i/d + \gamma)/(1 + \gamma)\) (\(d\) the head dimension;
\(\gamma = 0.4\) and \(B = 512\) in the released code), the score of query \(m\) and key
\(m'\) is, pair by pair,

\[
\langle \hat\zeta_i^{\,n_m/B} R_{m\theta_i} q,\; \hat\zeta_i^{-n_{m'}/B} R_{m'\theta_i} k \rangle
= \hat\zeta_i^{\,(m - m')/B}\, \langle R_{m\theta_i} q, R_{m'\theta_i} k \rangle,
\]

a function of \(m - m'\) only: a key \(m - m'\) tokens back is damped by
\(\hat\zeta_i^{(m-m')/B} \le 1\), most in the low pairs (small \(\hat\zeta_i\)), which rotate
fastest. The exponent \(n_m = m - c\) is the position minus a centre \(c\); the centre cancels
in every score, and the released code takes \(c = \lceil L/2 \rceil\) for \(L\) keys so that
the factors stay close to 1 on both sides (far from the centre they grow or shrink
exponentially, \(\hat\zeta_0^{-L/(2B)} = 3.5^{L/1024}\) for \(\gamma = 0.4\)).

Checked against the authors' release, microsoft/torchscale
``torchscale/component/xpos_relative_position.py`` (class ``XPOS``, read at commit
``4d1e0e82e5adf86dd424f1463192635b73fc8efc``): same \(\hat\zeta_i\)
(``(arange(0, d, 2) + 0.4 d) / (1.4 d)``), same frequencies \(10000^{-2i/d}\), angles from
the unshifted positions \(0 .. L-1\) and decay exponents from the centred ones, keys divided
(``downscale=True``), and the interleaved layout (``duplicate_interleave``,
``rotate_every_two``), which is therefore this module's default; the half layout is offered
because only the channel order differs. The released attention layer encodes the keys anew at
every decoding step (the centre moves with the number of keys), and so does `XPos`.

Shapes: ``(batch, heads, seq, head_dim)``.
"""

from __future__ import annotations

import torch
from torch import nn

from ._checks import (
    check_base,
    check_bool,
    check_choice,
    check_device,
    check_even,
    check_float_dtype,
    check_floating,
    check_int,
    check_on_device,
    check_positions,
    check_positive,
    check_qk,
    same_device,
)
from .rope import LAYOUTS, apply_rotary
from .rope_scaling import default_inv_freq

GAMMA = 0.4  # hard-coded in the released code as 0.4 and 1.4 = 1 + 0.4
SCALE_BASE = 512.0  # the released code's scale_base


def xpos_zeta(
    head_dim: int, *, gamma: float = GAMMA, device: torch.device | str | None = None
) -> torch.Tensor:
    r"""The decay bases \(\hat\zeta_i = (2i/d + \gamma)/(1 + \gamma)\), \(i = 0 .. d/2 - 1\).

    They rise from \(\gamma/(1+\gamma)\) (\(0.2857\) for \(\gamma = 0.4\)) towards 1, one per
    rotated pair. Computed as the released code does,
    \((2i + \gamma d)/((1 + \gamma) d)\) in float32.

    Args:
        head_dim: Rotated channels \(d\); a positive even int.
        gamma: \(\gamma > 0\) (the released code's 0.4).
        device: Device of the result.

    Returns:
        A float32 tensor ``(head_dim // 2,)`` with entries in \((0, 1)\).

    Raises:
        TypeError: ``head_dim`` is not an int, or ``gamma`` not a number.
        ValueError: ``head_dim`` not positive and even, or ``gamma`` not a finite number > 0.
    """
    check_even("head_dim", head_dim)
    gamma = check_positive("gamma", gamma)
    device = check_device("device", device)
    # (arange(0, d, 2) + 0.4 d) / (1.4 d): the released formula, with gamma in place of 0.4
    return (torch.arange(0, head_dim, 2, device=device) + gamma * head_dim) / (
        (1 + gamma) * head_dim
    )


def xpos_cos_sin(
    positions: torch.Tensor,
    inv_freq: torch.Tensor,
    *,
    center: int = 0,
    scale_base: float = SCALE_BASE,
    gamma: float = GAMMA,
    downscale: bool = False,
    layout: str = "interleaved",
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""RoPE tables times the xPos factor: \(s\cos(m\theta_i)\), \(s\sin(m\theta_i)\).

    \(s = \hat\zeta_i^{(m - c)/B}\) for queries and \(s = \hat\zeta_i^{-(m - c)/B}\) (its
    reciprocal, ``downscale=True``) for keys. Rotate with `posenc.apply_rotary` in the same
    ``layout``: ``apply_rotary(q, *xpos_cos_sin(pos_q, inv_freq, center=c), layout=...)``.
    Queries and keys must use the same centre \(c\); scores do not depend on it.

    Args:
        positions: Integer tensor of positions \(m\), any shape.
        inv_freq: Frequencies \(\theta_i\), a floating tensor ``(head_dim // 2,)`` on the
            device of ``positions`` (the released code: `posenc.default_inv_freq`).
        center: The centre \(c\) subtracted from every position in the decay exponent (the
            released code: \(\lceil L/2 \rceil\) for \(L\) keys).
        scale_base: \(B > 0\) (the released code's 512).
        gamma: \(\gamma > 0\) of `xpos_zeta` (the released code's 0.4).
        downscale: ``False`` for queries (factor \(\hat\zeta_i^{n/B}\)), ``True`` for keys
            (its reciprocal).
        layout: ``"interleaved"`` (the released code's) or ``"half"``.
        dtype: Floating dtype of the returned tables; computed in float32 first.

    Returns:
        ``(cos, sin)``, each ``(*positions.shape, head_dim)``.

    Raises:
        TypeError: Non-integer ``positions``, non-floating ``inv_freq`` or ``dtype``, a
            ``downscale`` that is not a bool.
        ValueError: Negative positions (checked on CPU), ``inv_freq`` not 1-D or on another
            device, an unknown ``layout``, a negative ``center``, ``scale_base`` or ``gamma``
            not a finite number > 0.
    """
    check_positions("positions", positions)
    check_floating("inv_freq", inv_freq, ndim=1)
    check_on_device("inv_freq", inv_freq, positions.device, "positions'")
    center = check_int("center", center)
    scale_base = check_positive("scale_base", scale_base)
    check_bool("downscale", downscale)
    check_choice("layout", layout, LAYOUTS)
    dtype = check_float_dtype("dtype", dtype)
    zeta = xpos_zeta(2 * inv_freq.shape[0], gamma=gamma, device=positions.device)
    angles = positions.float()[..., None] * inv_freq.float()  # m·θ_i from the unshifted m
    exponent = (positions - center).float()[..., None] / scale_base  # (m - c)/B
    scale = zeta**exponent
    if downscale:
        scale = 1 / scale  # as the released code: the reciprocal, not a negated exponent
    cos, sin = angles.cos() * scale, angles.sin() * scale
    if layout == "half":
        cos, sin = torch.cat((cos, cos), dim=-1), torch.cat((sin, sin), dim=-1)
    else:
        cos, sin = cos.repeat_interleave(2, dim=-1), sin.repeat_interleave(2, dim=-1)
    return cos.to(dtype), sin.to(dtype)


def xpos_center(k_len: int) -> int:
    r"""The released code's centre for ``k_len`` keys, \(c = \lceil L/2 \rceil\).

    Its decay exponents run over ``range(min_pos, min_pos + L)`` with
    ``min_pos = -L // 2``, which Python reads as \(\lfloor -L/2 \rfloor = -\lceil L/2 \rceil\):
    position \(m\) gets \(m - \lceil L/2 \rceil\).

    Args:
        k_len: Number of keys \(L \ge 0\).

    Returns:
        \(\lceil L/2 \rceil\) as an int.

    Raises:
        TypeError: ``k_len`` is not an int.
        ValueError: ``k_len`` < 0.
    """
    return (check_int("k_len", k_len) + 1) // 2


class XPos(nn.Module):
    r"""xPos for queries and keys: RoPE, then queries times \(\hat\zeta_i^{n/B}\) and keys
    divided by it (see the module docstring).

    Queries are the last ``q_len`` of the ``k_len`` keys (decoding with a KV cache passes
    one query and every key so far); both use the centre \(\lceil k\_len/2 \rceil\), as the
    released ``XPOS`` does when called with ``offset = k_len - q_len`` for the queries.

    Args:
        head_dim: Channels per head; even, all of them rotated.
        base: Frequency base (the released code's 10000).
        scale_base: \(B\) (512).
        gamma: \(\gamma\) (0.4).
        layout: ``"interleaved"`` (the released code's) or ``"half"``.

    Attributes:
        inv_freq: Float32 buffer of \(\theta_i\) (not saved in the state dict; computed again
            in float32 after ``.to(torch.bfloat16)`` or ``.half()``).
    """

    def __init__(
        self,
        head_dim: int,
        base: float = 10000.0,
        *,
        scale_base: float = SCALE_BASE,
        gamma: float = GAMMA,
        layout: str = "interleaved",
    ) -> None:
        super().__init__()
        self.head_dim = check_even("head_dim", head_dim)
        self.base = check_base("base", base)
        self.scale_base = check_positive("scale_base", scale_base)
        self.gamma = check_positive("gamma", gamma)
        self.layout = check_choice("layout", layout, LAYOUTS)
        self.register_buffer("inv_freq", default_inv_freq(head_dim, base), persistent=False)

    def _apply(self, fn, recurse=True):
        super()._apply(fn, recurse)
        if self.inv_freq.dtype not in (torch.float32, torch.float64):
            # A model-wide .to(bfloat16) casts buffers too: keep θ_i in float32 (as RoPE does).
            self.inv_freq = default_inv_freq(self.head_dim, self.base, device=self.inv_freq.device)
        return self

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        r"""Encode queries at ``k_len - q_len .. k_len - 1`` and keys at ``0 .. k_len - 1``.

        Args:
            q: Queries ``(batch, heads, q_len, head_dim)``, floating point.
            k: Keys ``(batch, kv_heads, k_len, head_dim)`` with ``q_len <= k_len``;
                ``kv_heads`` divides ``heads``.

        Returns:
            ``(q_encoded, k_encoded)``, same shapes and dtypes as ``q`` and ``k``.

        Raises:
            TypeError: Non-floating ``q`` or ``k``.
            ValueError: Wrong ranks, a last dimension other than ``head_dim``, another batch
                size, ``q_len > k_len``, heads that do not divide, another device.
        """
        self._check_qk(q, k)
        q_len, k_len = q.shape[2], k.shape[2]
        center = xpos_center(k_len)
        inv_freq = self.inv_freq
        if not same_device(inv_freq.device, q.device):
            # computed where it is used rather than copied: no transfer inside forward
            inv_freq = default_inv_freq(self.head_dim, self.base, device=q.device)
        keys = torch.arange(k_len, device=q.device)
        options = {"center": center, "scale_base": self.scale_base, "gamma": self.gamma}
        cos_k, sin_k = xpos_cos_sin(keys, inv_freq, downscale=True, layout=self.layout, **options)
        cos_q, sin_q = xpos_cos_sin(keys[k_len - q_len :], inv_freq, layout=self.layout, **options)
        # eager: the path the tests compare with the released code, on every device
        return (
            apply_rotary(q, cos_q, sin_q, layout=self.layout, kernel="eager"),
            apply_rotary(k, cos_k, sin_k, layout=self.layout, kernel="eager"),
        )

    def _check_qk(self, q: torch.Tensor, k: torch.Tensor) -> None:
        check_qk(q, k, self.head_dim)
        if q.shape[2] > k.shape[2]:
            raise ValueError(
                f"q_len must be <= k_len ({k.shape[2]}) (the queries are the last q_len keys), "
                f"got {q.shape[2]}"
            )

    def extra_repr(self) -> str:
        return (
            f"head_dim={self.head_dim}, base={self.base}, scale_base={self.scale_base}, "
            f"gamma={self.gamma}, layout={self.layout!r}"
        )
